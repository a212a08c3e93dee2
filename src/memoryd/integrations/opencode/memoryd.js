// memoryd for OpenCode: memoryd's block (iron rules, outline, best hits) with every prompt, and
// the layered memory tree's write guard on every edit. One file for both plugin APIs:
//   OpenCode 1.x reads the default export's `server` (the V1 plugin function, its hooks object);
//   OpenCode 2 reads its `id` and `setup(ctx)`, which registers the same two hooks on the context.
//
// Copy this file to ~/.config/opencode/plugins/ (every project) or a project's
// .opencode/plugins/, and add the MCP server from opencode.json beside it to your config.
// memoryd is found as the Claude Code plugin finds it: the plugin's `memoryd` option
// (["./memoryd.js", {"memoryd": "/abs/path"}] in V1's `plugin`, {"package": ..., "options": ...}
// in V2's `plugins`), $MEMORYD_BIN, ~/.local/bin/memoryd, then PATH.
//
// Prompts and paths are data, never options: a prompt goes on stdin inside a JSON event, a
// path after "--" as one argument (no shell parses either), so a prompt "-h" is a query, not a
// request for help. memoryd failing never blocks OpenCode: no block is injected and the edit
// goes ahead; only a refusal of the guard (exit 3) stops a write. What went wrong goes to
// OpenCode's log (V1: client.app.log; V2, whose plugins have no log call: a line in
// OpenCode's log folder, memoryd.log), never to the terminal, where the TUI paints over it.

import { spawn } from "node:child_process"
import { accessSync, appendFileSync, constants, existsSync, mkdirSync } from "node:fs"
import { homedir } from "node:os"
import { isAbsolute, join } from "node:path"

// the tools that write a file (a read of any path is none of the guard's business)
const WRITE_TOOLS = new Set(["write", "edit", "multiedit"])
// the tools that write the files a patch names (OpenCode offers GPT models apply_patch
// instead of write and edit): every file it adds, updates, deletes or moves to
const PATCH_TOOLS = new Set(["apply_patch", "patch"])
const PATCH_FILE = /^\*\*\* (?:(?:Add|Update|Delete) File|Move to): (.+)$/gm
const KEPT = 64 // blocks of the last prompts kept (one per concurrent session is enough)

function written(tool, args) {
  if (PATCH_TOOLS.has(tool)) {
    const patch = args?.patchText ?? args?.patch
    if (typeof patch !== "string") return []
    return [...patch.matchAll(PATCH_FILE)].map((m) => m[1].trim()).filter(Boolean)
  }
  if (!WRITE_TOOLS.has(tool)) return []
  const path = args?.filePath ?? args?.file_path
  return typeof path === "string" && path ? [path] : []
}

function executable(path) {
  try {
    accessSync(path, constants.X_OK)
    return true
  } catch {
    return false
  }
}

/** The memoryd to run: the plugin's option, $MEMORYD_BIN, ~/.local/bin/memoryd, PATH. */
function memorydPath(options) {
  const configured = options?.memoryd || process.env.MEMORYD_BIN
  if (configured) return configured
  const local = join(homedir(), ".local", "bin", "memoryd")
  return executable(local) ? local : "memoryd"
}

/** Run memoryd (no shell): its exit code and output; -1 when it could not be started. */
function run(memoryd, args, cwd, input) {
  return new Promise((resolve) => {
    let child
    try {
      child = spawn(memoryd, args, { cwd, stdio: ["pipe", "pipe", "pipe"] })
    } catch (error) {
      resolve({ exitCode: -1, stdout: "", stderr: String(error?.message ?? error) })
      return
    }
    const out = [], err = []
    child.stdout.on("data", (chunk) => out.push(chunk))
    child.stderr.on("data", (chunk) => err.push(chunk))
    child.on("error", (error) => resolve({ exitCode: -1, stdout: "", stderr: error.message }))
    child.on("close", (code) =>
      resolve({
        exitCode: code ?? -1,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
      }),
    )
    child.stdin.on("error", () => {}) // memoryd gone before it read the event: said by close
    child.stdin.end(input ?? "")
  })
}

