from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from memoryd.daemon.logs import OverflowTrap, daemon_logging


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
