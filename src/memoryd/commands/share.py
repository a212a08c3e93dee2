"""``memoryd share ID --team NAME``: move a personal memory into a team root, shown first."""

from __future__ import annotations

import argparse
from typing import Any

from memoryd.app import App
from memoryd.commands import add_json


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser(
        "share", help="move a personal memory into a team root (shows the file; --yes writes it)"
    )
    parser.add_argument("id", metavar="ID")
    parser.add_argument("--team", required=True, metavar="NAME", help="the team root")
    parser.add_argument("--yes", action="store_true", help="write it (the next sync pushes it)")
    add_json(parser)
    parser.set_defaults(handler=run)


def run(app: App, args: argparse.Namespace) -> int:
    from memoryd.agent.caller import refuse_agent
    from memoryd.agent.share import share

    refuse_agent(
        app.env, f"share {args.id!r}", "moves a memory to the team",
        f"memoryd share {args.id} --team {args.team}",
    )  # fmt: skip
    done = share(app, args.id, args.team, confirmed=args.yes)
    data = {"id": done.id, "team": done.team, "from": str(done.source), "to": str(done.path),
            "written": done.written, "text": done.data.decode("utf-8")}  # fmt: skip
    if done.written:
        text = f"shared {done.id} with team {done.team}: {done.path} (the next sync pushes it)"
    else:
        text = (
            f"team {done.team} would get this file as {done.path}:\n"
            f"{done.data.decode('utf-8').rstrip()}\n"
            f"run 'memoryd share {done.id} --team {done.team} --yes' to move it there"
        )
    app.emit(args.json, data, text)
    return 0
