"""``memoryd inspect``: list every memory and run the consistency self-check."""

from __future__ import annotations

import argparse
from typing import Any

from memoryd.app import App
from memoryd.commands import add_json


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser(
        "inspect",
        help="list every memory and check roots, compiled files and index (exit 1 on problems)",
    )
    add_json(parser)
    parser.set_defaults(handler=run)


def run(app: App, args: argparse.Namespace) -> int:
    from memoryd.inspection import inspect, render_text

    result = inspect(app)
    app.emit(args.json, result.as_dict(), lambda: render_text(result))
    return 1 if result.findings else 0
