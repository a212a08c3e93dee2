"""``memoryd init``: create the global root, or a project's ``.memory/``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from memoryd.app import App
from memoryd.commands import add_json


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser("init", help="create the global memory root or a project's .memory/")
    parser.add_argument(
        "--project",
        nargs="?",
        const=".",
        metavar="DIR",
        help="create <git top level of DIR>/.memory/ and register it (DIR defaults to .)",
    )
    add_json(parser)
    parser.set_defaults(handler=run)


def run(app: App, args: argparse.Namespace) -> int:
    from memoryd.setup import init_global, init_project

    if args.project is not None:
        result = init_project(app, app.cwd / Path(args.project))
    else:
        result = init_global(app)
    data = {
        "root": str(result.root),
        "created": list(result.created),
        "registered": result.registered,
    }

    def text() -> str:
        if not result.created and not result.registered:
            return f"{result.root}: already set up, nothing changed"
        lines = [f"{result.root}: ready"]
        lines += [f"  created {name}" for name in result.created]
        if result.registered:
            lines.append(f"  registered in {app.paths.config_file}")
        return "\n".join(lines)

    app.emit(args.json, data, text)
    return 0
