"""``memoryd status``: what the running daemon is doing (read from its status file)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from memoryd.app import App
from memoryd.commands import add_json
from memoryd.errors import MemorydError


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser("status", help="show the running daemon's status")
    add_json(parser)
    parser.set_defaults(handler=run)


def run(app: App, args: argparse.Namespace) -> int:
    from memoryd.daemon.status import read_status
    from memoryd.extract.report import lines, report
    from memoryd.sync.report import sync_problems

    view = read_status(app.paths)
    status = view.status
    sync = sync_problems(app.config, app.paths)  # conflicts, pauses, quarantine, not pushed
    if args.json:
        data = {
            "running": view.running and not view.stale,
            "stale": view.stale,
            "pid": view.running_pid,
            "status": status.to_json() if status else None,
            "sync": [p.__dict__ for p in sync],
            "extraction": report(app),
        }
        app.emit(True, data, "")
        return 0 if data["running"] else 1
    if view.stale:
        assert status is not None
        raise MemorydError(
            f"the daemon status is stale: pid {status.pid} is gone "
            f"(last update {status.updated_at})",
            hint=f"start it again with 'memoryd run'; its log is {app.paths.log_file}",
        )
    if not view.running or status is None:
        last = ""
        if status is not None and status.stopped_at:
            last = f" (the last one, pid {status.pid}, stopped at {status.stopped_at})"
        raise MemorydError(
            f"no memoryd daemon is running{last}",
            hint="start it with 'memoryd run' or 'memoryd service install'",
        )
    extraction = lines(report(app))
    app.emit(False, None, lambda: "\n".join([render(status, sync), *extraction]))
    return 0


def render(status: Any, sync_items: Sequence[Any] = ()) -> str:
    lines = [f"memoryd is running (pid {status.pid}, since {status.started_at})"]
    for path, root in sorted(status.roots.items()):
        sync = root.last_sync
        said = f": {sync['message']}" if sync and sync.get("message") else ""
        synced = f", last sync {sync['outcome']} at {sync['at']}{said}" if sync else ""
        lines.append(f"  {path}: {root.state}, {root.mode}{synced}")
    if status.last_reconcile:
        rec = status.last_reconcile
        lines.append(f"  last reconcile: {rec['at']} ({rec['ms']} ms)")
    if status.last_batch:
        batch = status.last_batch
        lines.append(f"  last batch: {batch['files']} files in {batch['ms']} ms at {batch['at']}")
    problems = [f"  problem: {text}" for text in status.problems]
    for item in sync_items:
        where = f"{item.root}/{item.path}" if item.path else item.root
        problems.append(f"  sync: {where}: {item.message}")
    lines += problems or ["  no problems"]
    return "\n".join(lines)
