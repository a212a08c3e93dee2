"""The daemon in-process: fallback to polling, roots that come and go, config reload, threads."""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from memoryd.app import App
from memoryd.daemon import mounts
from memoryd.daemon.batch_worker import Cmd
from memoryd.daemon.runner import Daemon
from memoryd.daemon.status import read_status
from tests.daemon.harness import (
    DaemonProcess,
    app_with_root,
    daemon_status,
    indexed,
    memory,
    new_threads,
    remote_files,
    root_with_remote,
    settled,
    wait_until,
)
from tests.daemon.test_watch import refusing_observer


@pytest.fixture
def threads_checked() -> Iterator[None]:
    before = set(threading.enumerate())
    yield
    assert new_threads(before) == set()


def start(app: App, **kwargs: object) -> Daemon:
    daemon = Daemon(app, **kwargs)  # type: ignore[arg-type]
    daemon.start()
    assert wait_until(lambda: daemon.status.status.last_reconcile is not None)
    return daemon


def checking_often(app: App) -> tuple[App, Daemon]:
    """The daemon started with its roots checked every 0.2 s (config.yaml re-read)."""
    with open(app.paths.config_file, "a") as handle:
        handle.write("daemon:\n  root_check_s: 0.2\n")
    app = App()
    return app, start(app)


def test_refused_watch_polls_and_keeps_the_index_fresh(
    tmp_path: Path, threads_checked: None, caplog: pytest.LogCaptureFixture
) -> None:
    app, root = app_with_root()
    daemon = start(app, native=refusing_observer)
    try:
        state = daemon.status.snapshot().roots[str(root)]
        assert (state.mode, state.state) == ("polling", "watching")
        assert any("fs.inotify.max_user_watches" in p for p in daemon.status.status.problems)
        note = root / "facts" / "polled.md"
        note.write_text(memory("seen by polling"))
        assert wait_until(lambda: settled(app, tmp_path / "s"))
        assert any(p == str(note) for p, _ in indexed(app))
        note.write_text(memory("edited under polling"))
        assert wait_until(lambda: settled(app, tmp_path / "s"))
        note.unlink()
        assert wait_until(lambda: settled(app, tmp_path / "s"))
    finally:
        daemon.stop()
    warnings = [r for r in caplog.records if "fs.inotify.max_user_watches" in r.getMessage()]
    assert len(warnings) == 1


