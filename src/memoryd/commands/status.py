"""``memoryd status``: what the running daemon is doing (read from its status file).

A broken config.yaml does not hide the daemon: it keeps running on the last good
config, so its status is shown with the config's error among the problems (the
sync and extraction parts, which read the config, are left out until it is fixed).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memoryd.app import App
from memoryd.commands import add_json
from memoryd.errors import ConfigError, MemorydError


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser("status", help="show the running daemon's status")
    add_json(parser)
    parser.set_defaults(handler=run)


def run(app: App, args: argparse.Namespace) -> int:
    from memoryd.daemon.status import REWRITTEN, read_status, unreadable_status
    from memoryd.extract_report import lines, report
    from memoryd.sync.report import sync_problems

    view = read_status(app.paths)
    status = view.status
    try:
        sync = sync_problems(app.config, app.paths)  # conflicts, pauses, quarantine, not pushed
        extracting: dict[str, Any] | None = report(app)
        broken = None
    except ConfigError as exc:  # the daemon runs on: show what it says, and this
        sync, extracting, broken = [], None, exc
    if args.json:
        data: dict[str, Any] = {
            "running": view.running and not view.stale,
            "stale": view.stale,
            "pid": view.running_pid,
            "status": status.to_json() if status else None,
            "sync": [p.__dict__ for p in sync],
            "extraction": extracting,
        }
        if broken is not None:
            data["config_error"] = broken.message
        if data["running"] and status is None:
            data["status_error"] = f"{unreadable_status(app.paths, view)}; {REWRITTEN}"
        app.emit(True, data, "")
        return 0 if data["running"] else 1
    if view.stale:
        assert status is not None
        raise MemorydError(
            f"the daemon status is stale: pid {status.pid} is gone "
            f"(last update {status.updated_at})",
            hint=f"start it again with 'memoryd run'; its log is {app.paths.log_file}",
        )
    if view.running and status is None:  # deleted or garbled under the daemon: it runs
        said = [
            f"memoryd is running (pid {view.running_pid})",
            f"  problem: {unreadable_status(app.paths, view)}; {REWRITTEN}",
        ]
        app.emit(False, None, lambda: "\n".join(said))
        return 0
    if not view.running or status is None:
        last = ""
        if status is not None and status.stopped_at:
            last = f" (the last one, pid {status.pid}, stopped at {status.stopped_at})"
        if broken is not None:  # 'memoryd run' would stop on it: fixing it comes first
            raise ConfigError(
                f"no memoryd daemon is running{last}, and {broken.message}", hint=broken.hint
            )
        raise MemorydError(
            f"no memoryd daemon is running{last}",
            hint="start it with 'memoryd run' or 'memoryd service install'",
        )
    extraction = lines(extracting) if extracting is not None else []
    roots = [] if broken is not None else [r.path for r in app.config.roots]
    more = [*_config_problems(status, broken), *_disk_problems(app, roots)]
    app.emit(False, None, lambda: "\n".join([render(status, sync, more), *extraction]))
    return 0


def _disk_problems(app: App, roots: list[Path]) -> list[str]:
    """A full disk, which the daemon cannot write into its status file itself."""
    from memoryd import diskspace

    _disks, low = diskspace.low_disks([app.paths.cache_dir, app.paths.state_dir, *roots])
    if not low:
        return []
    return [f"{diskspace.describe(low)}: {diskspace.CONSEQUENCE} (df -h {low[0][0]})"]


def _config_problems(status: Any, broken: ConfigError | None) -> list[str]:
    """The broken config's line, unless the daemon already reports it (it does once it
    tried to reload)."""
    if broken is None or any(p.startswith("config.yaml") for p in status.problems):
        return []
    return [f"config.yaml: {broken.message} (the daemon runs on the last good one)"]


def render(status: Any, sync_items: Sequence[Any] = (), more: Sequence[str] = ()) -> str:
    lines = [f"memoryd is running (pid {status.pid}, since {status.started_at})"]
    # a cycle's error is said once, on its sync line with the fix, not also on its root's
    told = {str(item.root) for item in sync_items if item.code == "sync.error"}
    for path, root in sorted(status.roots.items()):
        sync = root.last_sync
        said = f": {sync['message']}" if sync and sync.get("message") and path not in told else ""
        synced = f", last sync {sync['outcome']} at {sync['at']}{said}" if sync else ""
        lines.append(f"  {path}: {root.state}, {root.mode}{synced}")
    if status.last_reconcile:
        rec = status.last_reconcile
        lines.append(f"  last reconcile: {rec['at']} ({rec['ms']} ms)")
    if status.last_batch:
        batch = status.last_batch
        lines.append(f"  last batch: {batch['files']} files in {batch['ms']} ms at {batch['at']}")
    # a cycle's error is in the root's sync state too, with its fix: said once, there
    failed = tuple(f"sync of {item.root}: " for item in sync_items if item.code == "sync.error")
    kept = [text for text in status.problems if not (failed and text.startswith(failed))]
    problems = [f"  problem: {text}" for text in [*kept, *more]]
    for item in _grouped(sync_items):
        where = f"{item.root}/{item.path}" if item.path else item.root
        problems.append(f"  sync: {where}: {item.message}")
        if item.code == "sync.error":  # what to do: only the cycle that failed could tell
            problems.append(f"    fix: {item.fix}")
    lines += problems or ["  no problems"]
    return "\n".join(lines)


def _grouped(items: Sequence[Any]) -> list[Any]:
    """The sync problems, with a root's conflicts as one line when there are more than a few
    (fifty files edited on two devices were fifty lines); ``memoryd conflicts`` lists them."""
    from memoryd.conflicts import CONFLICTS_FIX, FEW, first_few
    from memoryd.sync.report import SyncProblem

    conflicts: dict[str, list[Any]] = {}
    for item in items:
        if item.code == "sync.conflict":
            conflicts.setdefault(item.root, []).append(item)
    shown: list[Any] = []
    for item in items:
        group = conflicts.get(item.root, []) if item.code == "sync.conflict" else [item]
        if len(group) <= FEW:
            shown.append(item)
        elif item is group[0]:
            names = first_few(sorted(c.path for c in group))
            message = f"{len(group)} sync conflicts: {names}; {CONFLICTS_FIX}"
            shown.append(SyncProblem(item.root, "sync.conflicts", None, message, CONFLICTS_FIX))
    return shown
