"""``memoryd run``: the long-lived daemon, in the foreground (what the service runs)."""

from __future__ import annotations

import argparse
from typing import Any

from memoryd.app import App


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser(
        "run",
        help="run the daemon in the foreground (SIGTERM/SIGINT stop it, SIGHUP reloads config)",
    )
    parser.set_defaults(handler=run)


def run(app: App, args: argparse.Namespace) -> int:
    from memoryd.daemon.runner import Daemon

    return Daemon(app).serve(verbosity=getattr(args, "verbose", 0))
