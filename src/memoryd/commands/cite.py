"""``memoryd cite ID``: check a memory's citations; ``--fix`` or ``--confirm`` re-anchor them."""

from __future__ import annotations

import argparse
from typing import Any

from memoryd.app import App
from memoryd.commands import add_json


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser(
        "cite",
        help="check the code a memory cites; --fix fills in fingerprints, --confirm re-anchors",
        description="Check each citation of the memory in this working tree. --fix fills in the "
        "fingerprints a hand-written citation lacks; --confirm anchors every citation where its "
        "text stands now, once you have checked the memory is still true.",
    )
    parser.add_argument("id", metavar="ID")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--fix", action="store_true", help="fill in missing fingerprints")
    mode.add_argument("--confirm", action="store_true", help="re-anchor every citation")
    parser.add_argument("--scope", choices=("global", "project"))
    add_json(parser)
    parser.set_defaults(handler=run)


def run(app: App, args: argparse.Namespace) -> int:
    from memoryd import locate
    from memoryd.agent.citing import Checker, refresh_cites

    if args.fix or args.confirm:
        refresh_cites(app, args.id, confirm=args.confirm, scope=args.scope)
    found = locate.find(locate.active_roots(app.config, app.cwd), args.id, args.scope)
    verdicts = Checker(app.cwd).verdicts(found.memory.meta)
    data = {"id": found.id, "path": str(found.path), "cites": [v.to_json() for v in verdicts]}

    def text() -> str:
        lines = [f"{found.id}: {len(verdicts)} citation(s)"]
        for v in verdicts:
            now = f" (now {v.now.where})" if v.now is not None and v.now != v.citation else ""
            why = f": {v.reason}" if v.reason else ""
            lines.append(f"  {v.state:10} {v.citation.where}{now}{why}")
        return "\n".join(lines)

    app.emit(args.json, data, text)
    return 1 if any(v.stale or v.state == "unanchored" for v in verdicts) else 0
