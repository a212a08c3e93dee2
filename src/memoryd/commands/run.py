"""``memoryd run``: the long-lived daemon (placeholder until the daemon lands)."""

from __future__ import annotations

import argparse
from typing import Any

from memoryd.app import App
from memoryd.errors import MemorydError


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser("run", help="run the daemon in the foreground")
    parser.set_defaults(handler=run)


def run(app: App, args: argparse.Namespace) -> int:
    raise MemorydError(
        "the daemon is not built yet",
        hint="the roots are set up; 'memoryd init' and the other commands work without it",
    )
