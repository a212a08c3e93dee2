"""``memoryd service install|uninstall|status``: the daemon as a systemd or launchd user service.

Units live under ``$HOME`` (``~/.config/systemd/user/memoryd.service`` or
``~/Library/LaunchAgents/dev.memoryd.daemon.plist``). Install is idempotent and
refuses to replace a unit memoryd did not write; uninstall stops, disables and
removes it. Every manager command goes through :func:`_run`, and ``dry_run``
plans without writing or running anything but read-only queries.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from memoryd.daemon import units
from memoryd.errors import MemorydError, Refused
from memoryd.fsutil import atomic_write, private_dirs
from memoryd.paths import Paths

log = logging.getLogger(__name__)
COMMAND_TIMEOUT_S = 60.0


class ServiceError(MemorydError):
    """systemctl or launchctl is missing or failed."""


@dataclass(frozen=True)
class Step:
    argv: tuple[str, ...]
    tolerate: bool = False  # a failure here is expected in some states (e.g. not loaded)

    def __str__(self) -> str:
        return " ".join(self.argv)


@dataclass
class Outcome:
    manager: str
    path: Path
    text: str
    action: str  # installed | updated | unchanged | removed | absent
    steps: list[Step] = field(default_factory=list)
    dry_run: bool = False


@dataclass(frozen=True)
class ServiceStatus:
    manager: str
    path: Path
    installed: bool  # the unit file exists
    ours: bool  # ...and memoryd wrote it
    enabled: bool | None  # None: the manager could not be asked
    running: bool | None
    pid: int | None
    detail: str
    hint: str = ""  # the next step when the manager could not be asked


def detect_manager(platform: str = sys.platform) -> str:
    return "launchd" if platform == "darwin" else "systemd"


def unit_path(manager: str, env: Mapping[str, str]) -> Path:
    home = Path(env.get("HOME") or Path.home())
    if manager == "launchd":
        return home / "Library" / "LaunchAgents" / units.LAUNCHD_PLIST
    return home / ".config" / "systemd" / "user" / units.SYSTEMD_UNIT


def render(manager: str, env: Mapping[str, str], paths: Paths, python: str | None = None) -> str:
    """The unit text for this interpreter and environment."""
    python = python or sys.executable
    if not python or not os.path.isabs(python):
        raise ServiceError(
            f"cannot tell which python runs memoryd (got {python!r})",
            hint="run memoryd through its installed script or an absolute interpreter path",
        )
    environment = units.service_environment(env, manager)
    if manager == "launchd":
        return units.render_launchd(python, environment, paths.log_dir)
    return units.render_systemd(python, environment)


def read_unit(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):  # a file where a folder on the way goes
        return None


def _refuse_foreign(path: Path, text: str | None, verb: str) -> None:
    if text is not None and units.MARKER not in text:
        raise Refused(
            f"{path} exists and memoryd did not write it, so memoryd leaves it alone",
            hint=f"move it aside (mv {path} {path}.mine) and run 'memoryd service {verb}' again",
        )


def install(manager: str, env: Mapping[str, str], paths: Paths, dry_run: bool = False) -> Outcome:
    path = unit_path(manager, env)
    text = render(manager, env, paths)
    old = read_unit(path)
    _refuse_foreign(path, old, "install")
    action = "installed" if old is None else "unchanged" if old == text else "updated"
    loaded = manager == "launchd" and _launchd_loaded(env)
    if manager == "launchd":
        steps = _launchd_install_steps(path, action, loaded)
    else:
        steps = _systemd_install_steps(action)
    outcome = Outcome(manager, path, text, action, steps, dry_run)
    if dry_run:
        return outcome
    private_dirs(paths.log_dir)
    if action != "unchanged":
        _write_unit(path, text)
    try:
        _run_all(steps, env, manager)
    except ServiceError as exc:
        if action == "unchanged":
            raise
        undone = _undo_install(manager, path, old, env, loaded)
        raise ServiceError(f"{exc.message}; {undone}", hint=exc.hint) from None
    return outcome


def _write_unit(path: Path, text: str) -> None:
    try:
        atomic_write(path, text.encode("utf-8"))
    except OSError as exc:
        on = f"{exc.filename}: " if exc.filename and exc.filename != str(path) else ""
        raise ServiceError(
            f"cannot write {path}: {on}{exc.strerror or exc}",
            hint=f"make {path.parent} a folder you can write to, then run "
            "'memoryd service install' again",
        ) from None


def _undo_install(
    manager: str, path: Path, old: str | None, env: Mapping[str, str], loaded: bool
) -> str:
    """Put back what a failed install found: no unit at all, or the previous one.

    A unit file the manager never took (no user bus, a failed bootstrap) was a half
    install: ``service status`` and the doctor called it installed while nothing ran it.
    Every step is best effort; the failure the user is told of is the install's own.
    """
    before, after = _undo_steps(manager, path, fresh=old is None, loaded=loaded)
    for step in before:
        with contextlib.suppress(ServiceError):
            _run(step, env, manager)
    try:
        if old is None:
            path.unlink(missing_ok=True)
        else:
            atomic_write(path, old.encode("utf-8"))
    except OSError as exc:
        log.warning("cannot put %s back: %s", path, exc)
        return f"{path} could not be put back ({exc.strerror or exc})"
    for step in after:
        with contextlib.suppress(ServiceError):
            _run(step, env, manager)
    return "nothing was installed" if old is None else "the previous unit was put back"


def _undo_steps(
    manager: str, path: Path, fresh: bool, loaded: bool
) -> tuple[list[Step], list[Step]]:
    """The manager commands run before and after the unit file is put back."""
    if manager == "launchd":
        target = _launchd_target()
        before = [Step(("launchctl", "bootout", target), tolerate=True)]
        if fresh:
            return [*before, Step(("launchctl", "disable", target), tolerate=True)], []
        if not loaded:
            return before, []
        return before, [Step(("launchctl", "bootstrap", _launchd_domain(), str(path)), True)]
    reload = [Step(_systemctl("daemon-reload").argv, tolerate=True)]
    if not fresh:
        return [], reload
    return [Step(_systemctl("disable", "--now", units.SYSTEMD_UNIT).argv, tolerate=True)], reload


def _systemd_install_steps(action: str) -> list[Step]:
    # Reload even when unchanged: a previous install may have written the file and then
    # failed before systemd read it.
    steps = [_systemctl("daemon-reload")]
    if action == "updated":
        steps.append(_systemctl("try-restart", units.SYSTEMD_UNIT))  # only if it runs
    steps.append(_systemctl("enable", "--now", units.SYSTEMD_UNIT))
    return steps


def _launchd_install_steps(path: Path, action: str, loaded: bool) -> list[Step]:
    target = _launchd_target()
    if loaded and action == "unchanged":
        return [Step(("launchctl", "kickstart", target))]  # starts it only if not running
    steps = []
    if loaded:
        steps.append(Step(("launchctl", "bootout", target), tolerate=True))
    steps.append(Step(("launchctl", "enable", target)))
    steps.append(Step(("launchctl", "bootstrap", _launchd_domain(), str(path))))
    return steps


def uninstall(manager: str, env: Mapping[str, str], paths: Paths, dry_run: bool = False) -> Outcome:
    path = unit_path(manager, env)
    old = read_unit(path)
    _refuse_foreign(path, old, "uninstall")
    if old is None:
        return Outcome(manager, path, "", "absent", [], dry_run)
    if manager == "launchd":
        target = _launchd_target()
        before = [Step(("launchctl", "bootout", target), tolerate=True)]
        after = [Step(("launchctl", "disable", target))]
    else:
        before = [_systemctl("disable", "--now", units.SYSTEMD_UNIT)]
        after = [
            _systemctl("daemon-reload"),
            Step(_systemctl("reset-failed", units.SYSTEMD_UNIT).argv, tolerate=True),
        ]
    outcome = Outcome(manager, path, old, "removed", [*before, *after], dry_run)
    if not dry_run:
        _run_all(before, env, manager)
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        _run_all(after, env, manager)
    return outcome


def status(manager: str, env: Mapping[str, str]) -> ServiceStatus:
    path = unit_path(manager, env)
    text = read_unit(path)
    installed, ours = text is not None, text is not None and units.MARKER in text
    state: tuple[bool | None, bool | None, int | None, str]
    try:
        state = _launchd_state(env) if manager == "launchd" else _systemd_state(env)
    except ServiceError as exc:
        enabled, running, pid, detail = None, None, None, exc.message
        return ServiceStatus(
            manager, path, installed, ours, enabled, running, pid, detail, exc.hint or ""
        )
    enabled, running, pid, detail = state
    return ServiceStatus(manager, path, installed, ours, enabled, running, pid, detail)


def _systemd_state(env: Mapping[str, str]) -> tuple[bool, bool, int | None, str]:
    props = "LoadState,ActiveState,SubState,UnitFileState,MainPID"
    done = _run(_systemctl("show", units.SYSTEMD_UNIT, f"--property={props}"), env, "systemd")
    values = dict(line.partition("=")[::2] for line in done.stdout.splitlines() if "=" in line)
    pid = int(values.get("MainPID", "0") or 0) or None
    state = f"{values.get('ActiveState', '?')} ({values.get('SubState', '?')})"
    enabled = values.get("UnitFileState") == "enabled"
    return enabled, values.get("ActiveState") == "active", pid, state


def _launchd_state(env: Mapping[str, str]) -> tuple[bool, bool, int | None, str]:
    done = _run(Step(("launchctl", "print", _launchd_target()), tolerate=True), env, "launchd")
    if done.returncode != 0:
        return False, False, None, "not loaded"
    fields: dict[str, str] = {}
    for line in done.stdout.splitlines():
        key, sep, value = line.strip().partition(" = ")
        if sep and key in ("state", "pid"):
            fields.setdefault(key, value.strip())
    pid_text = fields.get("pid", "")
    pid = int(pid_text) if pid_text.isdigit() else None
    return True, fields.get("state") == "running", pid, fields.get("state", "loaded")


def _launchd_loaded(env: Mapping[str, str]) -> bool:
    if shutil.which("launchctl", path=env.get("PATH")) is None:
        return False
    done = _run(Step(("launchctl", "print", _launchd_target()), tolerate=True), env, "launchd")
    return done.returncode == 0


def _systemctl(*args: str) -> Step:
    return Step(("systemctl", "--user", *args))


def _launchd_domain() -> str:
    return f"gui/{os.getuid()}"


def _launchd_target() -> str:
    return f"{_launchd_domain()}/{units.LABEL}"


def _run_all(steps: list[Step], env: Mapping[str, str], manager: str) -> None:
    for step in steps:
        _run(step, env, manager)


def _run(step: Step, env: Mapping[str, str], manager: str) -> subprocess.CompletedProcess[str]:
    log.info("running %s", step)
    try:
        done = subprocess.run(
            list(step.argv),
            capture_output=True,
            text=True,
            env=dict(env),
            timeout=COMMAND_TIMEOUT_S,
            check=False,
        )
    except FileNotFoundError:
        raise ServiceError(f"{step.argv[0]} not found on PATH", hint=_NO_MANAGER[manager]) from None
    except subprocess.TimeoutExpired:
        raise ServiceError(f"'{step}' did not answer in {COMMAND_TIMEOUT_S:.0f} s") from None
    if done.returncode != 0 and not step.tolerate:
        why = (done.stderr or done.stdout).strip().splitlines()
        raise ServiceError(
            f"'{step}' failed (exit {done.returncode}): {why[0] if why else 'no output'}",
            hint=_FAILED[manager],
        )
    return done


_NO_MANAGER = {
    "systemd": "this machine has no systemd; run 'memoryd run' under your own supervisor "
    "('memoryd service install --dry-run' shows the unit it would use)",
    "launchd": "launchctl is macOS only; on Linux use --manager systemd",
}
_FAILED = {
    "systemd": "is your user manager running? Over SSH run 'loginctl enable-linger $USER' and "
    "log in again; 'journalctl --user -u memoryd' shows the service log",
    "launchd": f"'launchctl print gui/{os.getuid()}/{units.LABEL}' and launchd.err.log in "
    "memoryd's log folder say why",
}
