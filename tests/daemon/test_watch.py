from __future__ import annotations

import errno
import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memoryd.daemon import mounts
from memoryd.daemon.batching import Batch, Change, Kind, Op
from memoryd.daemon.watch import (
    FILESYSTEM,
    LIMIT,
    SETTING,
    Watcher,
    native_observer,
    relevant_file,
    to_change,
)

R = Path("/r")


@pytest.fixture(autouse=True)
def no_thread_left() -> Iterator[None]:
    before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + 5
    while set(threading.enumerate()) - before and time.monotonic() < deadline:
        time.sleep(0.02)
    assert set(threading.enumerate()) - before == set()


@pytest.mark.parametrize(
    ("rel", "ok"),
    [
        ("a.md", True), ("pitfalls/x.md", True), ("ROOT.md", True), ("x.txt", False),
        (".git/x.md", False), ("sub/.hidden/x.md", False), ("a.md.swp", False), (".a.md.swp", False),
        ("a.md~", False), (".#a.md", False), ("4913", False), ("a.tmp", False),
        (".memoryd-tmp-abc", False), (".state.json", False), (".x.md", False),
        ("node_modules/a.md", False),
    ],
)  # fmt: skip
def test_relevant_file(rel: str, ok: bool) -> None:
    assert relevant_file(R, R / rel) is ok


def test_to_change_covers_moves_and_folders() -> None:
    tmp, note = R / ".memoryd-tmp-1", R / "a.md"
    assert to_change(R, "moved", tmp, note, False) == Change(Kind.MOVED_IN, note)
    assert to_change(R, "moved", note, R / "a.md~", False) == Change(Kind.DELETED, note)
    assert to_change(R, "moved", note, R / "b.md", False) == Change(Kind.MOVED, note, R / "b.md")
    assert to_change(R, "moved", R / "x", R / "y", False) is None
    assert to_change(R, "closed", note, None, False) == Change(Kind.MODIFIED, note)
    assert to_change(R, "opened", note, None, False) is None
    assert to_change(R, "moved", R / "d", R / "e", True) == Change(Kind.RESCAN, R)
    assert to_change(R, "created", R / ".git" / "objects", None, True) is None
    assert to_change(R, "deleted", R, None, True) == Change(Kind.ROOT_GONE, R)
    assert to_change(R, "modified", R / "d", None, True) is None


def collect(q: queue.Queue[Change], until: Callable[[Batch], bool], timeout: float = 30) -> Batch:
    """Merge events until ``until`` holds and the queue has been quiet for a moment."""
    batch = Batch()
    deadline = time.monotonic() + timeout
    quiet_since = time.monotonic()
    while time.monotonic() < deadline:
        try:
            batch.add(q.get(timeout=0.05))
            quiet_since = time.monotonic()
        except queue.Empty:
            if until(batch) and time.monotonic() - quiet_since > 0.4:
                break
    return batch


def exercise(watcher: Watcher, q: queue.Queue[Change], root: Path, exact: bool = True) -> None:
    """Create, atomically save, delete. Polling diffs snapshots, so its events come in no
    causal order: there only the path is checked (the index looks at the disk anyway)."""
    note = root / "facts" / "a.md"
    note.parent.mkdir(parents=True, exist_ok=True)
    note.write_text("one\n")
    assert collect(q, lambda b: note in b.ops).ops.get(note) in (Op.CREATED, Op.MODIFIED)
    tmp = root / "facts" / ".a.md.tmp"  # atomic save: temp file + rename
    tmp.write_text("two\n")
    os.replace(tmp, note)
    (root / ".git").mkdir(exist_ok=True)
    (root / ".git" / "x.md").write_text("ignored")
    batch = collect(q, lambda b: note in b.ops)
    assert set(batch.ops) == {note}
    assert batch.ops[note] is Op.MODIFIED or not exact
    note.unlink()
    assert collect(q, lambda b: note in b.ops).ops == {note: Op.DELETED}


def test_native_watcher_reports_changes(tmp_path: Path) -> None:
    q: queue.Queue[Change] = queue.Queue()
    watcher = Watcher(q.put, poll_interval=0.1)
    watcher.start()
    try:
        assert watcher.add(tmp_path) == "events"
        exercise(watcher, q, tmp_path)
        watcher.remove(tmp_path)
        assert watcher.modes == {}
    finally:
        watcher.stop()


def refusing_observer() -> Any:
    """A native observer whose every watch the OS refuses (as when the inotify limit is hit)."""
    observer = native_observer()

    def schedule(*args: Any, **kwargs: Any) -> Any:
        raise OSError(errno.ENOSPC, "inotify watch limit reached")

    observer.schedule = schedule
    return observer


def test_refused_watch_falls_back_to_polling_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    q: queue.Queue[Change] = queue.Queue()
    watcher = Watcher(q.put, poll_interval=0.1, native=refusing_observer)
    watcher.start()
    try:
        other = tmp_path / "other"
        other.mkdir()
        assert watcher.add(tmp_path / "other") == "polling"
        root = tmp_path / "root"
        root.mkdir()
        assert watcher.add(root) == "polling"
        warnings = [r for r in caplog.records if "fs.inotify.max_user_watches" in r.getMessage()]
        assert len(warnings) == 1
        exercise(watcher, q, root, exact=False)
    finally:
        watcher.stop()


