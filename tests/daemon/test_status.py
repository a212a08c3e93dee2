from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memoryd.daemon.status import StatusBoard, read_status
from memoryd.paths import resolve_paths
from memoryd.runlock import DaemonLock
from tests.helpers import run_cli


def test_board_rewrites_the_file_on_each_change(isolated_home: Path) -> None:
    paths = resolve_paths()
    board = StatusBoard(paths.status_file)
    board.root(Path("/r"), mode="events", state="watching")
    board.update(last_batch={"at": "t", "files": 3, "ms": 12})
    board.problem("root /x is missing")
    board.problem("root /x is missing")  # once only
    data = json.loads(paths.status_file.read_text())
    assert data["roots"]["/r"]["mode"] == "events"
    assert data["last_batch"]["files"] == 3
    assert data["problems"] == ["root /x is missing"]
    board.problem("root /x is missing", present=False)
    assert read_status(paths).status.problems == []  # type: ignore[union-attr]
    assert not list(paths.status_file.parent.glob(".memoryd-tmp-*"))


def test_status_without_daemon_says_so(isolated_home: Path) -> None:
    done = run_cli("status")
    assert done.returncode == 1
    assert "memoryd: error: no memoryd daemon is running\n" in done.stderr
    assert "hint: start it with 'memoryd run'" in done.stderr
    done = run_cli("status", "--json")
    assert done.returncode == 1
    assert json.loads(done.stdout) == {
        "running": False,
        "stale": False,
        "pid": None,
        "status": None,
        "sync": [],
        "extraction": {
            "enabled": False,
            "command": None,
            "sessions": [],
            "reason": "no extract.command is configured, so nothing is extracted",
        },
    }


def test_status_of_a_live_daemon_then_a_stale_one(isolated_home: Path) -> None:
    paths = resolve_paths()
    board = StatusBoard(paths.status_file)
    board.root(Path("/r"), mode="polling", state="watching")
    with DaemonLock(paths.lock_file):
        done = run_cli("status")
        assert done.returncode == 0, done.stderr
        assert f"memoryd is running (pid {board.status.pid}" in done.stdout
        assert "  /r: watching, polling" in done.stdout
        data = json.loads(run_cli("status", "--json").stdout)
        assert data["running"] is True and data["status"]["roots"]["/r"]["mode"] == "polling"
    view = read_status(paths)
    assert view.stale and not view.running
    done = run_cli("status")
    assert done.returncode == 1
    assert f"the daemon status is stale: pid {board.status.pid} is gone" in done.stderr


@pytest.mark.parametrize("how", ["garbled", "deleted"])
def test_a_running_daemon_whose_status_file_cannot_be_read_is_running(
    isolated_home: Path, how: str
) -> None:
    paths = resolve_paths()
    StatusBoard(paths.status_file).update()
    if how == "garbled":
        paths.status_file.write_text('{"pid": 30', encoding="utf-8")
        why = "cannot be read (Expecting ',' delimiter: line 1 column 11 (char 10))"
    else:
        paths.status_file.unlink()
        why = "is missing"
    said = (
        f"its status file {paths.status_file} {why}; the daemon writes it again within "
        "seconds; if it stays so, restart the daemon"
    )
    with DaemonLock(paths.lock_file):
        done = run_cli("status")
        as_json = run_cli("status", "--json")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"memoryd is running (pid {os.getpid()})\n  problem: {said}\n"
    assert as_json.returncode == 0, as_json.stderr
    data = json.loads(as_json.stdout)
    assert (data["running"], data["pid"], data["status"]) == (True, os.getpid(), None)
    assert data["status_error"] == said


def test_status_after_a_clean_stop(isolated_home: Path) -> None:
    paths = resolve_paths()
    board = StatusBoard(paths.status_file)
    board.update(stopped_at="2026-01-01T00:00:00Z")
    assert not read_status(paths).stale
    done = run_cli("status")
    assert done.returncode == 1
    assert (
        f"no memoryd daemon is running (the last one, pid {board.status.pid}, stopped at 2026-01-01T00:00:00Z)"
        in done.stderr
    )


