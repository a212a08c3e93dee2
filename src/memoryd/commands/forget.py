"""``memoryd forget``: remove one memory and the links that pointed at it."""

from __future__ import annotations

import argparse
from typing import Any

from memoryd.app import App
from memoryd.commands import add_json
from memoryd.config.sections import SCOPES


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser("forget", help="remove a memory (git history keeps it)")
    parser.add_argument("id", metavar="ID", help="the memory id, e.g. pitfalls/sqlite-cjk")
    parser.add_argument("--scope", choices=SCOPES, help="when both roots have it")
    add_json(parser)
    parser.set_defaults(handler=run)


def run(app: App, args: argparse.Namespace) -> int:
    from memoryd.agent.caller import agent_marker
    from memoryd.agent.forget import forget

    gone = forget(app, args.id, scope=args.scope, agent=agent_marker(app.env) is not None)
    lines = [f"forgot {gone.id}: removed {gone.path}"]
    lines += [f"  cleared the link in {other}" for other in gone.unlinked]
    lines += [
        f"  {other} is current again: it was superseded by {gone.id}, so recall returns it; "
        f"forget it too if it is out of date"
        for other in gone.current_again
    ]
    lines += [
        f"  left the link in {other}: its frontmatter does not parse (memoryd inspect says "
        f"where); fix it, then remove {gone.id!r} from it"
        for other in gone.left
    ]
    lines += [
        f"  {other} still links to {gone.path.name} in its text: edit that link by hand"
        for other in gone.linked_from
    ]
    for warning in gone.warnings:
        app.note(f"memoryd: warning: forgotten, but ROOT.md was not updated: {warning}")
    app.emit(args.json, gone.as_dict(), "\n".join(lines))
    return 0
