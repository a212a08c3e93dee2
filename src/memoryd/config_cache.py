"""config.yaml's parsed data, kept so that a command need not import PyYAML.

Importing PyYAML costs about 10 ms, a tenth of ``memoryd recall``'s budget.
The parsed data (plain mappings, lists, strings and numbers) is kept in one
:mod:`memoryd.cachefile` in memoryd's cache folder, keyed by the file's identity (path,
inode, size, mtime, ctime) and the Python version. Any difference, or a cache
that is missing, unreadable or foreign, is a miss: the caller parses the YAML
and stores the result. Only the parse is spared: validation runs every time.

A file modified in the last :data:`SETTLED_S` seconds is not stored: a second
write within the same timestamp tick could leave its identity unchanged.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memoryd import cachefile

SETTLED_S = 2.0

Stamp = tuple[int, str, int, int, int, int]


class ConfigCache:
    def __init__(self, file: Path, clock: Callable[[], float] = time.time) -> None:
        self.file = file
        self.clock = clock

    @staticmethod
    def stamp(source: Path) -> tuple[Stamp, float]:
        """``source``'s identity, and its mtime (raises ``FileNotFoundError``)."""
        st = os.stat(source)
        key = (sys.hexversion, str(source), st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        return key, st.st_mtime

    def get(self, stamp: Stamp) -> Any:
        """The data stored for ``stamp``, or None."""
        return cachefile.read(self.file, stamp)

    def put(self, stamp: Stamp, mtime: float, data: Any) -> None:
        """Store ``data`` for ``stamp`` (silently not, when that cannot be done safely)."""
        if data is not None and self.clock() - mtime >= SETTLED_S:
            cachefile.write(self.file, stamp, data)
