"""``memoryd conflicts``: the sync conflicts waiting to be settled."""

from __future__ import annotations

import argparse
from typing import Any

from memoryd.app import App
from memoryd.commands import add_json


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser("conflicts", help="list the sync conflicts (conflict copies) pending")
    add_json(parser)
    parser.set_defaults(handler=run)


def run(app: App, args: argparse.Namespace) -> int:
    from memoryd.sync.resolve import all_conflicts

    found = all_conflicts(app.config)

    def text() -> str:
        if not found:
            return "no sync conflicts"
        lines = [f"{len(found)} sync conflict(s):"]
        for c in found:
            lines.append(f"  {c.id}  copy of {c.name.original} from {c.name.device} ({c.root})")
        lines.append("settle one with: memoryd resolve ID --keep local|remote|both")
        return "\n".join(lines)

    app.emit(args.json, [c.to_json() for c in found], text)
    return 0
