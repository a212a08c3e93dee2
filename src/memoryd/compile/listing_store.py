"""A slim scan listing kept on disk, so a short-lived command need not re-parse a root.

The daemon keeps its compile listing in memory; ``memoryd remember`` or a recall
that saw a hand edit starts with none, and compiling a root of 10k memories
from nothing parses every file (about a second). Their listing is kept in
memoryd's cache folder with :mod:`marshal`: one file per root, holding for each
readable memory its path, fingerprint (size, mtime, ctime, inode), sync flag and
compiled entry. A loaded listing is never trusted as it is: ``scan_root`` walks
the root and stats every file, and reuses an entry only when the fingerprint is
the same, so changes made by anyone since are read again. A file in another
format, of another memoryd or Python, or for another root is a miss; it is a
cache, deleting it loses nothing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import marshal
import os
import sys
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memoryd import __version__
from memoryd.compile.blocks import Entry
from memoryd.compile.listing import SLIM_LOCAL, SLIM_SYNCED, Scanned

FORMAT = 1
_FIELDS = tuple(f.name for f in dataclasses.fields(Entry))
KEY = (FORMAT, __version__, sys.hexversion, _FIELDS)


def listing_file(folder: Path, root: Path) -> Path:
    return folder / f"{zlib.crc32(os.fsencode(root)):08x}.listing"


def load(folder: Path, root: Path) -> dict[str, Scanned] | None:
    """The kept listing of ``root`` (rel -> Scanned), or None."""
    try:
        key, where, items = marshal.loads(listing_file(folder, root).read_bytes())
        if key != KEY or where != str(root):
            return None
        return {
            rel: Scanned(path, rel, size, SLIM_SYNCED if sync else SLIM_LOCAL, None, fp, Entry(*e))
            for path, rel, size, fp, sync, e in items
        }
    except (OSError, EOFError, ValueError, TypeError):
        return None


def save(folder: Path, root: Path, listing: Mapping[str, Scanned]) -> None:
    """Keep the trusted, readable memories of ``listing`` (silently not, when that fails)."""
    items = [
        (s.where, s.rel, s.size, s.fingerprint, s.memory.sync, _fields(s.shows))
        for s in listing.values()
        if s.memory is not None and s.fingerprint is not None and s.shows is not None
    ]
    file = listing_file(folder, root)
    tmp = file.with_name(f"{file.name}.{os.getpid()}.tmp")
    with contextlib.suppress(OSError, ValueError):
        blob = marshal.dumps((KEY, str(root), items))
        folder.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(blob)
        os.replace(tmp, file)
    with contextlib.suppress(OSError):
        tmp.unlink(missing_ok=True)


def _fields(entry: Entry) -> tuple[Any, ...]:
    return tuple(getattr(entry, name) for name in _FIELDS)
