"""``memoryd import`` and ``memoryd export``: memories from other tools in, and back out."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from memoryd.app import App
from memoryd.commands import add_json


def register(sub: argparse._SubParsersAction[Any]) -> None:
    from memoryd.transfer import FORMATS, SOURCES

    parser = sub.add_parser(
        "import",
        help="import memories from another tool (secrets, duplicates and bad ids refused)",
        description="Read SOURCE's memories and write each that passes remember's checks; "
        "the source is never changed, and a second import writes nothing new.",
    )
    parser.add_argument("source", metavar="SOURCE", help=", ".join(SOURCES))
    parser.add_argument(
        "path", nargs="?", default=None, metavar="PATH",
        help="the source's folder or file (default: where the tool keeps its memories)",
    )  # fmt: skip
    parser.add_argument(
        "--into", choices=("global", "project"), help="default: the project's root if any"
    )
    parser.add_argument(
        "--only", action="append", default=[], metavar="TEXT",
        help="import only memories whose summary or source holds TEXT (repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "--dry-run", action="store_true", help="show what would be written; write nothing"
    )
    add_json(parser)
    parser.set_defaults(handler=run_import)

    export = sub.add_parser(
        "export",
        help="export a root's memories as jsonl or as Claude Code's memory folder",
        description="jsonl loses nothing (import it elsewhere to get the same memories); "
        "claude-code writes topic files and MEMORY.md where Claude Code reads them.",
    )
    export.add_argument("format", metavar="FORMAT", help=", ".join(FORMATS))
    export.add_argument(
        "--root", metavar="R", help="global, project or a root's path (default: project if any)"
    )
    export.add_argument(
        "--out", metavar="DIR", type=Path,
        help="where to write (jsonl default: stdout; claude-code default: this project's "
        "Claude Code memory folder)",
    )  # fmt: skip
    add_json(export)
    export.set_defaults(handler=run_export)


def run_import(app: App, args: argparse.Namespace) -> int:
    from memoryd.transfer.importing import run, summary_lines

    path = None if args.path is None else app.cwd / Path(args.path).expanduser()
    report = run(app, args.source, path, args.into, dry_run=args.dry_run, only=args.only)
    app.emit(args.json, report.as_dict(), lambda: "\n".join(summary_lines(report)))
    return 0


def run_export(app: App, args: argparse.Namespace) -> int:
    from memoryd.transfer.exporting import export

    out = None if args.out is None else app.cwd / args.out.expanduser()
    done = export(app, args.format, args.root, out)
    if done.out is None and not args.json:
        app.out.write(done.text)
        return 0
    text = f"exported {done.count} memories of {done.root} as {done.format} to {done.out}"
    app.emit(args.json, done.as_dict(), text)
    return 0
