"""``memoryd sync``: run one sync cycle now (every syncing root, or one).

Exit 0 when every root synced with nothing held back; 1 when a root's cycle failed or
paused, or when a file was kept out of the commit (a secret, conflict markers, a file
over the size cap, a link or an unreadable file: each named with its fix), so
``memoryd sync && ...`` notices, as ``memoryd scan`` does for the same finding.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from memoryd.app import App
from memoryd.commands import add_json


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser(
        "sync",
        help="commit, pull and push the memory roots now",
        description="Commit, pull and push the memory roots now. Exit 1 when a root "
        "failed or a file was held back from the commit (a secret, conflict markers, "
        "a file over the size cap), each named with its fix.",
    )
    parser.add_argument("--root", metavar="PATH", help="only this root (default: every root)")
    parser.add_argument(
        "--allow-mass-delete",
        action="store_true",
        help="commit a deletion of many memories that paused the root",
    )
    add_json(parser)
    parser.set_defaults(handler=run, stoppable=True)


def run(app: App, args: argparse.Namespace) -> int:
    from memoryd.sync.engine import sync_root
    from memoryd.sync.report import outcome_text, pick_roots

    roots = pick_roots(app.config, app.cwd / Path(args.root) if args.root else None)
    outcomes = [
        sync_root(app.config, app.paths, root, allow_mass_delete=args.allow_mass_delete, force=True)
        for root in roots
    ]
    app.emit(
        args.json,
        [o.to_json() for o in outcomes],
        lambda: "\n".join(outcome_text(o) for o in outcomes),
    )
    held_back = any(o.quarantined or o.left_out for o in outcomes)
    return 0 if all(o.ok for o in outcomes) and not held_back else 1
