"""``memoryd doctor``: why sync does not work, and the fix, without reading a log.

Each check is a small function of a :class:`Machine` returning a :class:`Verdict`
(see :mod:`memoryd.doctor.verdict`). Git-facing checks (identity, remote, push auth)
live in :mod:`memoryd.doctor.git`. Any ``fail`` makes ``memoryd doctor`` exit 1; a
``warn`` does not.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from memoryd.config.loader import load_config
from memoryd.config.sections import Config, RootConfig
from memoryd.doctor import git as doctor_git
from memoryd.doctor.verdict import STATUSES, Machine, Verdict, fail, ok, warn
from memoryd.errors import ConfigError
from memoryd.paths import Paths


def synced(root: RootConfig) -> bool:
    return root.sync.commit or root.sync.push or root.sync.pull


def machine_config(paths: Paths) -> tuple[Config, Verdict | None]:
    """The config the checks read, and a failed ``config`` check when config.yaml does not
    load: then no root is known (their checks wait for the fix), and the checks that need
    no config (git, index, service, daemon) still run, since the doctor is where a user
    with a broken file turns."""
    try:
        return load_config(paths), None
    except ConfigError as exc:
        fix = exc.hint or f"edit {paths.config_file} (see docs/config.md)"
        return Config(), fail("config", exc.message, fix, str(paths.config_file))


def run_checks(ctx: Machine, config_check: Verdict | None = None) -> list[Verdict]:
    git = doctor_git.check_git(ctx)
    checks = [git] if config_check is None else [git, config_check]
    for root in ctx.config.roots:
        here = check_root(ctx, root)
        checks.append(here)
        if here.status == "ok" and git.status == "ok" and synced(root):
            checks += doctor_git.root_checks(ctx, root)
    if config_check is None:
        checks.append(check_inotify(ctx))
    else:  # the folders to watch are the roots', unknown until the file loads
        checks.append(Verdict("inotify", "skip", "no roots known until config.yaml loads"))
    for check in (check_disk, check_private, check_index, check_service, check_daemon):
        checks.append(check(ctx))
    return checks + check_clients(ctx)


def failed(checks: list[Verdict]) -> bool:
    return any(check.status == "fail" for check in checks)


def check_root(ctx: Machine, root: RootConfig) -> Verdict:
    from memoryd.roots import git_toplevel

    path, subject = root.path, str(root.path)
    if not path.is_dir():
        init = "memoryd init --project" if root.scope == "project" else "memoryd init"
        fix = f"run '{init}', or remove it from {ctx.paths.config_file}"
        return fail("root", f"{path} does not exist", fix, subject)
    if not os.access(path, os.W_OK | os.X_OK):
        fix = f"chown -R $USER {path} (or fix its permissions)"
        return fail("root", f"{path} is not writable", fix, subject)
    if synced(root) and git_toplevel(path) is None:
        fix = f"git -C {path} init && git -C {path} remote add {root.sync.remote} <url>"
        return fail("root", f"{path} syncs but is not inside a git repository", fix, subject)
    if synced(root):
        refused = doctor_git.refusal(ctx, path)
        if refused is not None:  # every check after this one would read git's silence wrong
            said, fix = refused
            return fail("root", f"{path}: git will not work in it: {said}", fix, subject)
    where = "in a git repository" if synced(root) else "sync off"
    return ok("root", f"{path}: present, writable, {where}", subject)


def count_folders(roots: list[Path]) -> int:
    """Folders a recursive watch of ``roots`` needs (every one, .git included)."""
    return sum(1 for root in roots for _ in os.walk(root))  # os.walk never follows links


def check_inotify(ctx: Machine) -> Verdict:
    try:
        limit = int(ctx.inotify_file.read_text().strip())
    except (OSError, ValueError):
        detail = f"no inotify watch limit at {ctx.inotify_file} (not Linux)"
        return Verdict("inotify", "skip", detail)
    needed = count_folders([r.path for r in ctx.config.roots if r.path.is_dir()])
    detail = f"memoryd watches {needed} folders; the limit is {limit} for all your programs"
    if needed * 2 > limit:
        fix = (
            "echo fs.inotify.max_user_watches=524288 | sudo tee /etc/sysctl.d/60-memoryd.conf"
            " && sudo sysctl --system (until then memoryd falls back to polling)"
        )
        return fail("inotify", detail + ", and memoryd alone needs over half", fix)
    return ok("inotify", detail)


def check_disk(ctx: Machine) -> Verdict:
    """Free space where memoryd writes (see :mod:`memoryd.diskspace`): the daemon cannot
    rewrite its status file on a full disk to say so."""
    from memoryd import diskspace

    folders = [ctx.paths.cache_dir, ctx.paths.state_dir, *(r.path for r in ctx.config.roots)]
    disks, low = diskspace.low_disks(folders, ctx.free_bytes)
    if not low:
        detail = f"{disks} disk(s) hold memoryd's folders, none with less than 16 MiB free"
        return ok("disk", detail)
    detail = f"{diskspace.describe(low)}: {diskspace.CONSEQUENCE}"
    return fail("disk", detail, f"free some space on it (df -h {low[0][0]})")


def check_private(ctx: Machine) -> Verdict:
    """memoryd's folders, database and roots closed to other users (see memoryd.privacy)."""
    from memoryd.privacy import exposed

    found = exposed(ctx.paths, [r.path for r in ctx.config.roots])
    if not found:
        return ok("private", "memoryd's folders, its database and the roots are yours alone")
    detail = "; ".join(f"{e.path}: {e.message}" for e in found)
    return warn("private", detail, " && ".join(e.fix for e in found))