def refuse_folders_named_deep(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel grants the root's watch and refuses a folder's below it (the limit hit
    mid-walk): every inotify watch on a folder named ``deep`` fails with ENOSPC.

    Patched on watchdog's InotifyFD class, not on an observer's instance: watchdog 7.1
    makes an observer's inotify instance at its first ``schedule``, so a new observer has
    none to patch yet (6.x and 7.0 made it up front).
    """
    from watchdog.observers.inotify_c import InotifyFD

    grant = InotifyFD.add_callback

    def add_callback(self: Any, path: bytes, *args: Any, **kwargs: Any) -> Any:
        if os.path.basename(path) == b"deep":
            raise OSError(errno.ENOSPC, "inotify watch limit reached")
        return grant(self, path, *args, **kwargs)

    monkeypatch.setattr(InotifyFD, "add_callback", add_callback)


def test_a_refused_folder_below_the_root_also_means_polling(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "fine").mkdir()
    (tmp_path / "fine" / "deep").mkdir()  # refused: see refuse_folders_named_deep
    refuse_folders_named_deep(monkeypatch)
    q: queue.Queue[Change] = queue.Queue()
    watcher = Watcher(q.put, poll_interval=0.1)
    watcher.start()
    try:
        other = tmp_path / "other"
        (other / "sub").mkdir(parents=True)
        assert watcher.add(other) == "events"  # nothing refused there
        assert watcher.add(tmp_path / "fine") == "polling"
        # watchdog before 7.1 skips the refused folder and memoryd finds it unwatched ("no
        # watch for 1 folders, e.g. .../deep"); 7.1 raises the kernel's refusal at once
        assert f"cannot watch {tmp_path / 'fine'} for events (" in caplog.text
        assert "fs.inotify.max_user_watches" in caplog.text
        note = tmp_path / "fine" / "deep" / "a.md"
        note.write_text("seen by polling")
        assert note in collect(q, lambda b: note in b.ops).ops
    finally:
        watcher.stop()


def on_filesystem(monkeypatch: pytest.MonkeyPatch, fstype: str) -> None:
    """Every root is on ``fstype``: the one thing a test cannot own is a network mount."""
    monkeypatch.setattr(mounts, "filesystem_of", lambda path: fstype)


def fs_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "file system" in r.getMessage()]


def test_a_root_on_a_network_file_system_is_polled_with_one_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    on_filesystem(monkeypatch, "nfs4")
    q: queue.Queue[Change] = queue.Queue()
    watcher = Watcher(q.put, poll_interval=0.1)
    watcher.start()
    try:
        assert watcher.add(tmp_path) == "polling"
        assert watcher.reasons[tmp_path] == FILESYSTEM
        watcher.remove(tmp_path)  # paused and back: no second warning
        assert watcher.add(tmp_path) == "polling"
        [warning] = fs_warnings(caplog)
        assert "on a nfs4 file system" in warning
        assert "every 0.1s" in warning
        assert "'watch: events'" in warning and "config.yaml" in warning
        assert "max_user_watches" not in caplog.text
        exercise(watcher, q, tmp_path, exact=False)  # real edits, noticed by polling
    finally:
        watcher.stop()


def test_watch_events_keeps_events_on_a_network_file_system(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    on_filesystem(monkeypatch, "fuse.sshfs")
    q: queue.Queue[Change] = queue.Queue()
    watcher = Watcher(q.put, poll_interval=0.1)
    watcher.start()
    try:
        assert watcher.add(tmp_path, "events") == "events"
        assert fs_warnings(caplog) == []
        exercise(watcher, q, tmp_path)  # exact: only native events keep the causal order
    finally:
        watcher.stop()


def test_watch_events_still_falls_back_when_the_watch_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    on_filesystem(monkeypatch, "nfs")
    watcher = Watcher(lambda change: None, poll_interval=0.1, native=refusing_observer)
    watcher.start()
    try:
        assert watcher.add(tmp_path, "events") == "polling"
        assert watcher.reasons[tmp_path] == LIMIT
        assert "fs.inotify.max_user_watches" in caplog.text
    finally:
        watcher.stop()


def test_watch_polling_polls_a_local_root_without_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    q: queue.Queue[Change] = queue.Queue()
    watcher = Watcher(q.put, poll_interval=0.1)
    watcher.start()
    try:
        assert watcher.add(tmp_path, "polling") == "polling"
        assert watcher.reasons[tmp_path] == SETTING
        assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
        exercise(watcher, q, tmp_path, exact=False)
    finally:
        watcher.stop()


def test_auto_watches_a_local_file_system_for_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    on_filesystem(monkeypatch, "fuse.gocryptfs")
    watcher = Watcher(lambda change: None, poll_interval=0.1)
    watcher.start()
    try:
        assert watcher.add(tmp_path) == "events"
        assert tmp_path not in watcher.reasons
    finally:
        watcher.stop()
