"""``memoryd connect CLIENT``: memoryd's MCP server and hooks into an agent client's config.

``--dry-run`` shows the diff and writes nothing, ``--undo`` puts the files back, ``--list``
says which clients are connected and whether what they run still works.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memoryd.app import App
from memoryd.commands import add_json
from memoryd.connect import CLIENTS

if TYPE_CHECKING:
    from memoryd.connect.clients import Outcome
    from memoryd.connect.ledger import Done
    from memoryd.connect.target import Health, Target

NEEDS = "memoryd connect needs the client to connect"
NEEDS_HINT = "memoryd connect claude-code (or opencode, codex, gemini, cursor); --list shows them"


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser(
        "connect",
        help="add memoryd's MCP server and hooks to an agent client's own config",
        description="Merge memoryd (its MCP server and, where the client has them, its hooks, "
        "with this memoryd's absolute path) into the client's config, keeping every setting "
        "of yours; a backup is kept and --undo puts the files back.",
    )
    parser.add_argument(
        "client", nargs="*", metavar="CLIENT",  # checked in run (argparse: no [] with choices)
        help="claude-code, opencode, codex, gemini or cursor (one or more)",
    )  # fmt: skip
    parser.add_argument("--dry-run", action="store_true", help="show the diff, write nothing")
    parser.add_argument("--undo", action="store_true", help="put the client's files back")
    parser.add_argument(
        "--list", action="store_true", help="which clients are connected, and healthy"
    )
    add_json(parser)
    parser.set_defaults(handler=run)


def run(app: App, args: argparse.Namespace) -> int:
    from memoryd.errors import UsageError

    if args.list:
        if args.client or args.undo or args.dry_run:
            raise UsageError(
                "--list takes no client, --undo or --dry-run", hint="memoryd connect --list"
            )
        return _list(app, args)
    if not args.client:
        raise UsageError(NEEDS, hint=NEEDS_HINT)
    for client in args.client:
        if client not in CLIENTS:
            from memoryd.suggest import did_you_mean

            starts = [c for c in CLIENTS if c.startswith(client.lower())]  # claude, open
            guess = f" (did you mean {starts[0]!r}?)" if len(starts) == 1 else ""
            raise UsageError(
                f"memoryd connect knows no client {client!r}"
                f"{guess or did_you_mean(client, CLIENTS)}",
                hint="memoryd connect " + " | ".join(CLIENTS),
            )
    if args.undo and args.dry_run:
        raise UsageError("--undo and --dry-run do not go together", hint="drop one of them")
    if args.undo:
        return _undo(app, args)
    return _connect(app, args)


def _target(app: App, memoryd: Path | None = None) -> Target:
    from memoryd.connect.clients import running_memoryd
    from memoryd.connect.target import Target

    home = Path(app.env.get("HOME") or os.path.expanduser("~"))
    return Target(home, app.env, memoryd or running_memoryd())


def _connect(app: App, args: argparse.Namespace) -> int:
    from memoryd.connect import clients as connect

    target = _target(app)
    clients = list(dict.fromkeys(args.client))
    outcomes = connect.connect(clients, target, app.paths.state_dir, dry_run=args.dry_run)
    if args.json:
        app.emit(True, [{
            "client": o.client, "memoryd": str(target.memoryd), "dry_run": args.dry_run,
            "files": [{"path": str(c.path), "changed": c.changed, "what": c.what}
                      for c in o.changes],
        } for o in outcomes], "")  # fmt: skip
        return 0
    lines = []
    for outcome in outcomes:
        lines.append(f"memoryd connect {outcome.client}: {outcome.title} runs {target.memoryd}")
        lines += _dry(outcome) if args.dry_run else _written(outcome)
    app.emit(False, None, "\n".join(lines))
    return 0


def _dry(outcome: Outcome) -> list[str]:
    from memoryd.connect.clients import diff

    lines = []
    for change in outcome.changes:
        same = f"  {change.path}: unchanged ({change.what} already there)"
        lines.append(diff(change).rstrip("\n") if change.changed else same)
    lines.append("dry run: nothing written; run it without --dry-run to write this")
    return lines


def _written(outcome: Outcome) -> list[str]:
    lines = []
    changes = {c.path: c for c in outcome.changes}
    for done in outcome.done:
        change = changes[done.path]
        if done.action == "unchanged":
            lines.append(f"  {done.path}: unchanged ({change.what} already there)")
        else:
            kept = f"backup: {done.backup}" if done.backup else "it was new; --undo deletes it"
            lines.append(f"  wrote {done.path}: {change.what} ({kept})")
    if all(d.action == "unchanged" for d in outcome.done):
        lines.append(f"{outcome.title} was already connected; nothing written")
    else:
        lines.append(f"{outcome.title} is connected: {outcome.after}")
        lines.append(f"undo: memoryd connect {outcome.client} --undo")
    return lines


def _undo(app: App, args: argparse.Namespace) -> int:
    from memoryd.connect import clients as connect
    from memoryd.errors import MemorydError

    clients = list(dict.fromkeys(args.client))
    for client in clients:
        if not connect.connected(client, app.paths.state_dir):
            raise MemorydError(
                f"memoryd connect {client} has written nothing here, so there is nothing to undo",
                hint="memoryd connect --list shows what is connected (a hand-made entry is "
                "yours to remove)",
            )
    lines: list[str] = []
    files: list[dict[str, str]] = []
    for client in clients:
        done = connect.undo(client, _target(app, Path("memoryd")), app.paths.state_dir)
        lines += [_undone(d) for d in done]
        lines.append(f"{connect.module(client).TITLE} no longer runs memoryd "
                     f"(again: memoryd connect {client})")  # fmt: skip
        files += [{"path": str(d.path), "action": d.action} for d in done]
    app.emit(args.json, {"files": files}, "\n".join(lines))
    return 0


def _undone(done: Done) -> str:
    if done.action == "restored":
        return f"  restored {done.path} byte for byte from {done.backup}"
    if done.action == "deleted" and done.backup is None:
        return f"  deleted {done.path} (memoryd connect made it)"
    if done.action == "deleted":
        return f"  deleted {done.path} (it had changed since: kept as {done.backup})"
    if done.action == "removed-entries":
        return (f"  {done.path} changed since memoryd connect wrote it: took memoryd's entries "
                f"out (the file as it was: {done.backup})")  # fmt: skip
    return f"  {done.path} is gone already"


def _list(app: App, args: argparse.Namespace) -> int:
    from memoryd.connect import clients as connect

    states = connect.health(_target(app))
    if args.json:
        app.emit(True, [_as_dict(h) for h in states], "")
    else:
        app.emit(False, None, "\n".join(_line(h) for h in states))
    return 1 if any(h.connected and h.problems for h in states) else 0


def _as_dict(health: Health) -> dict[str, Any]:
    return {
        "client": health.client, "connected": health.connected,
        "healthy": health.connected and not health.problems,
        "files": [str(f) for f in health.files], "problems": list(health.problems),
    }  # fmt: skip


def _line(health: Health) -> str:
    name = f"{health.client:<12}"
    if not health.connected:
        return f"{name}not connected (memoryd connect {health.client})"
    files = ", ".join(str(f) for f in health.files)
    if not health.problems:
        return f"{name}connected, healthy ({files})"
    return (f"{name}connected, broken: {'; '.join(health.problems)} "
            f"(fix: memoryd connect {health.client})")  # fmt: skip
