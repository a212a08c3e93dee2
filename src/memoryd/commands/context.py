"""``memoryd context``: the block an agent harness injects into each prompt.

``--hook`` reads a Claude Code hook event (``UserPromptSubmit``, ``SessionStart``) on
stdin; with the event's session id, a prompt gets only what its session was not given
yet (:mod:`memoryd.agent.injected`), and ``--stats`` shows what each hook injected.
It never blocks the prompt: a malformed event, an invalid config.yaml or any
other memoryd failure injects nothing, says why on stderr and exits 0 (for
``UserPromptSubmit`` exit 2 would throw the user's prompt away; an unexpected error, a
bug or the machine's state, is told the same way). With ``--json`` it
prints the host's structured form, ``hookSpecificOutput.additionalContext``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memoryd.app import App
from memoryd.commands import add_json

if TYPE_CHECKING:
    from memoryd.errors import ConfigError
    from memoryd.injection import Block

HOOK_HINT = "configure 'memoryd context --rebuild --hook' as a SessionStart hook (matcher compact)"
HOOK_EVENT = "--hook expects the hook's JSON event on stdin"
HOOK_EVENT_HINT = "configure the command as a UserPromptSubmit or SessionStart hook, or drop --hook"


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser(
        "context",
        help="print the memory block for a prompt (iron rules, outline, best hits)",
    )
    parser.add_argument("query", nargs="*", metavar="QUERY", help="the prompt or task")
    parser.add_argument("--max-chars", type=int, metavar="N", help="body text budget")
    parser.add_argument("--max-entries", type=int, metavar="N", help="at most N memory bodies")
    parser.add_argument(
        "--hook",
        action="store_true",
        help="read a Claude Code hook event (JSON with prompt and cwd) from stdin; never fails "
        "the prompt (--json: answer with hookSpecificOutput.additionalContext)",
    )
    parser.add_argument(
        "--rebuild",
        action="store_true",
        help="print what a rebuilt context needs from the layered tree: the session's "
        "checkpoint and notes, the project's and the global MEMORY.md, the key index",
    )
    parser.add_argument(
        "--session", metavar="SID", help="with --rebuild: the session (--hook: the event's)"
    )
    parser.add_argument(
        "--project-id", metavar="PID", help="with --rebuild: the project (default: MiMo Code's)"
    )
    parser.add_argument(
        "--stats",
        action="store_true",
        help="show the characters the hooks injected per session start and per prompt, "
        "for the recent sessions",
    )
    add_json(parser)
    parser.set_defaults(handler=run)


def run(app: App, args: argparse.Namespace) -> int:
    from memoryd.errors import UsageError

    for name in ("max_chars", "max_entries"):
        value = getattr(args, name)
        if value is not None and value < 0:
            flag = "--" + name.replace("_", "-")
            raise UsageError(f"{flag} must not be negative, got {value}", hint=f"{flag} 0 or more")
    if args.stats:
        if args.query or args.hook or args.rebuild:
            raise UsageError("--stats takes no query, --hook or --rebuild", hint="drop them")
        return _stats(app, args)
    if args.rebuild:
        return _rebuild(app, args)
    if args.session or args.project_id:
        raise UsageError(
            "--session and --project-id go with --rebuild", hint="add --rebuild, or drop them"
        )
    if args.hook:
        return _run_hook(app, args)
    block = _block(app, args, " ".join(args.query))
    if app.lost is not None:
        app.note(f"memoryd: {app.lost}")
    app.emit(args.json, block.as_dict(), block.text)
    return 0


def _block(app: App, args: argparse.Namespace, query: str) -> Block:
    from memoryd.agent.context import gather

    return gather(app, query, args.max_chars, args.max_entries)


def _run_hook(app: App, args: argparse.Namespace) -> int:
    """The hook's answer, or nothing at all (and the reason on stderr): exit 0 either way.

    With ``--json`` the reason is also the answer's ``systemMessage``, which Claude Code
    shows the user (its stderr is shown only in the transcript view), once per session.
    """
    from memoryd import workdir
    from memoryd.agent import injected, notice

    event: dict[str, Any] = {}
    try:
        event = _event(app, sys.stdin.read(), HOOK_EVENT, HOOK_EVENT_HINT, objects_only=True)
        workdir.settle(app, event.get("session_id"))  # a removed worktree: still its project
        prompt = event.get("prompt")
        query = prompt if isinstance(prompt, str) and prompt else " ".join(args.query)
        block = injected.hook_block(app, event, query, args.max_chars, args.max_entries)
    except Exception as failure:  # any failure at all: exit 1 was a hook error every prompt
        from memoryd.failure import as_error

        exc = as_error(app, failure)
        app.note(f"memoryd: context --hook injected nothing: {exc}")
        told = notice.once(app, event.get("session_id"), "context --hook injected nothing", exc)
        if args.json and told:
            app.out.write(json.dumps({"systemMessage": told}, ensure_ascii=False) + "\n")
        return 0
    problem = app.lost or (_missing(app, block) if block.missing else None)
    if problem is not None:
        app.note(f"memoryd: context --hook: {problem}")
    if args.json:
        name = event.get("hook_event_name")
        output = {
            "hookEventName": name if isinstance(name, str) and name else "UserPromptSubmit",
            "additionalContext": block.text,
        }
        answer: dict[str, Any] = {"hookSpecificOutput": output}
        if problem is not None:  # the block is there, but a root it should hold is not
            told = notice.once(app, event.get("session_id"), "context --hook", problem)
            answer.update({"systemMessage": told} if told else {})
        else:
            notice.solved(app, event.get("session_id"))
        app.out.write(json.dumps(answer, ensure_ascii=False) + "\n")
    else:
        app.emit(False, None, block.text)
    return 0


STATS_SHOWN = 20  # sessions listed in the text form (--json gives every one kept)


def _stats(app: App, args: argparse.Namespace) -> int:
    """The characters each hook injected: per session, and the means over all of them."""
    from memoryd.agent.injected import records

    found = records(app)
    starts = [n for r in found for n in r.starts]
    prompts = [n for r in found for n in r.prompts]
    data = {
        "sessions": [
            {"session": r.session, "updated": r.updated, "starts": r.starts, "prompts": r.prompts}
            for r in found
        ],
        "per_start": _mean(starts), "per_prompt": _mean(prompts),
        "prompts_with_nothing_new": prompts.count(0),
    }  # fmt: skip
    lines = [
        f"{len(found)} session(s): {len(starts)} session start(s), {_mean(starts)} characters "
        f"each on average; {len(prompts)} prompt(s), {_mean(prompts)} characters each on "
        f"average ({prompts.count(0)} had nothing new)",
    ]
    for r in found[:STATS_SHOWN]:
        lines.append(
            f"  {r.session}: starts {_sizes(r.starts)}; prompts {_sizes(r.prompts)}"
        )
    if len(found) > STATS_SHOWN:
        lines.append(f"  … {len(found) - STATS_SHOWN} older session(s): --json lists them")
    app.emit(args.json, data, "\n".join(lines))
    return 0


def _mean(sizes: list[int]) -> int:
    return round(sum(sizes) / len(sizes)) if sizes else 0


def _sizes(sizes: list[int]) -> str:
    return ", ".join(map(str, sizes)) if sizes else "-"


def _missing(app: App, block: Block) -> ConfigError:
    """The first root the block should have drawn on that is not there (as recall says it)."""
    from memoryd.locate import missing_root

    scope, path = block.missing[0]
    return missing_root(app, scope, path, "nothing of it was injected")


def _event(
    app: App, raw: str, problem: str, hint: str, *, objects_only: bool = False
) -> dict[str, Any]:
    """A hook's JSON event (empty when it is not an object, or refused with ``objects_only``);
    its ``cwd`` chooses the project."""
    from memoryd.errors import UsageError

    try:
        event = json.loads(raw or "{}")
    except json.JSONDecodeError as exc:
        raise UsageError(f"{problem}: {exc}", hint=hint) from exc
    if not isinstance(event, dict):
        if objects_only:
            kind = type(event).__name__
            raise UsageError(f"--hook expects a JSON object on stdin, got {kind}", hint=hint)
        return {}
    cwd = event.get("cwd")
    if isinstance(cwd, str) and cwd:
        app.cwd = Path(cwd)
    return event


def _rebuild(app: App, args: argparse.Namespace) -> int:
    """``--rebuild``: the layered tree's rebuild sections, each within its token budget.

    As a hook (Claude Code's SessionStart, matcher ``compact``) it fails open: a
    broken event or setting, or any other failure, injects nothing, says why on stderr
    (with ``--json`` also in the answer's ``systemMessage``, once per session) and exits 0,
    because a hook error must never stand between the user and the session.
    """
    from memoryd import workdir
    from memoryd.agent import notice
    from memoryd.agent.rebuild import gather
    from memoryd.errors import UsageError

    if args.query:
        raise UsageError("--rebuild takes no query", hint="drop the query words")
    session = args.session
    try:
        if args.hook:
            session = session or _session_from_hook(app, sys.stdin.read())
            workdir.settle(app, session)
        if not session:
            hint = "pass --session SID (or --hook with a SessionStart event)"
            raise UsageError("--rebuild needs the session id", hint=hint)
        result = gather(app, session, args.project_id)
    except Exception as failure:  # as a hook, any failure: a hook error on every start
        if not args.hook:
            raise
        from memoryd.failure import as_error

        exc = as_error(app, failure)
        app.note(f"memoryd: rebuild injection skipped: {exc}")
        told = notice.once(app, session, "rebuild injection skipped", exc)
        if args.json and told:  # Claude Code shows the user this, not a hook's stderr
            app.out.write(json.dumps({"systemMessage": told}, ensure_ascii=False) + "\n")
        return 0
    if not result.root.is_dir():
        app.note(f"memoryd: no layered memory tree at {result.root} (memoryd init --layered)")
    elif result.project_id is None:
        app.note(
            "memoryd: this repository has no MiMo Code project id yet, so no project MEMORY.md"
            " (pass --project-id)"
        )
    if args.hook and args.json:  # the hook's form: Claude Code adds additionalContext
        notice.solved(app, session)
        output = {"hookEventName": "SessionStart", "additionalContext": result.text}
        app.out.write(json.dumps({"hookSpecificOutput": output}, ensure_ascii=False) + "\n")
        return 0
    app.emit(args.json, result.as_dict(), result.text)
    return 0


def _session_from_hook(app: App, raw: str) -> str:
    """The ``session_id`` of a SessionStart event; its ``cwd`` chooses the project."""
    event = _event(app, raw, "the hook event on stdin is not JSON", HOOK_HINT)
    session = event.get("session_id")
    return session if isinstance(session, str) else ""
