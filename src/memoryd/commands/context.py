"""``memoryd context``: the block an agent harness injects into each prompt."""

from __future__ import annotations

import argparse
from typing import Any

from memoryd.app import App
from memoryd.commands import add_json


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser(
        "context",
        help="print the memory block for a prompt (iron rules, outline, best hits)",
    )
    parser.add_argument("query", nargs="*", metavar="QUERY", help="the prompt or task")
    parser.add_argument("--max-chars", type=int, metavar="N", help="body text budget")
    parser.add_argument("--max-entries", type=int, metavar="N", help="at most N memory bodies")
    add_json(parser)
    parser.set_defaults(handler=run)


def run(app: App, args: argparse.Namespace) -> int:
    from memoryd.context import gather
    from memoryd.errors import UsageError

    for name in ("max_chars", "max_entries"):
        value = getattr(args, name)
        if value is not None and value < 0:
            flag = "--" + name.replace("_", "-")
            raise UsageError(f"{flag} must not be negative, got {value}", hint=f"{flag} 0 or more")
    block = gather(app, " ".join(args.query), args.max_chars, args.max_entries)
    app.emit(args.json, block.as_dict(), block.text)
    return 0
