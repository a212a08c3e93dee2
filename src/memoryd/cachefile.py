"""One cache file: data kept with :mod:`marshal` under a key, in memoryd's cache folder.

What a short-lived command would otherwise recompute (config.yaml's parsed data, a root's
compile listing) is kept in a file holding ``(key, data)``. The key says what the data was
made from (a file's identity, memoryd's and Python's versions, a format number); a file
whose key differs, or that is missing, unreadable or foreign, is a miss. Writing never
fails the caller: it is a cache, and losing it costs only the recomputation.
"""

from __future__ import annotations

import contextlib
import itertools
import marshal
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, BinaryIO

from memoryd.fsutil import PRIVATE_FILE, private_dirs


def read(file: Path, key: Any) -> Any:
    """The data kept in ``file`` under ``key``, or None."""
    try:
        kept, data = marshal.loads(file.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    return data if kept == key else None


def write(file: Path, key: Any, data: Any) -> None:
    """Keep ``data`` under ``key`` (silently not, when marshal or the disk refuses)."""
    try:
        blob = marshal.dumps((key, data))
    except ValueError:  # a value marshal cannot hold (a YAML date): the caller recomputes
        return
    _replace(file, lambda handle: handle.write(blob))


# A long list is kept a part at a time: (key, PARTS), then each part, then None. Its bytes
# and its items' tuples are then never all in memory at once (a compile listing of 300k
# memories made 150 MB of them, the peak of a cold reindex).
PARTS = "parts"
PART_ITEMS = 4096


def write_list(file: Path, key: Any, items: Iterable[Any]) -> None:
    """Keep the list of ``items`` under ``key``, marshalled a part at a time."""

    def parts(handle: BinaryIO) -> None:
        marshal.dump((key, PARTS), handle)
        it = iter(items)
        while part := list(itertools.islice(it, PART_ITEMS)):
            marshal.dump(part, handle)
        marshal.dump(None, handle)

    with contextlib.suppress(ValueError):  # a value marshal cannot hold: recomputed
        _replace(file, parts)


def read_list(file: Path, key: Any) -> list[Any] | None:
    """The list :func:`write_list` kept in ``file`` under ``key``, or None."""
    items: list[Any] = []
    try:
        with file.open("rb") as handle:
            if marshal.load(handle) != (key, PARTS):
                return None
            while (part := marshal.load(handle)) is not None:
                items += part
    except (OSError, EOFError, ValueError, TypeError):
        return None
    return items


def _replace(file: Path, write_to: Callable[[BinaryIO], object]) -> None:
    """``file`` replaced, at once, by what ``write_to`` writes (or left as it is)."""
    tmp = file.with_name(f"{file.name}.{os.getpid()}.tmp")
    try:
        with contextlib.suppress(OSError):  # a read-only cache folder only costs the recompute
            private_dirs(file.parent)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
            with os.fdopen(fd, "wb") as handle:
                write_to(handle)
            os.replace(tmp, file)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
