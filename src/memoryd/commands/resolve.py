"""``memoryd resolve ID --keep local|remote|both``: settle one sync conflict."""

from __future__ import annotations

import argparse
from typing import Any

from memoryd.app import App
from memoryd.commands import add_json


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser("resolve", help="settle one sync conflict")
    parser.add_argument("id", metavar="ID", help="the conflict's id (see memoryd conflicts)")
    parser.add_argument(
        "--keep",
        required=True,
        choices=("local", "remote", "both"),
        help="local: the conflict copy's text; remote: the text at the path; both: keep both",
    )
    add_json(parser)
    parser.set_defaults(handler=run)


def run(app: App, args: argparse.Namespace) -> int:
    from memoryd.sync.resolve import find, resolve

    conflict = find(app.config, args.id)
    done = resolve(conflict, args.keep)
    data = {"id": conflict.id, "root": str(conflict.root), "keep": args.keep, "done": done}
    app.emit(args.json, data, f"{conflict.id}: {done} (the next sync shares it)")
    return 0