def test_a_broken_config_does_not_hide_the_running_daemon(isolated_home: Path) -> None:
    """The daemon runs on its last good config: status shows it, with the config's error
    among the problems once (the daemon's own line, when it tried to reload, is enough)."""
    paths = resolve_paths()
    paths.config_file.parent.mkdir(parents=True, exist_ok=True)
    paths.config_file.write_text("search:\n  limt: 3\n")
    error = f"{paths.config_file}: search.limt: unknown key (did you mean 'limit'?)"
    board = StatusBoard(paths.status_file)
    board.root(Path("/r"), mode="events", state="watching")
    with DaemonLock(paths.lock_file):
        done = run_cli("status")
        assert (done.returncode, done.stderr) == (0, "")
        assert done.stdout.splitlines()[1:] == [
            "  /r: watching, events",
            f"  problem: config.yaml: {error} (the daemon runs on the last good one)",
        ]
        data = json.loads(run_cli("status", "--json").stdout)
        assert (data["running"], data["config_error"], data["extraction"]) == (True, error, None)
        board.problem(f"config.yaml not reloaded: {error}")
        again = run_cli("status")
        assert again.stdout.splitlines()[1:] == [
            "  /r: watching, events",
            f"  problem: config.yaml not reloaded: {error}",
        ]
    stopped = run_cli("status")
    assert stopped.returncode == 1
    assert stopped.stderr.startswith(
        f"memoryd: error: the daemon status is stale: pid {board.status.pid} is gone"
    )
    board.update(stopped_at="2026-01-01T00:00:00Z")
    gone = run_cli("status")
    assert gone.returncode == 1
    assert gone.stderr == (
        f"memoryd: error: no memoryd daemon is running (the last one, pid {board.status.pid}, "
        f"stopped at 2026-01-01T00:00:00Z), and {error}\n"
        f"  hint: edit {paths.config_file} (see docs/config.md)\n"
    )


def test_a_full_disk_is_a_problem_the_status_file_cannot_hold(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a full disk the daemon cannot rewrite status.json: its last 'no problems' stayed
    on screen while every batch failed."""
    from memoryd import diskspace

    paths = resolve_paths()
    board = StatusBoard(paths.status_file)
    board.root(Path("/r"), mode="events", state="watching")
    with DaemonLock(paths.lock_file):
        assert run_cli("status").stdout.splitlines()[1:3] == [
            "  /r: watching, events",
            "  no problems",
        ]
        monkeypatch.setattr(diskspace, "free_space", lambda folder: 512 * 1024)
        done = run_cli("status")
        assert (done.returncode, done.stderr) == (0, "")
        assert done.stdout.splitlines()[1:3] == [
            "  /r: watching, events",
            f"  problem: the disk holding {paths.cache_dir} has 0.5 MiB free: indexing, "
            f"compiling and committing there fail (df -h {paths.cache_dir})",
        ]


def test_a_file_garbled_right_after_the_daemon_wrote_it_is_written_again(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Restoring compares bytes: a stat taken after the rename could be of a file garbled in
    between, and then the garbled file passed for the daemon's own (CI saw it, once)."""
    from memoryd.daemon import status
    from memoryd.fsutil import atomic_write

    paths = resolve_paths()
    board = StatusBoard(paths.status_file)

    def garbled_at_once(file: Path, data: bytes) -> None:
        atomic_write(file, data)
        file.write_bytes(b'{"pid": ')  # a hand, between the daemon's rename and its stat

    monkeypatch.setattr(status, "atomic_write", garbled_at_once)
    board.update(last_batch={"at": "t", "files": 1, "ms": 2})
    monkeypatch.undo()
    assert board.restore() is True
    assert json.loads(paths.status_file.read_text())["last_batch"]["files"] == 1
    assert board.restore() is False  # as written: nothing to do
    paths.status_file.write_bytes(b'{"pid": ')  # in place: the same inode
    assert board.restore() is True
    assert json.loads(paths.status_file.read_text())["last_batch"]["files"] == 1
    assert paths.status_file.read_bytes() != b'{"pid": '
    paths.status_file.unlink()
    assert board.restore() is True
    assert json.loads(paths.status_file.read_text())["last_batch"]["files"] == 1
    board.detach()  # another daemon's file from now on: never touched
    paths.status_file.write_bytes(b"theirs")
    assert board.restore() is False
    assert paths.status_file.read_bytes() == b"theirs"


def test_a_problem_naming_a_file_that_is_not_utf8_is_written_and_read_back(
    isolated_home: Path,
) -> None:
    """A lone surrogate (caf\\xe9.md read from a Latin-1 name) raised UnicodeEncodeError on
    the batch thread, with the daemon's lock held."""
    paths = resolve_paths()
    board = StatusBoard(paths.status_file)
    odd = os.fsdecode(b"/r/facts/caf\xe9.md")
    board.problem(f"cannot index {odd}")
    assert b"caf\\udce9.md" in paths.status_file.read_bytes()
    assert read_status(paths).status.problems == [f"cannot index {odd}"]  # type: ignore[union-attr]
    assert board.restore() is False
