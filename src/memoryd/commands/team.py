"""``memoryd team``: the team roots (``log``, ``leave``; see docs/team.md)."""

from __future__ import annotations

import argparse
from typing import Any

from memoryd.app import App
from memoryd.commands import add_json


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser("team", help="the team memory roots (docs/team.md)")
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    log = actions.add_parser(
        "log", help="what changed in the team roots since you last looked, and the proposals "
        "waiting for a person"
    )
    log.add_argument("name", metavar="NAME", nargs="?", help="one team (default: every team)")
    log.add_argument("--all", action="store_true", help="the whole history; the mark stays")
    add_json(log)
    log.set_defaults(handler=run_log)
    leave = actions.add_parser(
        "leave", help="stop syncing a team root and remove it from config.yaml; its files stay"
    )
    leave.add_argument("name", metavar="NAME")
    add_json(leave)
    leave.set_defaults(handler=run_leave)


def run_log(app: App, args: argparse.Namespace) -> int:
    from memoryd.errors import UsageError
    from memoryd.team_log import read_log, team_roots

    roots = team_roots(app.config, args.name)
    if not roots:
        which = f"named {args.name!r} " if args.name else ""
        raise UsageError(
            f"no team root {which}is configured",
            hint="memoryd init --team NAME --remote URL joins a team's memory",
        )
    logs = [read_log(root, app.paths.state_dir, everything=args.all) for root in roots]

    def text() -> str:
        lines = []
        for log in logs:
            lines.append(f"team {log.team} ({log.root}): {len(log.changes)} change(s)")
            for change in log.changes:
                lines.append(f"  {change.date}  {change.author}  {change.subject}")
                lines += [f"      {name}" for name in change.files]
            for memory_id, who in log.waiting:
                lines.append(
                    f"  waiting for a person: {memory_id}, {who} (memoryd accept {memory_id})"
                )
        return "\n".join(lines)

    app.emit(args.json, [log.as_dict() for log in logs], text)
    return 0


def run_leave(app: App, args: argparse.Namespace) -> int:
    from memoryd.init.team import leave_team

    root = leave_team(app, args.name)
    data = {"team": root.team, "root": str(root.path), "kept": True}
    text = (
        f"left team {root.team}: {root.path} no longer syncs and is no longer searched; "
        "its files are kept (delete the folder yourself if you want them gone)"
    )
    app.emit(args.json, data, text)
    return 0
