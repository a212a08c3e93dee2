from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from memoryd.daemon.logs import OverflowTrap, bound_file, daemon_logging
from tests.daemon.harness import (
    DaemonProcess,
    app_with_root,
    daemon_ready,
    indexed,
    memory,
    save,
    wait_until,
)


def test_a_kernel_queue_overflow_asks_for_a_reconcile() -> None:
    asked: list[int] = []
    trap = OverflowTrap(lambda: asked.append(1))
    trap.install()
    try:
        inotify = logging.getLogger("watchdog.observers.inotify_c")
        inotify.warning("Inotify queue overflowed; filesystem events were lost")  # watchdog's text
        inotify.warning("something else")
    finally:
        trap.remove()
    inotify.warning("Inotify queue overflowed; after the trap is gone")
    assert asked == [1]


def test_daemon_logging_goes_to_a_rotating_file_and_is_undone(tmp_path: Path) -> None:
    log_file = tmp_path / "logs" / "memoryd.log"
    handlers = list(logging.getLogger().handlers)
    with daemon_logging(log_file):
        logging.getLogger("memoryd.daemon.test").info("hello from the daemon")
        logging.getLogger("memoryd.daemon.test").debug("not at info level")
    assert "INFO memoryd.daemon.test: hello from the daemon" in log_file.read_text()
    assert "not at info level" not in log_file.read_text()
    assert logging.getLogger().handlers == handlers


def test_a_file_name_that_is_not_utf8_is_logged_not_a_logging_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The daemon warns of such a name on every batch: the file handler's strict UTF-8
    dropped each line and printed a "--- Logging error ---" traceback to stderr."""
    log_file = tmp_path / "logs" / "memoryd.log"
    name = Path(os.fsdecode(b"/m/facts/caf\xe9.md"))
    with daemon_logging(log_file):
        logging.getLogger("memoryd.daemon.test").warning("cannot index %s: %s", name, "why")
    assert "WARNING memoryd.daemon.test: cannot index /m/facts/caf\\udce9.md: why\n" in (
        log_file.read_text(encoding="utf-8")
    )
    assert "Logging error" not in capsys.readouterr().err


def test_under_launchd_the_stderr_file_gets_no_log_lines_and_is_cut_at_start(
    tmp_path: Path,
) -> None:
    """launchd's StandardErrorPath is a file nothing rotates, and every line of the daemon's
    log went there as well as to memoryd.log: it grew without bound. The plist's
    ``run --stderr-log FILE`` keeps log lines out of it and cuts it at start to its newest
    lines, where a crash before logging starts is still read."""
    app, root = app_with_root()
    err_file = app.paths.log_dir / "launchd.err.log"
    err_file.parent.mkdir(parents=True, exist_ok=True)
    old = b"".join(b"old traceback line %06d\n" % n for n in range(20_000))  # 500 kB
    err_file.write_bytes(old + b"the newest crash\n")
    with err_file.open("ab") as stderr:  # as launchd opens it: O_APPEND
        proc = subprocess.Popen(
            [sys.executable, "-m", "memoryd", "run", "--stderr-log", str(err_file)],
            stdout=subprocess.DEVNULL, stderr=stderr, env=dict(os.environ),
        )  # fmt: skip
    try:
        assert wait_until(lambda: daemon_ready(app, proc.pid)), err_file.read_text()
        save(root / "facts/a.md", memory("alpha"))  # a batch: more log lines
        assert wait_until(lambda: "1 files changed" in app.paths.log_file.read_text())
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    text = err_file.read_bytes()
    whole = old + b"the newest crash\n"
    kept = whole[-64 * 1024 :]
    kept = kept[kept.find(b"\n") + 1 :]  # whole lines, the newest crash last
    cut = len(whole) - len(kept)
    assert text == b"[memoryd: the older %d bytes were cut at start]\n" % cut + kept
    assert "INFO memoryd" in app.paths.log_file.read_text()  # the log is memoryd.log


def test_a_small_stderr_file_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "launchd.err.log"
    path.write_bytes(b"Traceback: a crash at import\n" * 100)
    assert bound_file(path) is False
    assert path.read_bytes() == b"Traceback: a crash at import\n" * 100
    assert bound_file(tmp_path / "none.log") is False and not (tmp_path / "none.log").exists()


def test_the_daemon_logs_a_memory_whose_frontmatter_does_not_parse(tmp_path: Path) -> None:
    """Indexed by its text alone, with no word in the log: the daemon's user learnt of it
    only from 'memoryd inspect'. One line when the file is saved, in memoryd's words."""
    app, root = app_with_root()
    daemon = DaemonProcess(tmp_path)
    try:
        daemon.wait_ready(app)
        save(root / "facts/tabbed.md", "---\nkind: fact\nload_when:\n\t- deploy\n---\nbody\n")
        line = (
            f"WARNING memoryd.daemon.indexing: {root / 'facts/tabbed.md'}: malformed YAML on "
            "line 4: YAML does not allow tabs; indent with spaces; fix the YAML between the "
            "'---' lines at the top of the file\n"
        )
        assert wait_until(lambda: line in app.paths.log_file.read_text()), daemon.output()
        save(root / "facts/fine.md", memory("fine"))  # a well-formed file: no such line
        assert wait_until(lambda: "facts/fine.md" in str(indexed(app)))
        assert daemon.terminate() == 0
    finally:
        daemon.kill()
    assert app.paths.log_file.read_text().count("malformed YAML") == 1
