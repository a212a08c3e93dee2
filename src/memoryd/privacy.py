"""Which of memoryd's folders and files other users of this machine can read.

memoryd makes its own folders 0700 and its files 0600 (:mod:`memoryd.fsutil`), but never
narrows what already exists: a home made by an older memoryd, or a root the user opened
on purpose, stays as it is. ``doctor`` and ``inspect`` say so instead, each such folder or
file once, with the ``chmod`` that closes it: the search database holds a full copy of
every memory's text.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from memoryd.paths import Paths


@dataclass(frozen=True)
class Exposed:
    path: Path
    mode: int  # the permission bits found
    what: str  # "memoryd's folder", "the search database", "a memory root"

    @property
    def message(self) -> str:
        return f"{self.what} is readable by other users (mode {self.mode:o})"

    @property
    def fix(self) -> str:
        private = 700 if stat.S_ISDIR(self._kind()) else 600
        return f"chmod {private} {self.path}"

    def _kind(self) -> int:
        try:
            return self.path.stat().st_mode
        except OSError:
            return stat.S_IFREG


def readable_by_others(path: Path) -> int | None:
    """``path``'s permission bits when group or others may read it, else None."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return None
    return mode if mode & 0o044 else None


def exposed(paths: Paths, roots: Iterable[Path]) -> list[Exposed]:
    """memoryd's own folders, its database and the roots, where others may read them."""
    own = [paths.home] if paths.home is not None else []
    own += [paths.config_dir, paths.cache_dir, paths.state_dir, paths.log_dir]
    places: list[tuple[Path, str]] = [(p, "memoryd's folder") for p in own]
    places.append((paths.index_db, "the search database"))
    places += [(root, "a memory root") for root in roots]
    found, seen = [], set()
    for path, what in places:
        if path in seen:
            continue
        seen.add(path)
        mode = readable_by_others(path)
        if mode is not None:
            found.append(Exposed(path, mode, what))
    return found
