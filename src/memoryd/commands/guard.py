"""``memoryd guard PATH``: may an agent write this file? For a harness's pre-write hook.

Exit codes keep a refusal apart from a failure of memoryd itself: 0 allowed, 3
refused (:class:`~memoryd.errors.WriteRefused`), 1 memoryd could not decide (an
invalid config.yaml, say), 2 a wrong command line. A hook that blocks on 3 alone
never blocks an ordinary edit because memoryd broke. ``--hook`` goes further and
speaks Claude Code's ``PreToolUse`` protocol: it reads the event from stdin, answers
a refusal with a ``permissionDecision: deny`` JSON object, and exits 0 whatever
happens, a memoryd failure only reported on stderr: the tool call goes ahead. Gemini CLI's
``BeforeTool`` event (``write_file``, ``replace``) gets Gemini's refusal, ``decision: deny``
with the ``reason`` the model is shown.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from memoryd.app import App
from memoryd.commands import add_json

PATH_KEYS = ("file_path", "notebook_path", "path", "filePath")


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser(
        "guard",
        help="check a write against the layered memory tree's rules "
        "(exit 0 allowed, 3 refused, 1 memoryd failed)",
    )
    parser.add_argument("path", nargs="?", metavar="PATH", help="the file about to be written")
    parser.add_argument("--agent", default="", metavar="NAME", help="the writing agent's name")
    parser.add_argument(
        "--task", default="", metavar="TID", help="the task the agent is bound to (T3, T3.1.2)"
    )
    parser.add_argument("--session", default="<sid>", metavar="SID", help="for the hints")
    parser.add_argument("--project-id", default="<pid>", metavar="PID", help="for the hints")
    parser.add_argument(
        "--worktree", metavar="DIR", help="the agent's work tree (default: the current folder)"
    )
    parser.add_argument(
        "--hook",
        action="store_true",
        help="read a Claude Code PreToolUse event on stdin and answer in its JSON; never blocks "
        "a tool call because memoryd itself failed",
    )
    add_json(parser)
    parser.set_defaults(handler=run)


def run(app: App, args: argparse.Namespace) -> int:
    from memoryd.errors import UsageError, WriteRefused

    if not args.hook:
        if not args.path:
            raise UsageError("guard needs the PATH about to be written", hint="memoryd guard PATH")
        return _check(app, args, args.path)
    from memoryd.agent import notice

    event: dict[str, Any] = {}
    try:
        path = _from_event(app, args, sys.stdin.read(), event)
        if path:
            _check(app, args, path)
            notice.solved(app, event.get("session_id"))
    except WriteRefused as exc:
        import json

        answer: dict[str, Any] = {"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": exc.message,
        }}  # fmt: skip
        if event.get("hook_event_name") == "BeforeTool":  # Gemini CLI's refusal
            answer = {"decision": "deny", "reason": exc.message}
        app.out.write(json.dumps(answer, ensure_ascii=False) + "\n")
    except Exception as failure:  # any failure at all lets the write through, and says why
        from memoryd.failure import as_error

        error = as_error(app, failure)
        what = "guard --hook could not check the write, allowing it"
        app.note(f"memoryd: {what}: {error}")
        told = notice.once(app, event.get("session_id"), what, error)
        if told:  # Claude Code shows the user this (its stderr only in the transcript view)
            import json

            app.out.write(json.dumps({"systemMessage": told}, ensure_ascii=False) + "\n")
    return 0


def _from_event(app: App, args: argparse.Namespace, raw: str, seen: dict[str, Any]) -> str:
    """The path a PreToolUse event's tool is about to write ('' when it names none); the
    event goes into ``seen``."""
    import json
    from pathlib import Path

    from memoryd.errors import UsageError

    try:
        event = json.loads(raw or "{}")
    except json.JSONDecodeError as exc:
        raise UsageError(f"--hook expects the PreToolUse event's JSON on stdin: {exc}") from exc
    if not isinstance(event, dict):
        raise UsageError("--hook expects a JSON object on stdin")
    seen.update(event)
    cwd = event.get("cwd")
    if isinstance(cwd, str) and cwd:
        app.cwd = Path(cwd)
    if not args.agent and isinstance(event.get("agent_type"), str):
        args.agent = event["agent_type"]
    tool_input = event.get("tool_input")
    if not isinstance(tool_input, dict):
        return args.path or ""
    for key in PATH_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            return value
    return args.path or ""


def _check(app: App, args: argparse.Namespace, path: str) -> int:
    import os
    from pathlib import Path

    from memoryd.errors import WriteRefused
    from memoryd.layouts import configured_root
    from memoryd.layouts.guard import WriteRequest, check_write, normalize

    cwd = str(app.cwd)
    request = WriteRequest(
        target=os.path.realpath(normalize(path, cwd)),
        memory_root=os.path.realpath(configured_root(app.config, app.env)),
        cwd=cwd,
        agent=args.agent,
        task=args.task,
        worktree=os.path.realpath(normalize(args.worktree or cwd, cwd)),
        write_enabled=not app.config.layered.disable_write,
        project_id=args.project_id,
        session_id=args.session,
    )
    team = app.config.root_for(Path(request.target))
    if team is not None and team.is_team:  # a file written by hand there skips the review
        raise WriteRefused(
            f"refusing to write {request.target}: it is in team {team.team}'s memory, where an "
            "agent's memory waits for a person's review; save it with memory_remember (scope "
            "'team') or 'memoryd remember --scope team' instead"
        )
    decision = check_write(request)
    if not decision.allowed:
        raise WriteRefused(decision.message)
    if not args.hook:
        app.emit(args.json, {"allowed": True, "rule": decision.rule, "path": request.target}, "")
    return 0
