"""``memoryd compile [--check]``: compile every root's ROOT.md blocks and index.md files now."""

from __future__ import annotations

import argparse
from typing import Any

from memoryd.app import App
from memoryd.commands import add_json


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser(
        "compile", help="compile ROOT.md's blocks and every folder's index.md from the memories"
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 naming each stale file (for CI and pre-commit hooks)",
    )
    add_json(parser)
    parser.set_defaults(handler=run)


def run(app: App, args: argparse.Namespace) -> int:
    from memoryd.compile.writer import compile_root, kept_cache
    from memoryd.locate import refuse_missing

    # "up to date" would be said of a root that is not there
    refuse_missing(app, app.config.roots, "nothing was compiled")
    cache = kept_cache(app.paths.cache_dir)
    reports = [
        compile_root(root, app.config, check=args.check, cache=cache) for root in app.config.roots
    ]
    stale = [path for r in reports for path in r.stale]
    problems = [finding for r in reports for finding in r.problems]

    def text() -> str:
        lines = [f"wrote {path}" for r in reports for path in r.written]
        lines += [
            f"removed {path} (its folder holds no memory)" for r in reports for path in r.removed
        ]
        lines += [f"stale: {path}" for path in stale]
        lines += [finding.text() for finding in problems]
        if not lines:
            lines.append("every compiled file is up to date")
        return "\n".join(lines)

    app.emit(args.json, {"roots": [r.as_dict() for r in reports]}, text)
    if stale:
        app.note(f"{len(stale)} compiled file(s) stale: run 'memoryd compile' to refresh them")
    return 1 if stale or problems else 0
