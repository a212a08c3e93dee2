"""The daemon's logging: stderr (journald and launchd capture it) and a rotating file.

The file is followed by its name: deleted (its folder with the state folder, which holds
the log folder on Linux) or moved away by something else, it is made again at the next
line, where the open handle kept writing to a file nobody could read until a restart.
"""

from __future__ import annotations

import contextlib
import logging
import logging.handlers
import os
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
    handler = LogFile(
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


class LogFile(logging.handlers.RotatingFileHandler):
    """A rotating log file that is opened again when the file at its name is not the one
    it writes to (a stat a line: the daemon logs a few lines a minute at most)."""

    def emit(self, record: logging.LogRecord) -> None:
        self._follow()
        super().emit(record)

    def _follow(self) -> None:
        stream = self.stream
        if stream is None:
            return
        try:
            here = os.stat(self.baseFilename)
            held = os.fstat(stream.fileno())
            if (here.st_dev, here.st_ino) == (held.st_dev, held.st_ino):
                return
        except FileNotFoundError:
            pass
        except (OSError, ValueError):  # the stream is closed or unusable: emit says so
            return
        try:
            os.makedirs(os.path.dirname(self.baseFilename), exist_ok=True)
            reopened = self._open()
        except OSError:  # a folder that cannot be made again: keep the handle we have
            return
        stream.close()
        self.stream = reopened


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
