"""Freed memory handed back after work: only after work, only when nothing runs."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memoryd.app import App
from memoryd.daemon.runner import INSPECT_SHARE, Daemon, inspect_delay
from memoryd.daemon.trim import Trimmer, glibc_trim
from tests.daemon.harness import app_with_root, memory, new_threads, save, settled, wait_until


def test_it_trims_once_per_quiet_moment_after_work() -> None:
    calls: list[int] = []
    trimmer = Trimmer(lambda: calls.append(1))
    assert trimmer.idle() is False  # an idle daemon never trims
    trimmer.worked()
    trimmer.worked()
    assert trimmer.idle() is True
    assert trimmer.idle() is False
    assert len(calls) == 1


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_glibc_trim_is_callable_here() -> None:
    trim = glibc_trim()
    assert trim is not None
    assert trim() in (0, 1)  # 1: memory was released, 0: there was none to release


@pytest.fixture
def threads_checked() -> Iterator[None]:
    before = set(threading.enumerate())
    yield
    assert new_threads(before) == set()


def test_the_daemon_trims_after_an_edit_once_quiet(tmp_path: Path, threads_checked: None) -> None:
    app, root = app_with_root()
    with open(app.paths.config_file, "a") as handle:
        handle.write("daemon:\n  root_check_s: 0.1\n")
    app = App()
    calls: list[int] = []
    daemon = Daemon(app)
    daemon.trimmer = Trimmer(lambda: calls.append(1))
    daemon.start()
    try:
        assert wait_until(lambda: daemon.status.status.last_reconcile is not None)
        assert wait_until(lambda: len(calls) >= 1)  # after the start-up reconcile and compile
        started = len(calls)
        save(root / "facts" / "new.md", memory("an edit"))  # one batch: one piece of work
        assert wait_until(lambda: settled(app, tmp_path / "s"))
        assert wait_until(lambda: len(calls) > started)

        def done() -> bool:  # the compile's own writes reindexed after it, and trimmed after
            before = len(calls)
            time.sleep(0.3)  # three ticks
            return len(calls) == before

        assert wait_until(done)
        quiet = len(calls)
        assert not wait_until(lambda: len(calls) > quiet, timeout=0.5)  # idle: no more trims
    finally:
        daemon.stop()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_one_arena_is_asked_for_unless_the_environment_decides() -> None:
    probe = (
        "from memoryd.daemon.trim import one_arena\n"
        "print(one_arena({'MALLOC_ARENA_MAX': '4'}), one_arena({}))\n"
    )  # in a child: the test process keeps its allocator settings
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.split() == ["False", "True"]


def test_the_findings_for_the_page_are_made_in_a_child_process(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """inspect parses every file with its whole frontmatter: 714 MB at 100k memories that
    the daemon's allocator kept (404 MB) when the daemon ran it itself."""
    import memoryd.inspection
    from memoryd.inspect_cache import load

    app, root = app_with_root()
    broken = root / "facts" / "broken.md"
    broken.write_text("---\nkind: [unclosed\n---\nbody\n")

    def here(*args: object, **kwargs: object) -> None:
        raise AssertionError("inspect ran in the daemon's own process")

    monkeypatch.setattr(memoryd.inspection, "inspect", here)
    Daemon(app)._inspect()
    cached = load(app.paths)
    assert cached is not None and broken in cached.per_file()
    app.paths.config_file.write_text("roots: [unclosed\n")  # the child fails: said, not raised
    Daemon(app)._inspect()
    assert "inspect's findings for the page were not refreshed (exit 1): " in caplog.text


def test_the_inspect_for_the_page_takes_a_bounded_share_of_the_time() -> None:
    """At 100k memories inspect parses every file for 22 s: after every burst of saves,
    an agent saving a memory a minute kept a core a third busy."""
    assert inspect_delay(20.0, 0.0, 0.0) == 20.0  # the first: a little after the batch
    assert inspect_delay(20.0, 0.2, 0.0) == 20.0  # a small root: as before
    assert inspect_delay(20.0, 22.0, 0.0) == 22.0 / INSPECT_SHARE - 22.0
    assert inspect_delay(20.0, 22.0, 300.0) == 22.0 / INSPECT_SHARE - 22.0 - 300.0
    assert inspect_delay(20.0, 22.0, 3600.0) == 20.0  # long ago: a little after the batch


def test_the_daemon_waits_after_an_inspect_as_long_as_it_took(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import memoryd.inspect_cache

    app, _root = app_with_root()
    daemon = Daemon(app)
    clock = [1000.0]
    delays: list[float] = []

    def took_30_s(_app: App) -> bool:
        clock[0] += 30.0
        return True

    monkeypatch.setattr(memoryd.inspect_cache, "refresh_apart", took_30_s)
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(daemon.scheduler, "after", lambda _key, s, _func: delays.append(s))
    daemon._inspect_soon()
    daemon._inspect()
    clock[0] += 100.0  # saves 100 s after it ended
    daemon._inspect_soon()
    assert delays == [daemon.config.daemon.inspect_after_s, 30.0 / INSPECT_SHARE - 30.0 - 100.0]
