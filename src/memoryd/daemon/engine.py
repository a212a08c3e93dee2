"""The daemon's seam to the index and the compiler, and the memory of its own writes.

``Engine`` is used by the batch worker thread only: it owns the SQLite
connection. One refresh = reindex what changed, recompile what that affects,
reindex what the compile wrote (generated files are indexed like the others).
The written paths and their hashes are remembered, so the watcher's events for
them are recognised and dropped: no write loops.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memoryd.config import Config, RootConfig
from memoryd.daemon.batching import Op
from memoryd.paths import Paths

log = logging.getLogger(__name__)
# Past this many paths, one incremental reconcile of the whole root (size+mtime
# fingerprints, no re-reads) is cheaper than following each path.
ONLY_MAX = 64


def digest(path: Path) -> str | None:
    """The content hash of ``path`` (None when it does not exist)."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    except OSError:
        return "unreadable"


class OwnWrites:
    """Files the daemon wrote, with the hash it wrote (None: it deleted them)."""

    def __init__(self) -> None:
        self._wrote: dict[Path, str | None] = {}

    def record(self, paths: Collection[Path]) -> None:
        for path in paths:
            self._wrote[path] = digest(path)

    def drop_own(self, ops: dict[Path, Op]) -> int:
        """Remove from ``ops`` the paths still exactly as the daemon left them."""
        dropped = 0
        for path in [p for p in ops if p in self._wrote]:
            if digest(path) == self._wrote[path]:
                del ops[path]
                dropped += 1
            else:  # someone changed it since: a real change, and our record is obsolete
                del self._wrote[path]
        return dropped


@dataclass
class Refresh:
    indexed: list[Path] = field(default_factory=list)  # rows added, changed or removed
    written: list[Path] = field(default_factory=list)  # compiled files written or removed
    unknown: int = 0


class Engine:
    def __init__(self, paths: Paths) -> None:
        self.paths = paths
        self.db: Any = None
        self.own = OwnWrites()

    def open(self) -> None:
        from memoryd.index import open_index

        self.db = open_index(self.paths)

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None

    def refresh(self, config: Config, root: RootConfig, only: Collection[Path] | None) -> Refresh:
        """Reindex ``only`` (None: the whole root), recompile, reindex the compiled files."""
        from memoryd.index import reconcile

        if only is not None and len(only) > ONLY_MAX:
            only = None
        report = reconcile(self.db, config, [root], only)
        result = Refresh(indexed=[*report.added, *report.changed, *report.removed])
        result.unknown = len(report.unknown)
        if only is not None and not result.indexed:
            return result
        result.written = self.compile(config, root, None if only is None else result.indexed)
        if result.written:
            reconcile(self.db, config, [root], result.written)
        return result

    def compile(self, config: Config, root: RootConfig, changed: list[Path] | None) -> list[Path]:
        from memoryd.compile_io import compile_root

        report = compile_root(root, config, changed=changed)
        written = [*report.written, *report.removed]
        self.own.record(written)
        for problem in report.problems:
            log.warning("compile %s: %s", root.path, problem)
        return written
