"""``memoryd reindex [--full]``: reconcile the search index with the files now."""

from __future__ import annotations

import argparse
from typing import Any

from memoryd.app import App
from memoryd.commands import add_json


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser("reindex", help="bring the search index up to date with the files")
    parser.add_argument(
        "--full", action="store_true", help="throw the index away and rebuild it from the files"
    )
    add_json(parser)
    parser.set_defaults(handler=run)


def run(app: App, args: argparse.Namespace) -> int:
    from memoryd.freshness import search_roots
    from memoryd.index import open_index, reconcile

    roots = list(app.config.roots)
    roots += [r for r in search_roots(app.config, app.cwd) if r not in roots]
    with open_index(app.paths, discard=args.full) as db:  # --full: emptied, then checked
        report = reconcile(db, app.config, roots)
        total = db.count()
    # The JSON lists every path, sorted (a tenth of a second at 100k): only --json asks for it.
    data = {**report.to_json(), "full": args.full, "memories": total} if args.json else None

    def text() -> str:
        lines = [
            f"indexed {total} memories in {report.seconds:.2f}s: {report.count('added')} added, "
            f"{report.count('changed')} changed, {report.count('removed')} removed"
        ]
        lines += [f"  unknown: {path} ({reason})" for path, reason in report.unknown]
        lines += [f"  oversized, frontmatter only: {path}" for path in report.oversized]
        return "\n".join(lines)

    app.emit(args.json, data, text)
    return 0
