"""What an exception that is not a :class:`MemorydError` means for the user.

The machine's state (a full disk, a read-only file system, a folder memoryd may not
write) gets its one-line error and fix; anything else is a bug, whose traceback goes to
the log file. :func:`memoryd.cli.main` reports through here, and so do the hooks that
answer with the reason instead of failing the user's turn (``context``, ``guard``):
a module below both, so ``commands/`` never imports ``cli``.
"""

from __future__ import annotations

import logging
import sys

from memoryd.app import App
from memoryd.errors import MemorydError


def as_error(app: App, exc: Exception) -> MemorydError:
    """What :func:`memoryd.cli.main` reports for ``exc``, as an error: the machine's state
    with its fix, or a bug (its traceback logged, as main does). For a hook, which answers with the
    reason and exit 0 rather than failing the user's turn."""
    if isinstance(exc, MemorydError):
        return exc
    state = machine_state(exc)
    if state is not None:
        return MemorydError(*state)
    where = log_bug(app, exc)
    return MemorydError(f"internal error: {type(exc).__name__}: {exc}", hint=where)


def machine_state(exc: BaseException) -> tuple[str, str] | None:
    """The one-line error and its fix for a failure that is the machine's state, not a
    bug: a full disk or quota (an OSError, or SQLite's own words), a read-only file system,
    a path memoryd may not write. None for any other failure. Every file memoryd writes is
    replaced whole, so the command stopped with nothing half-written."""
    import errno

    stopped = "the command stopped before it finished"
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"{exc.strerror}: {stopped}", FREE_SPACE
    if type(exc).__name__ == "OperationalError" and "disk is full" in str(exc):
        return f"{exc}: {stopped}", FREE_SPACE
    if not isinstance(exc, OSError) or not exc.filename:
        return None
    gone = _missing_target(exc.filename)
    if gone is not None and exc.errno in (errno.EEXIST, errno.ENOENT):
        # a folder linked to a drive that is not mounted (~/.cache on an external disk)
        hint = f"mount or create {gone} (or remove the link), then run it again"
        return f"{exc.filename} is a link to {gone}, which does not exist: {stopped}", hint
    if exc.errno == errno.EROFS:
        hint = (
            "memoryd must write there: remount it read-write (or move that folder), "
            "then run it again"
        )
    elif exc.errno in (errno.EACCES, errno.EPERM):
        hint = "memoryd cannot use it: fix its permissions (ls -ld shows them), then run it again"
    else:
        return None
    return f"{exc.strerror}: {exc.filename}: {stopped}", hint


FREE_SPACE = "free some space ('df -h' shows which disk), then run it again"


def _missing_target(name: object) -> str | None:
    """The target of ``name`` when it is a symbolic link to nothing (None otherwise)."""
    import os

    if not isinstance(name, str) or not os.path.islink(name) or os.path.exists(name):
        return None
    return os.readlink(name)


def log_bug(app: App, exc: BaseException) -> str:
    try:
        log_file = app.paths.log_file
        from memoryd.fsutil import private_file

        private_file(log_file)
        handler = logging.FileHandler(log_file, encoding="utf-8", errors="backslashreplace")
    except Exception:
        return "please report it with the command you ran"
    bug = logging.getLogger("memoryd.bug")
    bug.propagate = False
    bug.addHandler(handler)
    try:
        bug.error("unhandled error in %s", " ".join(sys.argv), exc_info=exc)
    finally:
        bug.removeHandler(handler)
        handler.close()
    return f"traceback in {log_file}; please report it"
