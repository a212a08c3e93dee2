"""The daemon's logging: stderr (journald captures it) and a rotating file.

Under launchd stderr is a plain file (StandardErrorPath) that nothing rotates: every line
of the daemon's log went there as well as to memoryd.log, and it grew without bound. The
plist's ``memoryd run --stderr-log FILE`` names that file: the daemon sends it no log lines
once memoryd.log takes them (``stderr=False``), and :func:`bound_file` cuts it to its newest
lines at start, so what is left there is what happened before logging starts (a config
error, a crash at import) and tracebacks no handler saw, the newest kept.

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
from typing import Any

from memoryd.fsutil import private_file

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
MAX_BYTES = 1024 * 1024
BACKUPS = 3
STDERR_MAX_BYTES = 256 * 1024  # launchd's stderr file is cut when it is larger at start ...
STDERR_KEEP_BYTES = 64 * 1024  # ... to about its newest 64 KiB, whole lines
# A file name that is not UTF-8 reaches a message as surrogates (caf\udce9.md): written as
# \udce9, where strict UTF-8 lost the line and printed a "Logging error" traceback.
ERRORS = "backslashreplace"


@contextlib.contextmanager
def daemon_logging(log_file: Path, verbosity: int = 0, *, stderr: bool = True) -> Iterator[None]:
    """INFO (DEBUG with -v) from memoryd to ``log_file``, rotated, and to stderr unless
    ``stderr`` is False (then the CLI's stderr handler is off until the block ends)."""
    handler = LogFile(
        log_file, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8", errors=ERRORS
    )
    handler.setFormatter(logging.Formatter(FORMAT))
    root, ours = logging.getLogger(), logging.getLogger("memoryd")
    before = ours.level
    muted = [] if stderr else [h for h in root.handlers if getattr(h, "_memoryd_cli", False)]
    ours.setLevel(logging.DEBUG if verbosity else logging.INFO)
    root.addHandler(handler)
    for cli in muted:
        root.removeHandler(cli)
    try:
        yield
    finally:
        for cli in muted:
            root.addHandler(cli)
        root.removeHandler(handler)
        handler.close()
        ours.setLevel(before)


def bound_file(path: Path, limit: int = STDERR_MAX_BYTES, keep: int = STDERR_KEEP_BYTES) -> bool:
    """Cut ``path`` to its newest whole lines (about ``keep`` bytes) when it holds more
    than ``limit``; True when it was cut. In place, so a writer that appends to it (launchd
    opens StandardErrorPath with O_APPEND) goes on writing at its new end."""
    try:
        with open(path, "r+b") as file:
            size = os.fstat(file.fileno()).st_size
            if size <= limit:
                return False
            file.seek(size - keep)
            tail = file.read()
            tail = tail[tail.find(b"\n") + 1 :]
            file.seek(0)
            file.write(b"[memoryd: the older %d bytes were cut at start]\n" % (size - len(tail)))
            file.write(tail)
            file.truncate()
    except FileNotFoundError:
        return False
    return True


class LogFile(logging.handlers.RotatingFileHandler):
    """A rotating log file that is opened again when the file at its name is not the one
    it writes to (a stat a line: the daemon logs a few lines a minute at most). Each
    file it opens (the first, one after a rotation) is made 0600 first."""

    def _open(self) -> Any:
        private_file(self.baseFilename)
        return super()._open()

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
