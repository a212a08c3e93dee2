"""``memoryd guard PATH``: may an agent write this file? For a harness's pre-write hook."""

from __future__ import annotations

import argparse
from typing import Any

from memoryd.app import App
from memoryd.commands import add_json


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser(
        "guard",
        help="check a write against the layered memory tree's rules (exit 0 allowed, 1 refused)",
    )
    parser.add_argument("path", metavar="PATH", help="the file about to be written")
    parser.add_argument("--agent", default="", metavar="NAME", help="the writing agent's name")
    parser.add_argument(
        "--task", default="", metavar="TID", help="the task the agent is bound to (T3, T3.1.2)"
    )
    parser.add_argument("--session", default="<sid>", metavar="SID", help="for the hints")
    parser.add_argument("--project-id", default="<pid>", metavar="PID", help="for the hints")
    parser.add_argument(
        "--worktree", metavar="DIR", help="the agent's work tree (default: the current folder)"
    )
    add_json(parser)
    parser.set_defaults(handler=run)


def run(app: App, args: argparse.Namespace) -> int:
    import os

    from memoryd.errors import Refused
    from memoryd.layouts import configured_root
    from memoryd.layouts.guard import WriteRequest, check_write, normalize

    cwd = str(app.cwd)
    request = WriteRequest(
        target=os.path.realpath(normalize(args.path, cwd)),
        memory_root=os.path.realpath(configured_root(app.config, app.env)),
        cwd=cwd,
        agent=args.agent,
        task=args.task,
        worktree=os.path.realpath(normalize(args.worktree or cwd, cwd)),
        write_enabled=not app.config.layered.disable_write,
        project_id=args.project_id,
        session_id=args.session,
    )
    decision = check_write(request)
    if not decision.allowed:
        raise Refused(decision.message)
    app.emit(args.json, {"allowed": True, "rule": decision.rule, "path": request.target}, "")
    return 0
