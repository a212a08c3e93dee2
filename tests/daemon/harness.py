"""Running the real daemon in tests, and the two truths it must converge to.

``settled`` is the "Done when" check: the index equals a full scan of the disk
(into a fresh database) and every compiled file equals a fresh compile.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from memoryd.app import App
from memoryd.compile.writer import compile_root
from memoryd.config.loader import load_config
from memoryd.daemon.status import Status, read_status
from memoryd.index import open_index, reconcile
from memoryd.paths import resolve_paths
from memoryd.recall_client import SOCKET_NAME

# How long a condition may take to come true. Generous on purpose: a passing condition
# returns at once, and CI's two cores may be shared with a whole suite's processes.
SETTLE_S = 60.0


def wait_until(cond: Callable[[], bool], timeout: float = SETTLE_S, step: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(step)
    return cond()


def memory(summary: str, body: str = "body", kind: str = "fact") -> str:
    return f"---\nkind: {kind}\nsummary: {summary}\n---\n{body}\n"


def save(path: Path, text: str) -> None:
    """Save ``path`` as an editor does atomically: one rename, so one event and one batch.

    ``write_text`` truncates, then writes: a test stalled between the two for longer than
    the daemon's quiet_ms (150 ms; a loaded machine) gives two batches, two compiles.
    """
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def indexed(app: App) -> set[tuple[str, str]]:
    with open_index(app.paths) as db:
        return {(str(r.path), r.hash) for r in db.rows()}


def scanned(app: App, scratch: Path) -> set[tuple[str, str]]:
    paths = dataclasses.replace(app.paths, cache_dir=scratch)
    config = load_config(app.paths)
    with open_index(paths) as db:
        reconcile(db, config)
        rows = {(str(r.path), r.hash) for r in db.rows()}
    (scratch / paths.index_db.name).unlink(missing_ok=True)
    return rows


def stale_compiled(app: App) -> list[Path]:
    config = load_config(app.paths)
    return [p for root in config.roots for p in compile_root(root, config, check=True).stale]


def settled(app: App, scratch: Path) -> bool:
    """The index equals a full scan and ROOT.md/index.md equal a fresh compile."""
    return not stale_compiled(app) and indexed(app) == scanned(app, scratch)


def daemon_status(app: App) -> Status:
    """The status file the daemon writes, read now: a test reads it once the daemon is ready,
    when it exists (the status of ``memoryd status`` and ``doctor``)."""
    status = read_status(app.paths).status
    assert status is not None, f"no readable status file at {app.paths.status_file}"
    return status


def daemon_ready(app: App, pid: int | None = None) -> bool:
    view = read_status(app.paths)
    status = view.status
    return bool(
        view.running
        and status is not None
        and status.last_reconcile is not None
        and (pid is None or status.pid == pid)
    )


class DaemonProcess:
    """``memoryd run`` as a subprocess of the test, logs in a file."""

    def __init__(self, tmp: Path, *args: str) -> None:
        self.log = tmp / f"daemon-{time.monotonic_ns()}.log"
        self._out = self.log.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memoryd", *args, "run"],
            stdout=self._out, stderr=subprocess.STDOUT, env=dict(os.environ),
        )  # fmt: skip

    def wait_ready(self, app: App, timeout: float = SETTLE_S) -> None:
        ok = wait_until(lambda: daemon_ready(app, self.proc.pid), timeout)
        assert ok, f"daemon not ready:\n{self.output()}"

    def wait_serving(self, app: App, scratch: Path, timeout: float = SETTLE_S) -> None:
        """Ready, its recall socket listening, and settled (its start-up compile and
        reindex done, so no write of its own changes a recall's answer afterwards)."""
        socket = app.paths.state_dir / SOCKET_NAME
        ok = wait_until(
            lambda: daemon_ready(app, self.proc.pid) and socket.exists() and settled(app, scratch),
            timeout,
        )
        assert ok, f"daemon not serving recall:\n{self.output()}"

    def output(self) -> str:
        return self.log.read_text()

    def terminate(self, timeout: float = 30) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=timeout)
        finally:
            self._out.close()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self._out.close()


def new_threads(before: set[threading.Thread], timeout: float = 15) -> set[threading.Thread]:
    deadline = time.monotonic() + timeout
    while set(threading.enumerate()) - before and time.monotonic() < deadline:
        time.sleep(0.02)
    return set(threading.enumerate()) - before


def app_with_root() -> tuple[App, Path]:
    from memoryd.init.plugin import init_global

    app = App()
    root = init_global(app).root
    return App(), root  # a fresh App re-reads the config init wrote


def root_with_remote(
    tmp_path: Path, debounce_s: float, daemon: Mapping[str, float] | None = None
) -> tuple[App, Path, Path]:
    """The global root as a git repository with a bare remote (another device's view), and
    config.yaml giving it ``debounce_s`` (and ``daemon`` settings): (app, root, remote)."""
    import yaml

    from tests.helpers import git

    app, root = app_with_root()
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "remote", "add", "origin", str(remote))
    settings: dict[str, object] = {"roots": [{"path": str(root), "sync": {"debounce_s": debounce_s}}]}
    if daemon:
        settings["daemon"] = daemon
    app.paths.config_file.write_text(yaml.safe_dump(settings))
    return App(), root, remote


def remote_files(remote: Path) -> set[str]:
    """The files of the remote's main branch (none before its first push)."""
    done = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", "main"],
        cwd=remote, capture_output=True, text=True, check=False,
    )  # fmt: skip
    return set(done.stdout.split()) if done.returncode == 0 else set()


__all__ = ["resolve_paths"]
