"""``memoryd scan``: look for secrets in files, folders or the staged changes."""

from __future__ import annotations

import argparse
from typing import Any

from memoryd.app import App
from memoryd.commands import add_json


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser(
        "scan",
        help="find secrets in files, folders or staged changes (exit 1 when any is found)",
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: .)")
    parser.add_argument(
        "--staged",
        action="store_true",
        help="scan what is staged for commit in the current repository (the index, not the files)",
    )
    add_json(parser)
    parser.set_defaults(handler=run)


def run(app: App, args: argparse.Namespace) -> int:
    from memoryd.errors import UsageError
    from memoryd.secrets.scanner import ALLOWLIST_FILE
    from memoryd.secrets.targets import scan_paths, scan_staged

    if args.staged and args.paths:
        raise UsageError("--staged scans the index; it takes no PATH", hint="drop the paths")
    if args.staged:
        report = scan_staged(app.cwd)
    else:
        report = scan_paths([app.cwd / p for p in args.paths or ["."]], app.cwd)
    data = {
        "files": report.files,
        "findings": [{"path": where, **f.to_dict()} for where, f in report.findings],
    }

    def text() -> str:
        lines = [
            f"{where}:{f.line}:{f.start}: {f.rule} {f.preview} (fingerprint {f.fingerprint})"
            for where, f in report.findings
        ]
        count = len(report.findings)
        if count:
            lines.append(f"{count} secret(s) found in {report.files} file(s) scanned")
        else:
            lines.append(f"no secrets found in {report.files} file(s)")
        return "\n".join(lines)

    app.emit(args.json, data, text)
    if report.findings:
        app.note(
            "memoryd: remove the secrets (rotate any that were real); for a deliberate false "
            f"positive add 'memoryd:allow' in a comment on its line, or its fingerprint to "
            f"{ALLOWLIST_FILE} at the root"
        )
        return 1
    return 0
