"""config.yaml's parsed data, kept so that a command need not import PyYAML.

Importing PyYAML costs about 10 ms, a tenth of ``memoryd recall``'s budget.
The parsed data (plain mappings, lists, strings and numbers) is kept in one
:mod:`memoryd.cachefile` in memoryd's cache folder, keyed by the file's identity (path,
inode, size, mtime, ctime) and the Python version. Any difference, or a cache
that is missing, unreadable or foreign, is a miss: the caller parses the YAML
and stores the result. Only the parse is spared: validation runs every time.

A file modified in the last two seconds is not stored: a second write within the
same timestamp tick could leave its identity unchanged (:mod:`memoryd.fingerprint`).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memoryd import cachefile, fingerprint

Stamp = tuple[int, str, fingerprint.Fingerprint]


class ConfigCache:
    def __init__(self, file: Path, clock: Callable[[], float] = time.time) -> None:
        self.file = file
        self.clock = clock

    @staticmethod
    def stamp(source: Path) -> tuple[Stamp, float]:
        """``source``'s identity, and its mtime (raises ``FileNotFoundError``)."""
        st = os.stat(source)
        return (sys.hexversion, str(source), fingerprint.of(st)), st.st_mtime

    def get(self, stamp: Stamp) -> Any:
        """The data stored for ``stamp``, or None."""
        return cachefile.read(self.file, stamp)

    def put(self, stamp: Stamp, mtime: float, data: Any) -> None:
        """Store ``data`` for ``stamp`` (silently not, when that cannot be done safely)."""
        now_ns, mtime_ns = int(self.clock() * 1e9), int(mtime * 1e9)
        if data is not None and fingerprint.settled(mtime_ns, now_ns):
            cachefile.write(self.file, stamp, data)
