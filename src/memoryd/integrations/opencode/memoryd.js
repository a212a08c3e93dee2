// memoryd for OpenCode: memoryd's block (iron rules, outline, best hits) on every prompt, and
// the layered memory tree's write guard on every edit.
//
// Copy this file to ~/.config/opencode/plugins/ (every project) or a project's
// .opencode/plugins/, and add the MCP server from opencode.json beside it to your config.
// memoryd must be on OpenCode's PATH (or set MEMORYD_BIN to its absolute path).
//
// Prompts and paths are data, never options: a prompt goes on stdin inside a JSON event,
// a path after "--" as one argument (Bun's $ never hands an interpolated value to a shell
// parser), so a prompt "-h" is a query, not a request for help. memoryd failing never
// blocks OpenCode: no block is injected and the edit goes ahead; only a refusal of the guard
// (exit 3) stops a write.

import { existsSync } from "node:fs"
import { isAbsolute, join } from "node:path"

// the tools that write a file (a read of any path is none of the guard's business)
const WRITE_TOOLS = new Set(["write", "edit", "multiedit"])
// the tools that write the files a patch names (OpenCode offers GPT models apply_patch
// instead of write and edit): every file it adds, updates, deletes or moves to
const PATCH_TOOLS = new Set(["apply_patch", "patch"])
const PATCH_FILE = /^\*\*\* (?:(?:Add|Update|Delete) File|Move to): (.+)$/gm

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

/** @type {import("@opencode-ai/plugin").Plugin} */
export const Memoryd = async ({ $, directory }) => {
  const memoryd = process.env.MEMORYD_BIN || "memoryd"
  // user message -> block: the transform runs before every model call of a turn and sees the
  // whole history each time (so a compaction never loses the rules: the next call adds them
  // again). Keyed by the message, not its text: a later "continue" in this long-lived process
  // gets the memory as it is then, not the block of an earlier "continue".
  const blocks = new Map()
  const given = new Map() // user message -> its text with the block added
  const KEPT = 64 // the blocks of the last messages (one per concurrent session is enough)

  // memoryd runs in the session's folder, or in / once that is gone (a linked worktree
  // removed under the session): no command starts in a folder that does not exist, and Bun's
  // $ throws then, which failed every later edit. memoryd is told the folder (the event's
  // cwd, a guarded path made absolute) and finds its project from it.
  const where = () => (existsSync(directory) ? directory : "/")
  const run = (args) => $`${memoryd} ${args}`.cwd(where()).nothrow().quiet()

  // the prompt goes on stdin, as a hook event: the kernel refuses an argument over 128 KiB
  // (E2BIG), and a prompt with a pasted log is that long
  const context = (prompt) => {
    const event = new Response(JSON.stringify({ prompt, cwd: directory }))
    return $`${memoryd} context --hook < ${event}`.cwd(where()).nothrow().quiet()
  }

  // memoryd could not be run at all: said in OpenCode's log, never thrown at the session
  const safely = (what, start) =>
    Promise.resolve()
      .then(start)
      .catch((error) => {
        console.error(`memoryd ${what} failed: ${error?.message ?? error}`)
        return { exitCode: -1, stdout: "", stderr: "" }
      })

  async function block(message, prompt) {
    const key = `${message}\0${prompt}`
    if (!blocks.has(key)) {
      const done = await safely("context", () => context(prompt))
      const said = done.stderr.toString().trim()
      if (done.exitCode !== 0) console.error(`memoryd context failed: ${said}`)
      else if (said) console.error(said) // --hook injected nothing, and says why
      blocks.set(key, done.exitCode === 0 ? done.stdout.toString().trim() : "")
      if (blocks.size > KEPT) blocks.delete(blocks.keys().next().value)
    }
    return blocks.get(key)
  }

  return {
    "experimental.chat.messages.transform": async (_input, output) => {
      const user = [...output.messages].reverse().find((m) => m.info?.role === "user")
      const part = user?.parts?.findLast((p) => p.type === "text" && !p.synthetic)
      const message = user?.info?.id ?? ""
      // a part that comes back as this plugin left it has its block (a prompt that merely
      // quotes a <memory> block is still a prompt and gets one)
      if (!part || given.get(message) === part.text) return
      const text = await block(message, part.text)
      if (!text) return
      part.text = `${part.text}\n\n${text}`
      given.set(message, part.text)
      if (given.size > KEPT) given.delete(given.keys().next().value)
    },

    "tool.execute.before": async (input, output) => {
      for (const path of written(input.tool, output.args)) {
        const target = isAbsolute(path) ? path : join(directory, path)
        const done = await safely("guard", () => run(["guard", "--", target]))
        if (done.exitCode === 3) {
          throw new Error(done.stderr.toString().replace(/^memoryd: error: /, "").trim())
        }
        if (done.exitCode !== 0) console.error(`memoryd guard failed: ${done.stderr.toString().trim()}`)
      }
    },
  }
}
