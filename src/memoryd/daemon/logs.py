"""The daemon's logging: stderr (journald and launchd capture it) and a rotating file."""

from __future__ import annotations

import contextlib
import logging
import logging.handlers
from collections.abc import Callable, Iterator
from pathlib import Path

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
MAX_BYTES = 1024 * 1024
BACKUPS = 3
# A file name that is not UTF-8 reaches a message as surrogates (caf\udce9.md): written as
# \udce9, where strict UTF-8 lost the line and printed a "Logging error" traceback.
ERRORS = "backslashreplace"


@contextlib.contextmanager
def daemon_logging(log_file: Path, verbosity: int = 0) -> Iterator[None]:
    """INFO (DEBUG with -v) from memoryd to stderr and to ``log_file``, rotated."""
    log_file.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.handlers.RotatingFileHandler(
        log_file, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8", errors=ERRORS
    )
    handler.setFormatter(logging.Formatter(FORMAT))
    root, ours = logging.getLogger(), logging.getLogger("memoryd")
    before = ours.level
    ours.setLevel(logging.DEBUG if verbosity else logging.INFO)
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)
        handler.close()
        ours.setLevel(before)


class OverflowTrap(logging.Handler):
    """watchdog only logs a kernel event-queue overflow; turn that into a reconcile."""

    def __init__(self, on_overflow: Callable[[], None]) -> None:
        super().__init__(logging.WARNING)
        self.on_overflow = on_overflow
        self.logger = logging.getLogger("watchdog")

    def emit(self, record: logging.LogRecord) -> None:
        if "overflow" in record.getMessage().lower():
            self.on_overflow()

    def install(self) -> None:
        self.logger.addHandler(self)

    def remove(self) -> None:
        self.logger.removeHandler(self)
