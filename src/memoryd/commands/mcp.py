"""``memoryd mcp``: serve the memory tools to an agent over MCP (stdio)."""

from __future__ import annotations

import argparse
from typing import Any

from memoryd.app import App


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser(
        "mcp",
        help="run the MCP server on stdio (memory_recall, memory_remember, ...)",
    )
    parser.add_argument(
        "--project", metavar="DIR", help="the project whose memory to serve (default: .)"
    )
    parser.set_defaults(handler=run, stoppable=True)


def run(app: App, args: argparse.Namespace) -> int:
    from memoryd import workdir
    from memoryd.agent.mcp_front import front

    if args.project:
        from memoryd.errors import UsageError

        project = (app.cwd / args.project).resolve()
        if not project.is_dir():  # a typo would serve the global memory alone, and say nothing
            raise UsageError(
                f"--project {args.project}: {project} is not a folder",
                hint="pass the project's folder, or leave --project out to serve the folder "
                "the client starts memoryd in",
            )
        app.cwd = project
    # the linked worktree it starts in, read now: the client has answers from here on, and
    # its session may remove that worktree while the SDK still loads
    main = workdir.main_tree(app.cwd)
    with front(app):  # what never changes is answered while the SDK loads
        from memoryd.agent.mcp_server import serve

        serve(app, main)
    return 0