/** The two hooks' work, whichever API calls them. */
function memorydHooks({ directory, options, log }) {
  const memoryd = memorydPath(options)
  // memoryd runs in the session's folder, or in / once that is gone (a linked worktree
  // removed under the session): no command starts in a folder that does not exist. memoryd
  // is told the folder (the event's cwd, a guarded path made absolute) and finds its project.
  const where = () => (existsSync(directory) ? directory : "/")
  const failed = (what, done) => {
    const said = done.stderr.trim()
    if (done.exitCode === -1) log("error", `memoryd ${what} could not run ${memoryd}: ${said}`)
    else log("warn", `memoryd ${what} failed: ${said}`)
  }
  const blocks = new Map() // prompt key -> its block

  return {
    // the block for one prompt (the same for every model call of its turn): the prompt goes on
    // stdin as a hook event, since the kernel refuses an argument over 128 KiB (E2BIG)
    async block(key, prompt) {
      if (!blocks.has(key)) {
        const event = JSON.stringify({ prompt, cwd: directory })
        const done = await run(memoryd, ["context", "--hook"], where(), event)
        const said = done.stderr.trim()
        if (done.exitCode !== 0) failed("context", done)
        else if (said) log("warn", said) // --hook injected nothing, and says why
        blocks.set(key, done.exitCode === 0 ? done.stdout.trim() : "")
        if (blocks.size > KEPT) blocks.delete(blocks.keys().next().value)
      }
      return blocks.get(key)
    },
    // every file a tool call would write, checked; a refusal is thrown at the tool call
    async guard(tool, args) {
      for (const path of written(tool, args)) {
        const target = isAbsolute(path) ? path : join(directory, path)
        const done = await run(memoryd, ["guard", "--", target], where())
        if (done.exitCode === 3) {
          throw new Error(done.stderr.replace(/^memoryd: error: /, "").trim())
        }
        if (done.exitCode !== 0) failed("guard", done)
      }
    },
  }
}

/** OpenCode 1.x: the plugin function and its hooks object. */
async function server({ client, directory }, options) {
  const log = (level, message) =>
    Promise.resolve()
      .then(() => client?.app?.log?.({ body: { service: "memoryd", level, message } }))
      .catch(() => {}) // no log to write to: nothing else to tell
  const hooks = memorydHooks({ directory, options, log })
  const given = new Map() // user message -> its text with the block added

  return {
    // runs before every model call of a turn on a copy of the whole history (so a compaction
    // never loses the rules: the next call adds them again). Keyed by the message, not its
    // text: a later "continue" gets the memory as it is then, not an earlier block.
    "experimental.chat.messages.transform": async (_input, output) => {
      const user = [...output.messages].reverse().find((m) => m.info?.role === "user")
      const part = user?.parts?.findLast((p) => p.type === "text" && !p.synthetic)
      const message = user?.info?.id ?? ""
      // a part that comes back as this plugin left it has its block (a prompt that merely
      // quotes a <memory> block is still a prompt and gets one)
      if (!part || given.get(message) === part.text) return
      const text = await hooks.block(`${message}\0${part.text}`, part.text)
      if (!text) return
      part.text = `${part.text}\n\n${text}`
      given.set(message, part.text)
      if (given.size > KEPT) given.delete(given.keys().next().value)
    },
    "tool.execute.before": async (input, output) => hooks.guard(input.tool, output.args),
  }
}

/** OpenCode 2: the same hooks registered on the context. The block goes into the request's
 * system parts (kept out of the history), once per request. */
async function setup(ctx) {
  const directory = ctx.location?.directory ?? process.cwd()
  const folder = join(process.env.XDG_DATA_HOME || join(homedir(), ".local", "share"), "opencode", "log")
  const log = (level, message) => {
    try {
      mkdirSync(folder, { recursive: true })
      appendFileSync(join(folder, "memoryd.log"), `${new Date().toISOString()} ${level} ${message}\n`)
    } catch {} // no log folder to write to: nothing else to tell
  }
  const hooks = memorydHooks({ directory, options: ctx.options, log })
  const prompts = new Map() // session -> [prompt number, text] of its latest prompt

  await ctx.session.hook("prompt", (event) => {
    const text = event.prompt?.text
    if (typeof text !== "string" || !text) return
    const [count] = prompts.get(event.sessionID) ?? [0]
    prompts.set(event.sessionID, [count + 1, text])
    if (prompts.size > KEPT) prompts.delete(prompts.keys().next().value)
  })
  await ctx.session.hook("context", async (event) => {
    const latest = prompts.get(event.sessionID)
    if (!latest) return
    const text = await hooks.block(`${event.sessionID}\0${latest[0]}`, latest[1])
    if (text) event.system.push({ type: "text", text })
  })
  await ctx.tool.hook("execute.before", async (event) => hooks.guard(event.tool, event.input))
}

export default { id: "memoryd", setup, server }
