"""``memoryd team``: the team roots (``leave``; see docs/team.md)."""

from __future__ import annotations

import argparse
from typing import Any

from memoryd.app import App
from memoryd.commands import add_json


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser("team", help="the team memory roots (docs/team.md)")
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    leave = actions.add_parser(
        "leave", help="stop syncing a team root and remove it from config.yaml; its files stay"
    )
    leave.add_argument("name", metavar="NAME")
    add_json(leave)
    leave.set_defaults(handler=run_leave)


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
