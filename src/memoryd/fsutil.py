"""Atomic file writes: temp file in the same folder, fsync, rename, fsync the folder.

A reader (or a watcher, or git) sees either the old bytes or the new ones, never
a truncated file. ``write_if_changed`` makes no-op writes invisible.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # pathlib and typing stay off the lean recall's imports (its hit counts)
if TYPE_CHECKING:
    from pathlib import Path

    StrPath = str | os.PathLike[str]

TEMP_PREFIX = ".memoryd-tmp-"
_TEMP_TRIES = 100


def atomic_write(
    path: StrPath, data: bytes, mode: int | None = None, *, durable: bool = True
) -> None:
    """Replace ``path`` with ``data`` atomically, keeping its permission bits.

    ``durable=False`` skips the two fsyncs (the data's and the folder's): a reader still
    sees the old bytes or the new ones, but a crash may lose the write, or on some file
    systems leave an empty file. Only for data whose loss costs nothing a user relies
    on (hit counts); each fsync costs several milliseconds on a busy disk.

    The temp file is ``.memoryd-tmp-`` and 8 random characters of ``[a-z0-9_]`` in the same
    folder (what ``tempfile.mkstemp`` made; sync recognises the name), created here with
    ``O_EXCL`` because importing tempfile costs a tenth of ``memoryd recall``.
    """
    path = os.fspath(path)
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, exist_ok=True)
    if mode is None:
        try:
            mode = os.stat(path).st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o644
    fd, tmp = _temp_file(folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:  # noqa: SIM105 - importing contextlib costs the lean recall
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    if durable:
        fsync_dir(folder)


def _temp_file(folder: str) -> tuple[int, str]:
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    for _ in range(_TEMP_TRIES):
        tmp = os.path.join(folder, TEMP_PREFIX + os.urandom(4).hex())
        try:
            return os.open(tmp, flags, 0o600), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary file name in {folder}")


def read_or_none(path: Path) -> bytes | None:
    """``path``'s bytes, or None when it cannot be read (gone, a folder, no permission)."""
    try:
        return path.read_bytes()
    except OSError:
        return None


def write_if_changed(path: Path, data: bytes) -> bool:
    """Write only when the bytes differ; return whether anything was written."""
    try:
        with open(path, "rb") as handle:
            if handle.read() == data:
                return False
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        pass
    atomic_write(path, data)
    return True


def fsync_dir(folder: StrPath) -> None:
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
