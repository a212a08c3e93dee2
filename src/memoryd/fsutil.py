"""Atomic file writes: temp file in the same folder, fsync, rename, fsync the folder.

A reader (or a watcher, or git) sees either the old bytes or the new ones, never
a truncated file. ``write_if_changed`` makes no-op writes invisible.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

TEMP_PREFIX = ".memoryd-tmp-"


def atomic_write(path: Path, data: bytes, mode: int | None = None) -> None:
    """Replace ``path`` with ``data`` atomically, keeping its permission bits."""
    import tempfile  # (with shutil and random) only once something is written

    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        try:
            mode = path.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o644
    fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


def write_if_changed(path: Path, data: bytes) -> bool:
    """Write only when the bytes differ; return whether anything was written."""
    try:
        if path.read_bytes() == data:
            return False
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        pass
    atomic_write(path, data)
    return True


def fsync_dir(folder: Path) -> None:
    """Persist a rename in ``folder`` (best effort on platforms without O_DIRECTORY)."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
    try:
        fd = os.open(folder, flags)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
