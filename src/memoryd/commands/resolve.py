"""``memoryd resolve ID|--all --keep local|remote|both``: settle sync conflicts.

Sync never settles a conflict by itself (both versions stay, the copy beside the
path); this is the user asking. ``--all`` settles every pending conflict (of one
root with ``--root``) the same way, for the user back from a month offline.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from memoryd.app import App
from memoryd.commands import add_json
from memoryd.errors import UsageError


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser("resolve", help="settle sync conflicts (one, or all)")
    parser.add_argument(
        "id", metavar="ID", nargs="?", help="the conflict's id (see memoryd conflicts)"
    )
    parser.add_argument("--all", action="store_true", help="every pending conflict")
    parser.add_argument("--root", metavar="PATH", help="with --all: only this root's conflicts")
    parser.add_argument(
        "--keep",
        required=True,
        choices=("local", "remote", "both"),
        help="local: the conflict copy's text; remote: the text at the path; both: keep both",
    )
    add_json(parser)
    parser.set_defaults(handler=run)


def run(app: App, args: argparse.Namespace) -> int:
    from memoryd.sync.resolve import find, resolve

    if args.all or args.root:
        return _run_all(app, args)
    if not args.id:
        raise UsageError(
            "resolve needs the id of a conflict, or --all",
            hint="'memoryd conflicts' lists them; 'memoryd resolve --all --keep both' settles all",
        )
    conflict = find(app.config, args.id)
    done = resolve(conflict, args.keep)
    data = {"id": conflict.id, "root": str(conflict.root), "keep": args.keep, "done": done}
    app.emit(args.json, data, f"{conflict.id}: {done} (the next sync shares it)")
    return 0


def _run_all(app: App, args: argparse.Namespace) -> int:
    from memoryd.sync.report import pick_roots
    from memoryd.sync.resolve import resolve_all

    if args.id:
        raise UsageError(
            "pass either a conflict id or --all, not both",
            hint="'memoryd resolve ID --keep ...' settles one; '--all' settles every one",
        )
    roots = pick_roots(app.config, app.cwd / Path(args.root) if args.root else None)
    settled, left = resolve_all([r.path for r in roots], args.keep)
    data = {
        "keep": args.keep,
        "settled": [{"id": c.id, "root": str(c.root), "done": d} for c, d in settled],
        "left": [{"id": c.id, "root": str(c.root), "why": w} for c, w in left],
    }

    def text() -> str:
        lines = [f"{c.id}: {d}" for c, d in settled]
        lines += [f"{c.id}: left pending: {w}" for c, w in left]
        lines.append(
            f"settled {len(settled)} conflict(s), {len(left)} left pending"
            + (" (the next sync shares it)" if settled else "")
        )
        return "\n".join(lines)

    app.emit(args.json, data, text)
    return 0 if not left else 1
