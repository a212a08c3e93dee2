"""Free space where memoryd writes: its cache (the index), its state and every root.

On a full disk every write fails ('database or disk is full'), the daemon's status file
included, so the daemon cannot say so: the commands that report (``memoryd status``,
``memoryd doctor``) look for themselves. One ``statvfs`` a disk, nothing else.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path

MIN_FREE = 16 * 1024 * 1024  # below this a batch, a compile or a commit may not fit
CONSEQUENCE = "indexing, compiling and committing there fail"


def free_space(folder: Path) -> int:
    return shutil.disk_usage(folder).free  # what this user may still write (f_bavail)


def low_disks(
    folders: Iterable[Path], free_bytes: Callable[[Path], int] | None = None
) -> tuple[int, list[tuple[Path, int]]]:
    """How many disks hold ``folders``, and the first folder and free bytes of each disk
    under :data:`MIN_FREE` (a folder not made yet counts as its nearest parent)."""
    free_bytes = free_bytes or free_space
    seen: set[int] = set()
    low: list[tuple[Path, int]] = []
    for folder in folders:
        near = next((p for p in (folder, *folder.parents) if p.exists()), None)
        if near is None:
            continue
        try:
            device, free = os.stat(near).st_dev, free_bytes(near)
        except OSError:
            continue
        if device in seen:
            continue
        seen.add(device)
        if free < MIN_FREE:
            low.append((folder, free))
    return len(seen), low


def describe(low: list[tuple[Path, int]]) -> str:
    """'the disk holding X has 1.0 MiB free; ...' for the disks :func:`low_disks` found."""
    return "; ".join(
        f"the disk holding {f} has {free / 1024 / 1024:.1f} MiB free" for f, free in low
    )
