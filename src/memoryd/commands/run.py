"""``memoryd run``: the long-lived daemon, in the foreground (what the service runs)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from memoryd.app import App


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser(
        "run",
        help="run the daemon in the foreground (SIGTERM/SIGINT stop it, SIGHUP reloads config)",
    )
    parser.add_argument(
        "--stderr-log",
        metavar="FILE",
        type=Path,
        help="the file stderr goes to (the launchd plist's StandardErrorPath): no log lines go "
        "there while the log file takes them, and it is cut to its newest lines at start",
    )
    parser.set_defaults(handler=run, stoppable=True)


def run(app: App, args: argparse.Namespace) -> int:
    from memoryd.daemon.runner import Daemon

    stderr_log: Path | None = args.stderr_log
    if stderr_log is not None:
        from memoryd.daemon.logs import bound_file

        bound_file(stderr_log)
    daemon = Daemon(app)
    return daemon.serve(verbosity=getattr(args, "verbose", 0), stderr=stderr_log is None)
