"""``memoryd hook install|uninstall``: the git pre-commit hook that runs ``memoryd scan``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from memoryd.app import App
from memoryd.commands import add_json


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser("hook", help="install or remove the secret-scanning pre-commit hook")
    parser.add_argument("action", choices=["install", "uninstall"])
    parser.add_argument(
        "--repo", default=".", metavar="DIR", help="the repository (default: the current folder)"
    )
    add_json(parser)
    parser.set_defaults(handler=run)


def run(app: App, args: argparse.Namespace) -> int:
    from memoryd.errors import PathError
    from memoryd.roots import git_toplevel
    from memoryd.secrets import hook

    where = app.cwd / Path(args.repo)
    repo = git_toplevel(where) if where.exists() else None
    if repo is None:
        raise PathError(f"{where} is not inside a git repository", hint="pass --repo DIR")
    result = hook.install(repo) if args.action == "install" else hook.uninstall(repo)
    data = {
        "hook": str(result.path),
        "action": result.action,
        "legacy": str(result.legacy) if result.legacy else None,
    }

    def text() -> str:
        lines = [f"{result.path}: {result.action}"]
        if result.legacy and args.action == "install":
            lines.append(f"  the previous hook is kept as {result.legacy} and still runs first")
        elif result.legacy:
            lines.append("  restored the previous hook from pre-commit.legacy")
        return "\n".join(lines)

    app.emit(args.json, data, text)
    return 0
