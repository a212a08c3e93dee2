"""One daemon per memoryd home: an flock'ed lock file that holds the pid.

The kernel drops an flock when its process dies, so a stale lock file (left by
a SIGKILL) never blocks a new daemon, and ``running_pid`` never believes a dead
one. An flock is held on an inode, not a path: a lock file deleted under the
daemon (its state folder removed) blocks nobody, so the daemon asks
:meth:`DaemonLock.intact` on its tick and takes the lock again at the path.

Top-level, not in ``daemon/``: the lean recall, freshness and inspect ask
:func:`running_pid` without importing the daemon they ask about.
"""

from __future__ import annotations

import fcntl
import os

TYPE_CHECKING = False  # light: the lean recall asks running_pid (memoryd.lean_recall)
if TYPE_CHECKING:
    from pathlib import Path
    from types import TracebackType


class DaemonLock:
    """``with DaemonLock(path):`` holds the single-instance lock or raises AlreadyRunning."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd: int | None = None

    def acquire(self) -> None:
        from memoryd.fsutil import PRIVATE_FILE, private_dirs

        private_dirs(self.path.parent)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, PRIVATE_FILE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            from memoryd.errors import AlreadyRunning  # the error classes: not for recall

            os.close(fd)
            raise AlreadyRunning(running_pid(self.path), self.path) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        os.fsync(fd)
        self.fd = fd

    def intact(self) -> bool:
        """Whether the file at the lock's path is still the one held (True when none is held).

        Deleted, or replaced by another file, it locks nothing: a second ``memoryd run``
        started beside this one, and ``memoryd status`` said no daemon runs.
        """
        if self.fd is None:
            return True
        try:
            here = os.stat(self.path)
        except OSError:
            return False
        held = os.fstat(self.fd)
        return (here.st_dev, here.st_ino) == (held.st_dev, held.st_ino)

    def retake(self) -> None:
        """Take the lock at its path again, then let the old file go; AlreadyRunning (the
        old file still held) when another daemon took the path's lock first."""
        old, self.fd = self.fd, None
        try:
            self.acquire()
        except BaseException:
            self.fd = old
            raise
        if old is not None:
            os.close(old)  # drops its flock too

    def release(self) -> None:
        if self.fd is not None:
            try:  # noqa: SIM105 - importing contextlib costs the lean recall
                os.ftruncate(self.fd, 0)
            except OSError:
                pass
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None

    def __enter__(self) -> DaemonLock:
        self.acquire()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()


def running_pid(path: Path | str) -> int | None:
    """The pid of the live daemon holding ``path``, or None when none holds it."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            text = os.read(fd, 64).decode("ascii", "replace").strip()
            return int(text) if text.isdigit() else -1
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)
