"""``memoryd pin ID [--off]``: pin a memory (it never decays in recall), or unpin it."""

from __future__ import annotations

import argparse
from typing import Any

from memoryd.app import App
from memoryd.commands import add_json


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser("pin", help="pin a memory (it never decays), or --off to unpin")
    parser.add_argument("id", metavar="ID", help="the memory id, e.g. preferences/pnpm")
    parser.add_argument("--off", action="store_true", help="unpin it")
    parser.add_argument("--scope", choices=("global", "project"), help="when both roots have it")
    add_json(parser)
    parser.set_defaults(handler=run)


def run(app: App, args: argparse.Namespace) -> int:
    from memoryd.agent.pin import pin

    done = pin(app, args.id, scope=args.scope, on=not args.off)
    word = "pinned" if done.pinned else "unpinned"
    text = f"{word} {done.id}" if done.changed else f"{done.id} was already {word}"
    app.emit(args.json, done.as_dict(), text)
    return 0
