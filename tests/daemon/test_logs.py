from __future__ import annotations

import logging
from pathlib import Path

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
