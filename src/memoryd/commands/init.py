"""``memoryd init``: create the global root, or a project's ``.memory/``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memoryd.app import App
from memoryd.commands import add_json

if TYPE_CHECKING:
    from memoryd.init.plugin import SetupResult


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser("init", help="create the global memory root or a project's .memory/")
    parser.add_argument(
        "--project",
        nargs="?",
        const=".",
        metavar="DIR",
        help="create <main work tree of DIR>/.memory/ and register it (DIR defaults to .)",
    )
    parser.add_argument(
        "--team",
        nargs="?",
        const="",
        metavar="NAME",
        help="clone the team's memory repository (--remote URL) and register it as the team "
        "root NAME; with --project: make the project's .memory/ a team root (docs/team.md)",
    )
    parser.add_argument("--remote", metavar="URL", help="with --team: the team's memory repository")
    parser.add_argument(
        "--layered",
        action="store_true",
        help="register the layered memory tree (<data>/memory/) and set up this project's "
        "MEMORY.md",
    )
    parser.add_argument(
        "--project-id", metavar="PID", help="with --layered: the MiMo Code project id to set up"
    )
    claude = parser.add_mutually_exclusive_group()
    claude.add_argument(
        "--claude",
        action="store_true",
        help="index Claude Code's memory folders (prints what that means for privacy first)",
    )
    claude.add_argument(
        "--no-claude", action="store_true", help="stop indexing Claude Code's memory folders"
    )
    parser.add_argument(
        "--sync-folder",
        action="append",
        default=[],
        metavar="DIR",
        help="with --claude: also sync this project folder's memory/*.md through git "
        "(repeatable; never the default)",
    )
    add_json(parser)
    parser.set_defaults(handler=run)


def run(app: App, args: argparse.Namespace) -> int:
    from memoryd.init.plugin import init_global, init_project

    if args.claude or args.no_claude or args.sync_folder:
        return _claude(app, args)
    if args.layered:
        return _layered(app, args)
    if args.team is not None or args.remote is not None:
        result = _team(app, args)
    elif args.project is not None:
        result = init_project(app, app.cwd / Path(args.project))
    else:
        result = init_global(app)
    data = {
        "root": str(result.root),
        "created": list(result.created),
        "registered": result.registered,
    }

    def text() -> str:
        if not result.created and not result.registered:
            return f"{result.root}: already set up, nothing changed"
        lines = [f"{result.root}: ready"]
        lines += [f"  created {name}" for name in result.created]
        if result.registered:
            lines.append(f"  registered in {app.paths.config_file}")
        return "\n".join(lines)

    app.emit(args.json, data, text)
    _identity_note(app, result.root)
    if args.project is None and args.team is None:
        _enclosing_note(app, result.root)
    return 0


def _team(app: App, args: argparse.Namespace) -> SetupResult:
    from memoryd.errors import UsageError
    from memoryd.init.team import init_project_team, init_team

    if args.team is None:
        raise UsageError("--remote goes with --team", hint="memoryd init --team NAME --remote URL")
    if args.project is not None:
        if args.remote is not None:
            raise UsageError(
                "--remote does not go with --project: a project's .memory/ travels with the "
                "project's own repository",
                hint="memoryd init --project --team",
            )
        return init_project_team(app, app.cwd / Path(args.project), args.team or None)
    if not args.team:
        raise UsageError(
            "--team needs the team's name here", hint="memoryd init --team NAME --remote URL"
        )
    return init_team(app, args.team, args.remote)


def _enclosing_note(app: App, root: Path) -> None:
    """Warn when the global root sits inside another repository's work tree (a dotfiles repo
    in the home folder): init did not give it one of its own, so sync commits memories onto
    that repository's branch and pushes it, to a remote that may well be public."""
    from memoryd.rootfs import git_toplevel

    config = next((r for r in app.reload_config().roots if r.path == root), None)
    if config is None or not (config.sync.commit or config.sync.push):
        return
    found = git_toplevel(str(root))
    top = Path(found).resolve() if found else None
    if top is None or top == root.resolve():
        return
    pushes = " and pushes that branch to its remote" if config.sync.push else ""
    app.note(
        f"memoryd: WARNING: {root} is inside the git repository {top}: memoryd commits "
        f"memories onto its branch{pushes}\n"
        f"  hint: give memory a repository of its own (git init {root}; ignore it in {top}), "
        "or keep it on this machine: sync: {push: false, pull: false} for this root in "
        f"{app.paths.config_file}"
    )


def _identity_note(app: App, root: Path) -> None:
    """Warn now, not at the first sync, when git could not commit ``root`` for want of a
    name and email (and the root commits)."""
    from memoryd.sync.identity import IDENTITY_HINT, missing_identity

    if not any(r.path == root and r.sync.commit for r in app.reload_config().roots):
        return
    problem = missing_identity(root)
    if problem is not None:
        app.note(
            f"memoryd: WARNING: {problem}; memoryd cannot commit {root} until it does\n"
            f"  hint: {IDENTITY_HINT}"
        )


def _layered(app: App, args: argparse.Namespace) -> int:
    from memoryd.init.layered import setup_layered

    result, pid = setup_layered(app, app.cwd, args.project_id)
    data = {
        "root": str(result.root),
        "created": list(result.created),
        "registered": result.registered,
        "project_id": pid,
    }

    def text() -> str:
        lines = [f"{result.root}: layered memory tree ready"]
        lines += [f"  created {name}" for name in result.created]
        if result.registered:
            lines.append(f"  registered in {app.paths.config_file}")
        if pid is None:
            lines.append(
                "  no project MEMORY.md: this repository has no MiMo Code project id yet "
                "(.git/mimocode-project-id); run MiMo Code here once or pass --project-id"
            )
        return "\n".join(lines)

    app.emit(args.json, data, text)
    _identity_note(app, result.root)
    return 0


def _claude(app: App, args: argparse.Namespace) -> int:
    from memoryd.init.claude import disable_claude, enable_claude, privacy_notice

    if args.sync_folder and not args.claude:
        from memoryd.errors import UsageError

        raise UsageError(
            "--sync-folder goes with --claude", hint="memoryd init --claude --sync-folder DIR"
        )
    if args.claude and args.sync_folder:
        return _claude_sync(app, args)
    if args.claude:
        app.note(privacy_notice(app.env))
        switch = enable_claude(app.paths, app.config, app.env)
    else:
        switch = disable_claude(app.paths, app.config, app.env)
    data = {"folder": str(switch.folder), "enabled": switch.enabled, "changed": switch.changed}
    state = "on" if switch.enabled else "off"
    same = "" if switch.changed else " (it already was)"
    app.emit(args.json, data, f"Claude Code memory indexing is {state}{same}: {switch.folder}")
    return 0


def _claude_sync(app: App, args: argparse.Namespace) -> int:
    from memoryd.init.claude import SYNC_NOTICE, enable_claude_sync, privacy_notice

    folders = [app.cwd / Path(f).expanduser() for f in args.sync_folder]
    app.note(privacy_notice(app.env))
    switch, slugs = enable_claude_sync(app.paths, app.config, app.env, folders)
    app.note(SYNC_NOTICE.format(folders=", ".join(slugs), root=switch.folder))
    data = {"folder": str(switch.folder), "enabled": True, "changed": switch.changed,
            "sync_folders": slugs}  # fmt: skip
    text = f"Claude Code memory indexing is on, synced for: {', '.join(slugs)}"
    app.emit(args.json, data, text)
    return 0
