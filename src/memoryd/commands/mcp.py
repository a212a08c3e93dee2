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
    parser.set_defaults(handler=run)


def run(app: App, args: argparse.Namespace) -> int:
    from memoryd.agent.mcp_server import serve

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
    serve(app)
    return 0