def test_a_root_on_a_network_mount_is_polled_and_kept_fresh(
    tmp_path: Path,
    threads_checked: None,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    app, root = app_with_root()
    monkeypatch.setattr(mounts, "filesystem_of", lambda path: "cifs")  # no SMB server here
    daemon = start(app)
    try:
        state = daemon.status.snapshot().roots[str(root)]
        assert (state.mode, state.state) == ("polling", "watching")
        assert daemon.status.status.problems == []  # the inotify hint would be wrong here
        note = root / "facts" / "remote.md"
        note.write_text(memory("as if written by another machine"))
        assert wait_until(lambda: settled(app, tmp_path / "s"))
        assert any(p == str(note) for p, _ in indexed(app))
    finally:
        daemon.stop()
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert [w for w in warnings if "cifs" in w] == warnings and len(warnings) == 1


def test_a_changed_watch_setting_applies_on_reload(tmp_path: Path, threads_checked: None) -> None:
    app, root = app_with_root()
    daemon = start(app)
    try:
        assert daemon.status.snapshot().roots[str(root)].mode == "events"
        data = yaml.safe_load(app.paths.config_file.read_text()) or {}
        data["roots"] = [{"path": str(root), "watch": "polling"}]
        app.paths.config_file.write_text(yaml.safe_dump(data))
        daemon.worker.send(Cmd.RELOAD, wait=True)
        assert daemon.status.snapshot().roots[str(root)].mode == "polling"
        note = root / "facts" / "after-reload.md"
        note.write_text(memory("seen by the new poller"))
        assert wait_until(lambda: settled(app, tmp_path / "s"))
        assert any(p == str(note) for p, _ in indexed(app))
    finally:
        daemon.stop()


def test_a_root_that_disappears_pauses_and_resumes(tmp_path: Path, threads_checked: None) -> None:
    app, root = app_with_root()
    (root / "facts" / "keep.md").write_text(memory("kept while away"))
    app, daemon = checking_often(app)
    try:
        assert wait_until(lambda: settled(app, tmp_path / "s"))
        rows = indexed(app)
        away = tmp_path / "away"
        root.rename(away)
        assert wait_until(lambda: daemon.status.snapshot().roots[str(root)].state == "paused")
        assert indexed(app) == rows  # nothing treated as deleted
        assert any("is missing: paused" in p for p in daemon.status.status.problems)
        (away / "facts" / "new.md").write_text(memory("written while unmounted"))
        root.mkdir()  # a bare folder at its path (once made by remember) is not the root
        time.sleep(1.0)  # five root checks (0.2 s apart)
        assert daemon.status.snapshot().roots[str(root)].state == "paused"
        assert any("is missing: paused" in p for p in daemon.status.status.problems)
        away.rename(root)  # over the empty folder: the real root is back
        assert wait_until(lambda: daemon.status.snapshot().roots[str(root)].state == "watching")
        assert wait_until(lambda: settled(app, tmp_path / "s"))
        assert any(p.endswith("/facts/new.md") for p, _ in indexed(app))
        assert not daemon.status.status.problems
    finally:
        daemon.stop()


def test_a_root_replaced_by_a_symlink_is_followed(tmp_path: Path, threads_checked: None) -> None:
    """The user moves the root into a dotfiles repo and leaves a symlink where it was: every
    command now resolves the configured path to the new place, so the daemon must too."""
    app, root = app_with_root()
    app, daemon = checking_often(app)
    try:
        moved = tmp_path / "dotfiles" / "memory"
        moved.parent.mkdir()
        root.rename(moved)
        root.symlink_to(moved)
        assert wait_until(lambda: str(moved) in daemon.status.snapshot().roots)
        assert str(root) not in daemon.status.snapshot().roots
        (moved / "facts" / "after.md").write_text(memory("written in the new place"))
        assert wait_until(lambda: (str(moved / "facts" / "after.md")) in dict(indexed(app)))
        assert [r.path for r in daemon.config.roots] == [moved]
    finally:
        daemon.stop()


def test_a_moved_root_under_a_broken_config_is_tried_once(
    tmp_path: Path, threads_checked: None, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="memoryd.daemon.runner")
    app, root = app_with_root()
    with open(app.paths.config_file, "a") as handle:
        handle.write("daemon:\n  root_check_s: 0.1\n")
    app = App()
    daemon = start(app)
    try:
        with open(app.paths.config_file, "a") as handle:
            handle.write("serach: {}\n")
        failed = "config.yaml not reloaded"
        assert wait_until(lambda: failed in caplog.text)
        moved = tmp_path / "elsewhere"
        root.rename(moved)
        root.symlink_to(moved)
        assert wait_until(lambda: caplog.text.count(failed) == 2)
        # ten ticks more: none of them tries again, the file is still broken
        assert not wait_until(lambda: caplog.text.count(failed) > 2, timeout=1.0)
        assert caplog.text.count(f"root {root} now leads to {moved}") == 1
    finally:
        daemon.stop()


def test_a_config_fixed_again_clears_its_problem_from_the_status_file(
    threads_checked: None,
) -> None:
    app, _root = app_with_root()
    daemon = start(app)
    good = app.paths.config_file.read_text()
    try:
        app.paths.config_file.write_text("roots:\n  - path: [oops\n")
        daemon.worker.send(Cmd.RELOAD, wait=True)
        status = read_status(app.paths).status
        assert status is not None and [p[:24] for p in status.problems] == [
            "config.yaml not reloaded"
        ]
        app.paths.config_file.write_text(good)
        daemon.worker.send(Cmd.RELOAD, wait=True)
        status = read_status(app.paths).status  # what memoryd status and doctor read
        assert status is not None and status.problems == []
    finally:
        daemon.stop()


def test_a_batch_the_index_cannot_take_is_a_problem_and_retried_soon(
    tmp_path: Path, threads_checked: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk fails the batch ('database or disk is full'): the status said 'no
    problems' while recall missed the memory until the 10-minute reconcile."""
    import sqlite3

    from memoryd.daemon import runner

    app, root = app_with_root()
    with open(app.paths.config_file, "a") as handle:
        handle.write("daemon:\n  root_check_s: 0.1\n")
    app = App()
    monkeypatch.setattr(runner, "RETRY_S", 0.5, raising=False)
    daemon = start(app)
    full = threading.Event()
    full.set()
    refresh = daemon.engine.refresh

    def refresh_on_a_full_disk(*args: object) -> object:
        if full.is_set():
            raise sqlite3.OperationalError("database or disk is full")
        return refresh(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(daemon.engine, "refresh", refresh_on_a_full_disk)
    try:
        note = root / "facts" / "newt.md"
        note.write_text(memory("newts are amphibians"))

        def problems() -> list[str]:
            return daemon_status(app).problems

        assert wait_until(lambda: problems() != [])
        assert problems() == [  # (the text names the real interval, 30 s)
            "the index was not updated: batch: database or disk is full; recall misses those "
            "changes until a retry succeeds (every 30 s)"
        ]
        full.clear()  # space freed: the next retry indexes the memory, nothing else changes
        assert wait_until(lambda: str(note) in dict(indexed(app)))
        assert wait_until(lambda: problems() == [])
    finally:
        daemon.stop()


def add_root(app: App, root: Path, **daemon_settings: object) -> None:
    data = yaml.safe_load(app.paths.config_file.read_text()) or {}
    roots = data.get("roots") or [{"path": str(app.paths.default_global_root)}]
    data["roots"] = [*roots, {"path": str(root), "scope": "project"}]
    if daemon_settings:
        data["daemon"] = daemon_settings
    tmp = app.paths.config_file.with_suffix(".new")
    tmp.write_text(yaml.safe_dump(data))
    os.replace(tmp, app.paths.config_file)


def test_a_root_added_to_config_is_picked_up(tmp_path: Path, threads_checked: None) -> None:
    app, _root = app_with_root()
    app, daemon = checking_often(app)
    try:
        project = tmp_path / "proj" / ".memory"
        (project / "facts").mkdir(parents=True)
        (project / "facts" / "p.md").write_text(memory("a project memory"))
        add_root(app, project, root_check_s=0.2)
        assert wait_until(lambda: str(project) in daemon.status.snapshot().roots)
        assert wait_until(lambda: any(p.startswith(str(project)) for p, _ in indexed(app)))
        (project / "facts" / "q.md").write_text(memory("another one"))
        assert wait_until(lambda: settled(app, tmp_path / "s"))
    finally:
        daemon.stop()


def test_a_clock_set_back_restarts_the_timers(tmp_path: Path, threads_checked: None) -> None:
    """NTP sets a clock that ran an hour ahead back: APScheduler's timers are wall-clock
    times, so the roots check, the reconcile and the pull waited that hour out (the daemon
    did not notice config.yaml, a vanished root, or another device's pushes)."""
    import datetime

    app, _root = app_with_root()
    app, daemon = checking_often(app)
    try:
        later = datetime.datetime.now(datetime.UTC) + datetime.timedelta(hours=1)
        for job in daemon.scheduler._s.get_jobs():  # what a set-back of an hour leaves
            job.modify(next_run_time=later)
        daemon.check_clock(1000.0, 1_800_000_000.0)
        daemon.check_clock(1001.0, 1_800_000_001.0 - 3600)
        project = tmp_path / "proj" / ".memory"
        (project / "facts").mkdir(parents=True)
        add_root(app, project, root_check_s=0.2)  # noticed by the roots check, a timer
        assert wait_until(lambda: str(project) in daemon.status.snapshot().roots, timeout=10)
        assert daemon.scheduler._s.get_job("sync").next_run_time < later
    finally:
        daemon.stop()


def test_sighup_reloads_config(tmp_path: Path) -> None:
    app, _root = app_with_root()
    with open(app.paths.config_file, "a") as handle:
        handle.write("daemon:\n  root_check_s: 0\n")  # no config polling: only SIGHUP
    daemon = DaemonProcess(tmp_path)
    try:
        daemon.wait_ready(app)
        project = tmp_path / "proj" / ".memory"
        project.mkdir(parents=True)
        (project / "p.md").write_text(memory("found after SIGHUP"))
        add_root(app, project, root_check_s=0)
        daemon.proc.send_signal(signal.SIGHUP)
        assert wait_until(lambda: any(p.startswith(str(project)) for p, _ in indexed(app)))
        assert daemon.terminate() == 0
    finally:
        daemon.kill()
    assert "config reloaded: 2 roots (1 added, 0 removed)" in daemon.output()


def test_a_hand_edit_of_a_compiled_block_is_restored_with_one_log_line(
    tmp_path: Path, threads_checked: None, caplog: pytest.LogCaptureFixture
) -> None:
    app, root = app_with_root()
    (root / "rules" / "tags.md").write_text(memory("Tag every release", kind="rule"))
    daemon = start(app)
    try:
        assert wait_until(lambda: settled(app, tmp_path / "s"))
        root_md = root / "ROOT.md"
        compiled = root_md.read_text(encoding="utf-8")
        root_md.write_text(compiled.replace("- Tag every release", "- Tag when I feel like it"))
        assert wait_until(lambda: root_md.read_text(encoding="utf-8") == compiled)
        assert wait_until(lambda: settled(app, tmp_path / "s"))
    finally:
        daemon.stop()
    restored = [r.getMessage() for r in caplog.records if "restored the compiled" in r.getMessage()]
    assert restored == [
        f"restored the compiled parts of {root_md}: a hand edit there is overwritten by every "
        "compile (edit the memories' frontmatter instead)"
    ]


def test_what_the_start_up_reconcile_finds_is_synced_however_fast_it_runs(
    tmp_path: Path, threads_checked: None
) -> None:
    """The start-up reconcile ran on the worker thread before the scheduler started: when it
    was quicker than the main thread, its changes asked a scheduler not yet running for a
    sync, which dropped the request, and they waited for the periodic sync (5 minutes)."""
    app, _root, remote = root_with_remote(tmp_path, 0.2)
    daemon = Daemon(app)
    starting = daemon.scheduler.start

    def slow_start() -> None:  # a main thread slower than the worker's reconcile, if sent
        wait_until(lambda: daemon.status.status.last_reconcile is not None, timeout=2)
        starting()

    daemon.scheduler.start = slow_start  # type: ignore[method-assign]
    daemon.start()
    try:
        assert wait_until(lambda: "ROOT.md" in remote_files(remote), timeout=20)
    finally:
        daemon.stop()


def test_a_file_name_that_is_not_utf8_is_compiled_as_the_cli_compiles_it(
    tmp_path: Path, threads_checked: None, caplog: pytest.LogCaptureFixture
) -> None:
    """A new memory named in Latin-1 bytes cannot be indexed (SQLite text), so the daemon
    saw '0 files changed' and never compiled: index.md lacked the line 'memoryd compile'
    writes for it, 'compile --check' never passed, and the next compile logged a hand edit
    nobody made. Both list it now, and the daemon says once why it is not searchable."""
    app, root = app_with_root()
    daemon = start(app)
    try:
        assert wait_until(lambda: settled(app, tmp_path / "s"))
        raw = os.fsencode(root / "facts") + b"/na\xefve.md"
        with caplog.at_level(logging.INFO, logger="memoryd"):
            with open(raw, "w") as handle:
                handle.write(memory("written under a latin-1 locale"))
            assert wait_until(lambda: settled(app, tmp_path / "s"))
            index_md = (root / "facts" / "index.md").read_text()
            assert "[na\\xefve.md](na%EFve.md)" in index_md
            with open(raw, "a") as handle:
                handle.write("one more line\n")
            time.sleep(1.0)  # the batch (quiet_ms 150) and its compile
            assert wait_until(lambda: settled(app, tmp_path / "s"))
    finally:
        daemon.stop()
    said = [r.getMessage() for r in caplog.records if "cannot index" in r.getMessage()]
    assert len(said) == 1, said
    assert not [r for r in caplog.records if "hand edit" in r.getMessage()]


def test_the_start_up_pass_merges_two_big_segments_of_the_index(
    tmp_path: Path, threads_checked: None, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A cold index leaves big segments that FTS5 later merged inside a one-file save (2 s at
    100k memories); the daemon merges them after a whole-root pass instead."""
    from memoryd.index import open_index, reconcile, segments

    app, root = app_with_root()
    with open_index(app.paths) as db:
        for batch in range(2):  # two transactions: two segments
            for i in range(5):
                (root / "facts").mkdir(exist_ok=True)
                (root / "facts" / f"n{batch}-{i}.md").write_text(memory(f"crane note {batch} {i}"))
            reconcile(db, app.config)
        assert segments.big_segments(db.conn) == 0
    monkeypatch.setattr(segments, "BIG_PAGES", 1)
    with caplog.at_level(logging.INFO, logger="memoryd.index.segments"):
        daemon = start(app)
        try:
            assert "index: merged the full-text index" in caplog.text
            with open_index(app.paths) as db:
                assert segments.big_segments(db.conn) == 1
        finally:
            daemon.stop()
