"""Atomic file writes: temp file in the same folder, fsync, rename, fsync the folder.

A reader (or a watcher, or git) sees either the old bytes or the new ones, never
a truncated file. ``write_if_changed`` makes no-op writes invisible.

Private by default: a folder memoryd makes is 0700 and a file 0600, whatever the umask
(its cache holds a full copy of every memory's text). What exists keeps its mode: a
file replaced keeps its bits, and a new file in a folder that lets others read it (a
root the user opened on purpose) is 0644 like its neighbours.
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
    private_dirs(folder)
    if mode is None:
        try:
            mode = os.stat(path).st_mode & 0o7777
        except FileNotFoundError:
            mode = new_file_mode(folder)
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


PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600
SHARED_FILE = 0o644


def private_dirs(folder: StrPath) -> None:
    """Make ``folder`` and its missing parents, each 0700 whatever the umask; folders
    that exist keep their mode."""
    missing: list[str] = []
    here = os.path.abspath(folder)
    while not os.path.isdir(here):
        missing.append(here)
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    for name in reversed(missing):
        try:
            os.mkdir(name, PRIVATE_DIR)
        except FileExistsError:
            if not os.path.isdir(name):
                raise
            continue
        os.chmod(name, PRIVATE_DIR)  # mkdir's mode is narrowed by the umask


def private_file(path: StrPath) -> None:
    """Create ``path`` empty and 0600 (and its folders 0700) when it does not exist, so
    what opens it next (SQLite, a log handler) writes into a private file."""
    path = os.fspath(path)
    private_dirs(os.path.dirname(path) or ".")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE)
    except FileExistsError:
        return
    try:
        os.fchmod(fd, PRIVATE_FILE)
    finally:
        os.close(fd)


def new_file_mode(folder: StrPath) -> int:
    """0600, or 0644 in a folder that lets others read it (opened on purpose)."""
    try:
        opened = os.stat(folder).st_mode & 0o044
    except OSError:
        opened = 0
    return SHARED_FILE if opened else PRIVATE_FILE


def _temp_file(folder: str) -> tuple[int, str]:
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    for _ in range(_TEMP_TRIES):
        tmp = os.path.join(folder, TEMP_PREFIX + os.urandom(4).hex())
        try:
            return os.open(tmp, flags, 0o600), tmp
        except FileExistsError:
            continue
        except OSError as exc:  # the folder refuses: name it, not a file that never existed
            raise OSError(exc.errno, exc.strerror, folder) from None
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