def check_index(ctx: Machine) -> Verdict:
    """Read-only first (opening the index would quietly move a bad one aside), then open it."""
    from memoryd.index import open_index
    from memoryd.index.schema import APPLICATION_ID

    db = ctx.paths.index_db
    if not db.exists():
        return ok("index", f"{db} not built yet (memoryd builds it on first use)")
    fix = f"delete {db}; memoryd rebuilds it from the files (they are the truth)"
    try:
        conn = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True, timeout=5)
        try:
            rows = conn.execute("PRAGMA quick_check").fetchall()
            app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return fail("index", f"{db} cannot be read: {exc}", fix)
    verdict = "; ".join(str(row[0]) for row in rows[:3])
    if verdict != "ok":
        return fail("index", f"{db} is damaged: {verdict}", fix)
    if app_id not in (0, APPLICATION_ID):
        return fail("index", f"{db} is not a memoryd index (application_id {app_id})", fix)
    with open_index(ctx.paths) as index:
        count = index.count()
    return ok("index", f"{db}: {count} memory files indexed, passes quick_check")


def check_service(ctx: Machine) -> Verdict:
    from memoryd.daemon.manager import status
    from memoryd.runlock import running_pid

    state = status(ctx.manager, ctx.env)
    where = f"{ctx.manager} unit {state.path}"
    install, logs = "memoryd service install", _LOGS[ctx.manager]
    if state.running is None:  # the manager itself is missing or unreachable
        prefix = f"{where} installed" if state.installed else f"no {where}"
        return fail("service", f"{prefix}; {state.detail}", state.hint or logs)
    if not state.installed:
        pid = running_pid(ctx.paths.lock_file)
        if pid is None:
            return fail("service", f"no {where}", install)
        return warn("service", f"no {where}; daemon pid {pid} runs without one", install)
    if not state.ours:
        return warn("service", f"{where} was not written by memoryd")
    program = _unit_program(ctx.manager, state.path)
    if program is not None and not os.path.exists(program):  # it runs now, at best
        gone = f"{where} runs {program}, which is gone (a moved or recreated virtualenv?)"
        return fail("service", gone, f"{install} (writes the unit for the memoryd run now)")
    if not state.running:
        return fail("service", f"{where} installed but not running ({state.detail})", logs)
    return ok("service", f"{where} running (pid {state.pid})")


def _unit_program(manager: str, path: Path) -> str | None:
    from memoryd.daemon.manager import read_unit
    from memoryd.daemon.units import unit_program

    text = read_unit(path)
    return None if text is None else unit_program(manager, text)


_LOGS = {
    "systemd": "journalctl --user -u memoryd says why; then systemctl --user restart memoryd",
    "launchd": "launchd.err.log in memoryd's log folder says why; then memoryd service install",
}


def check_daemon(ctx: Machine) -> Verdict:
    from memoryd.daemon.status import REWRITTEN, read_status, unreadable_status

    view = read_status(ctx.paths)
    status, pid = view.status, view.running_pid
    start = "memoryd service install (or memoryd run)"
    if view.stale and status is not None:
        gone = f"pid {status.pid} is gone (last update {status.updated_at})"
        detail = f"the daemon status is stale: {gone}"
        return fail("daemon", detail, f"{start}; the old daemon's log is {ctx.paths.log_file}")
    if pid is None:
        return fail("daemon", "no memoryd daemon is running", start)
    if status is None:
        detail = f"daemon pid {pid} is running, but {unreadable_status(ctx.paths, view)}"
        return warn("daemon", detail, REWRITTEN)
    if status.problems:
        detail = f"daemon pid {pid} reports: " + "; ".join(status.problems)
        return fail("daemon", detail, "memoryd status shows what it is doing")
    return ok("daemon", f"daemon pid {pid} running, status updated {status.updated_at}")


def check_clients(ctx: Machine) -> list[Verdict]:
    """One verdict per agent client whose config runs memoryd (``memoryd connect``)."""
    from memoryd.connect.clients import health, running_memoryd
    from memoryd.connect.target import Target

    try:
        memoryd = running_memoryd()
    except ConfigError:
        memoryd = Path("memoryd")  # only the OpenCode plugin's text depends on it
    home = Path(ctx.env.get("HOME") or os.path.expanduser("~"))
    verdicts = []
    for state in health(Target(home, ctx.env, memoryd)):
        if not state.connected:
            continue
        if state.problems:
            fix = f"memoryd connect {state.client}"
            detail = f"{state.client}: " + "; ".join(state.problems)
            verdicts.append(fail("client", detail, fix, state.client))
        else:
            detail = f"{state.client}: connected, runs memoryd from its config"
            verdicts.append(ok("client", detail, state.client))
    return verdicts


def render(checks: list[Verdict]) -> str:
    """The human report: one line a check, its fix under it, a count at the end."""
    lines = []
    for check in checks:
        label = "ok" if check.status == "ok" else check.status.upper()
        lines.append(f"{label:<5} {check.name:<9} {check.detail}")
        if check.fix and check.status in ("fail", "warn"):
            lines.append(f"{'':<15} fix: {check.fix}")
    counts = [f"{n} {s}" for s in STATUSES if (n := sum(c.status == s for c in checks))]
    lines.append(", ".join(counts))
    return "\n".join(lines)
