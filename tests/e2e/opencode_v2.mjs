// OpenCode 2's side of integrations/opencode/memoryd.js, for tests/e2e/test_opencode_v2.py:
// OpenCode 2 is not on the npm registry, so this loads the plugin as its docs say OpenCode 2
// does (the default export's id and setup(ctx)), with a context that keeps what setup
// registers, then drives those hooks as OpenCode 2 calls them for one session: a prompt, two
// model requests of its turn, a request of a session without a prompt, two edits. It prints
// what the plugin did as JSON; anything the plugin said on the console is part of it.
import { pathToFileURL } from "node:url"

const [pluginPath, directory, refused, allowed] = process.argv.slice(2)
const said = []
for (const level of ["log", "info", "warn", "error", "debug"]) {
  console[level] = (...args) => said.push(`${level}: ${args.join(" ")}`)
}
const module = await import(pathToFileURL(pluginPath).href)
const plugin = module.default
const hooks = {}
const context = {
  options: {},
  location: { directory },
  session: { hook: async (name, fn) => void (hooks[`session.${name}`] = fn) },
  tool: { hook: async (name, fn) => void (hooks[`tool.${name}`] = fn) },
}
await plugin.setup(context)
const out = {
  exports: Object.keys(module), id: plugin.id, v1: typeof plugin.server,
  registered: Object.keys(hooks).sort(),
}
await hooks["session.prompt"]({ sessionID: "s1", prompt: { text: "Why does FTS5 miss short Chinese words?" } })
const requests = []
for (const sessionID of ["s1", "s1", "s2"]) {
  const request = { sessionID, kind: "primary", system: [], messages: [] }
  await hooks["session.context"](request)
  requests.push(request.system)
}
out.requests = requests
for (const [name, filePath] of [["refused", refused], ["allowed", allowed]]) {
  try {
    await hooks["tool.execute.before"]({ sessionID: "s1", tool: "write", input: { filePath } })
    out[name] = "allowed"
  } catch (error) {
    out[name] = `refused: ${error.message}`
  }
}
out.console = said
process.stdout.write(JSON.stringify(out))
