"""The real daemon, as a subprocess against a tmp MEMORYD_HOME (see the issue's "Done when")."""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from memoryd.app import App
from memoryd.daemon.status import read_status
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


@pytest.fixture
def running(tmp_path: Path) -> Iterator[tuple[App, Path, DaemonProcess]]:
    app, root = app_with_root()
    daemon = DaemonProcess(tmp_path)
    try:
        daemon.wait_ready(app)
        yield app, root, daemon
        assert daemon.terminate() == 0, daemon.output()
    finally:
        daemon.kill()


def assert_settles(app: App, scratch: Path, what: str, daemon: DaemonProcess) -> None:
    assert wait_until(lambda: settled(app, scratch)), f"{what}: not settled\n{daemon.output()}"


def test_every_kind_of_edit_ends_fresh(
    running: tuple[App, Path, DaemonProcess], tmp_path: Path
) -> None:
    app, root, daemon = running
    scratch = tmp_path / "scratch"
    note = root / "facts" / "a.md"

    note.write_text(memory("first version"))
    assert_settles(app, scratch, "create", daemon)
    assert any(p == str(note) for p, _ in indexed(app))

    with note.open("a") as handle:  # in-place edit
        handle.write("more text\n")
    assert_settles(app, scratch, "edit", daemon)

    tmp = note.with_name(".a.md.tmp")  # atomic save: temp file + rename
    tmp.write_text(memory("atomically saved"))
    os.replace(tmp, note)
    assert_settles(app, scratch, "atomic save", daemon)

    probe = note.with_name("4913")  # vim: probe file, rename to backup, write, drop backup
    probe.write_text("")
    probe.unlink()
    backup = note.with_name("a.md~")
    os.rename(note, backup)
    note.write_text(memory("saved by vim"))
    backup.unlink()
    assert_settles(app, scratch, "vim save", daemon)

    folder = root / "facts" / "team"
    folder.mkdir()
    for n in range(3):
        (folder / f"m{n}.md").write_text(memory(f"team memory {n}"))
    assert_settles(app, scratch, "new folder", daemon)
    folder.rename(root / "facts" / "crew")
    assert_settles(app, scratch, "folder rename", daemon)
    assert not any("/facts/team/" in p for p, _ in indexed(app))

    note.unlink()
    assert_settles(app, scratch, "delete", daemon)
    assert not any(p == str(note) for p, _ in indexed(app))


def test_a_burst_of_2000_files_ends_fresh(
    running: tuple[App, Path, DaemonProcess], tmp_path: Path
) -> None:
    app, root, daemon = running
    for n in range(2000):
        folder = root / "facts" / f"batch{n % 7}"
        folder.mkdir(exist_ok=True)
        (folder / f"m{n}.md").write_text(memory(f"burst memory {n}"))
    assert wait_until(lambda: settled(app, tmp_path / "scratch"), 120), daemon.output()
    assert len(indexed(app)) > 2000
    # the burst became whole-root rescans, not 2,000 events handled one by one
    assert re.search(r"batch: \d+ events, \d+ files changed, [1-9]\d* rescans", daemon.output()), (
        daemon.output()
    )


def own_writes(app: App) -> int:
    status = read_status(app.paths).status
    return 0 if status is None else status.own_writes


def test_one_edit_writes_root_md_once(
    running: tuple[App, Path, DaemonProcess], tmp_path: Path
) -> None:
    from watchdog.events import FileSystemEventHandler
    from watchdog.observers import Observer

    app, root, daemon = running
    rule = root / "rules" / "r.md"
    save(rule, memory("always run the tests", kind="rule"))  # one batch, one compile
    assert_settles(app, tmp_path / "scratch", "new rule", daemon)
    # the daemon's own events for that compile are consumed (recognised and dropped)
    assert wait_until(lambda: own_writes(app) > 0), daemon.output()
    seen = own_writes(app)

    writes: list[str] = []

    class Count(FileSystemEventHandler):
        def dispatch(self, event: object) -> None:
            dest = getattr(event, "dest_path", "") or getattr(event, "src_path", "")
            if str(dest).endswith("/ROOT.md") and getattr(event, "event_type", "") in (
                "moved", "created", "modified",
            ):  # fmt: skip
                writes.append(getattr(event, "event_type", ""))

    observer = Observer()
    observer.schedule(Count(), str(root), recursive=False)
    observer.start()
    try:
        before = (root / "ROOT.md").read_bytes()
        save(rule, memory("always run the whole test suite", kind="rule"))
        assert wait_until(lambda: (root / "ROOT.md").read_bytes() != before)
        assert_settles(app, tmp_path / "scratch", "edited rule", daemon)
        # the daemon saw its own rename onto ROOT.md and dropped it: where a write loop
        # would start, the event did not count as a change (and never does, below)
        assert wait_until(lambda: own_writes(app) > seen), daemon.output()
        assert wait_until(lambda: bool(writes))  # dispatched before stop() drops the queue
    finally:
        observer.stop()
        observer.join()
    assert writes == ["moved"], daemon.output()  # one atomic rename onto ROOT.md
    assert b"always run the whole test suite" in (root / "ROOT.md").read_bytes()


def test_second_instance_is_refused(running: tuple[App, Path, DaemonProcess]) -> None:
    app, _root, daemon = running
    done = run_cli("run", timeout=60)
    assert done.returncode == 1
    assert f"memoryd is already running (pid {daemon.proc.pid}, lock " in done.stderr
    status = read_status(app.paths)
    assert status.running_pid == daemon.proc.pid


def test_sigterm_exits_0_quickly_with_nothing_lost(tmp_path: Path) -> None:
    app, root = app_with_root()
    daemon = DaemonProcess(tmp_path)
    try:
        daemon.wait_ready(app)
        note = root / "facts" / "last-words.md"
        note.write_text(memory("written just before the stop"))
        started = time.monotonic()
        code = daemon.terminate(timeout=30)
        elapsed = time.monotonic() - started
    finally:
        daemon.kill()
    assert code == 0, daemon.output()
    assert elapsed < 5
    assert any(p == str(note) for p, _ in indexed(app)), daemon.output()
    assert settled(app, tmp_path / "scratch")
    view = read_status(app.paths)
    assert not view.running and view.status is not None and view.status.stopped_at
    assert "memoryd stopped" in daemon.output()
    assert (app.paths.log_file).read_text().count("memoryd stopped") == 1
    assert threading.active_count() >= 1


def test_watch_polling_in_config_polls_and_keeps_the_index_fresh(tmp_path: Path) -> None:
    app, root = app_with_root()
    data = yaml.safe_load(app.paths.config_file.read_text()) or {}
    data["roots"] = [{"path": str(root), "watch": "polling"}]
    data["daemon"] = {"poll_interval_s": 0.2}
    app.paths.config_file.write_text(yaml.safe_dump(data))
    daemon = DaemonProcess(tmp_path)
    try:
        daemon.wait_ready(app)
        done = run_cli("status", "--json")
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)["status"]
        assert report["roots"][str(root)]["mode"] == "polling"
        assert report["problems"] == []  # chosen, not refused: nothing to fix
        note = root / "facts" / "polled.md"
        note.write_text(memory("found by the poller"))  # the next reconcile is 10 min away
        assert_settles(app, tmp_path / "s1", "create under polling", daemon)
        note.write_text(memory("edited under the poller", body="changed"))
        assert_settles(app, tmp_path / "s2", "edit under polling", daemon)
        assert any(p == str(note) for p, _ in indexed(app))
        assert daemon.terminate() == 0, daemon.output()
    finally:
        daemon.kill()
