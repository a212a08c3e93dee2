"""A file's fingerprint, and when a fingerprint can be trusted ("settled").

Every cache memoryd keeps about a file (the compile listing, the index's rows, the
parsed config.yaml, the daemon's view of its config, the index's last integrity check)
decides "unchanged" by the same :func:`of` a ``stat``: size, mtime, ctime and inode. An
editor that rewrites a file in place keeps the inode and may keep the size; one that
saves by rename keeps neither; ctime catches a ``touch -r`` that puts the mtime back.

The racy-mtime rule (git's "racy git"): a file modified within :data:`SETTLED_NS` of
the moment it was read may be written again inside the same timestamp tick, leaving its
fingerprint unchanged. Such a fingerprint is not trusted; the file is read again next time.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # light: the lean recall reads fingerprints (memoryd.lean_recall)
if TYPE_CHECKING:
    from pathlib import Path

SETTLED_NS = 2_000_000_000  # coarser than any file system's timestamp tick (FAT: 2 s)

Fingerprint = tuple[int, int, int, int]  # size, mtime_ns, ctime_ns, inode


def of(st: os.stat_result) -> Fingerprint:
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


_WORD = (1 << 64) - 1


def packed(st: os.stat_result) -> int:
    """:func:`of` as one int, for a cache that keeps one per file (the daemon's compile
    listing): a tuple of four ints cost 210 bytes a file, 21 MB at 100k memories; this
    is 60."""
    return pack(of(st))


def pack(fingerprint: Fingerprint) -> int:
    """``fingerprint`` in one int, equal exactly when the fingerprints are (each part
    kept to 64 bits, as a stat gives them: a time before 1970 is negative)."""
    size, mtime, ctime, inode = (part & _WORD for part in fingerprint)
    return size << 192 | mtime << 128 | ctime << 64 | inode


def of_path(path: Path) -> Fingerprint | None:
    """The fingerprint of ``path`` (following links), or None when it cannot be stat'ed."""
    try:
        return of(os.stat(path))
    except OSError:
        return None


def identity(path: Path) -> tuple[int, int] | None:
    """Which file ``path`` is now (device, inode), or None when there is none: a file held
    open stays the one opened after it is deleted or replaced, so a holder compares."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def settled(mtime_ns: int, read_ns: int) -> bool:
    """Was a file with this mtime settled when it was read at ``read_ns``?"""
    return read_ns - mtime_ns > SETTLED_NS
