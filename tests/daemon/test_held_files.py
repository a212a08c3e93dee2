"""Files the real daemon holds open, deleted or replaced under it while it runs.

A user cleans out ``~/.cache`` (or a disk cleaner does), or a command moves a damaged
index aside: the daemon's open descriptor still leads to the old inode, which nothing
else reads.
"""

from __future__ import annotations

import shutil
import signal
from pathlib import Path

from memoryd.app import App
from memoryd.recall_client import SOCKET_NAME
from tests.daemon.harness import (
    DaemonProcess,
    app_with_root,
    indexed,
    memory,
    save,
    settled,
    wait_until,
)
from tests.helpers import run_cli


def found(app: App, word: str) -> bool:
    done = run_cli("recall", word, process=True)
    return done.returncode == 0 and word in done.stdout


def test_the_cache_folder_deleted_while_running_is_indexed_again(tmp_path: Path) -> None:
    app, root = app_with_root()
    save(root / "facts" / "before.md", memory("kafka partition rebalance"))
    daemon = DaemonProcess(tmp_path)
    try:
        daemon.wait_ready(app)
        assert wait_until(lambda: found(app, "kafka")), daemon.output()

        shutil.rmtree(app.paths.cache_dir)
        assert found(app, "kafka")  # the recall reconciles the new, empty index itself
        save(root / "facts" / "after.md", memory("nginx upstream keepalive"))

        # the memory written after is indexed by the daemon into the file recall reads
        assert wait_until(lambda: found(app, "nginx"), 20), daemon.output()
        assert wait_until(lambda: settled(app, tmp_path / "scratch")), daemon.output()
        assert {Path(p).name for p, _ in indexed(app)} >= {"before.md", "after.md"}
        told = (
            f"the index {app.paths.index_db} was deleted or replaced while memoryd ran: "
            "opening it again and indexing every root"
        )
        assert wait_until(lambda: told in daemon.output(), 20), daemon.output()
        assert daemon.terminate() == 0, daemon.output()
    finally:
        daemon.kill()


def test_the_state_folder_deleted_while_running_is_made_again(tmp_path: Path) -> None:
    app, _root = app_with_root()
    daemon = DaemonProcess(tmp_path)
    try:
        daemon.wait_ready(app)
        shutil.rmtree(app.paths.state_dir)  # the lock, the status file and the recall socket

        # the daemon takes its lock again and then writes its status file: status finds
        # both (with the lock alone it says the file is missing), a second daemon is refused
        running = f"memoryd is running (pid {daemon.proc.pid}, since "
        assert wait_until(lambda: running in run_cli("status").stdout, 20), daemon.output()
        second = run_cli("run", timeout=60)
        assert second.returncode == 1, second.stderr
        assert f"memoryd is already running (pid {daemon.proc.pid}, lock " in second.stderr
        assert (app.paths.state_dir / SOCKET_NAME).is_socket()
        assert (app.paths.state_dir / SOCKET_NAME).stat().st_mode & 0o777 == 0o600
        assert (
            f"{app.paths.state_dir} was deleted while memoryd ran: its lock, status file and "
            "recall socket are made again" in daemon.output()
        )
        assert daemon.terminate() == 0, daemon.output()
    finally:
        daemon.kill()
    assert not (app.paths.state_dir / SOCKET_NAME).exists()


def test_a_daemon_whose_lock_another_took_stops_and_leaves_its_files(tmp_path: Path) -> None:
    app, _root = app_with_root()
    first = DaemonProcess(tmp_path)
    second: DaemonProcess | None = None
    try:
        first.wait_ready(app)
        first.proc.send_signal(signal.SIGSTOP)  # suspended: it cannot take the lock back
        shutil.rmtree(app.paths.state_dir)
        second = DaemonProcess(tmp_path)
        second.wait_ready(app)
        first.proc.send_signal(signal.SIGCONT)

        assert first.proc.wait(timeout=60) == 1, first.output()
        assert (
            f"{app.paths.state_dir} was deleted while memoryd ran, and another daemon "
            f"(pid {second.proc.pid}) took its lock: this one stops" in first.output()
        )
        status = run_cli("status")  # the second's status file and socket are left alone
        assert f"memoryd is running (pid {second.proc.pid}, since " in status.stdout, status
        assert (app.paths.state_dir / SOCKET_NAME).is_socket()
        assert second.terminate() == 0, second.output()
    finally:
        first.kill()
        if second is not None:
            second.kill()


def test_a_status_file_garbled_while_running_is_written_again(tmp_path: Path) -> None:
    app, _root = app_with_root()
    daemon = DaemonProcess(tmp_path)
    try:
        daemon.wait_ready(app)
        app.paths.status_file.write_text('{"pid": ', encoding="utf-8")
        running = f"memoryd is running (pid {daemon.proc.pid}, since "
        assert wait_until(lambda: running in run_cli("status").stdout, 20), daemon.output()
        assert "  no problems" in run_cli("status").stdout
        app.paths.status_file.unlink()
        assert wait_until(lambda: running in run_cli("status").stdout, 20), daemon.output()
        assert daemon.terminate() == 0, daemon.output()
    finally:
        daemon.kill()


def test_the_log_folder_deleted_while_running_is_written_again(tmp_path: Path) -> None:
    app, root = app_with_root()
    daemon = DaemonProcess(tmp_path)
    try:
        daemon.wait_ready(app)
        shutil.rmtree(app.paths.log_dir)  # on Linux it is inside the state folder
        save(root / "facts" / "logged.md", memory("a change the log tells of"))
        log_file = app.paths.log_file
        assert wait_until(lambda: log_file.exists() and "batch: " in log_file.read_text(), 20), (
            daemon.output()
        )
        assert daemon.terminate() == 0, daemon.output()
        assert "memoryd stopped" in log_file.read_text()
    finally:
        daemon.kill()
