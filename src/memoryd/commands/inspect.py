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
    from memoryd.extract_report import lines, report
    from memoryd.inspection import inspect, render_text

    result = inspect(app)
    extraction = report(app)
    data = {**result.as_dict(), "extraction": extraction}
    app.emit(args.json, data, lambda: "\n".join([render_text(result), "", *lines(extraction)]))
    return 1 if result.findings else 0
