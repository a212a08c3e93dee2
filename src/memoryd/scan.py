"""Reading a root's files for compile and inspect, re-parsing only what changed.

``scan_root`` walks a root (``roots.walk_root``), stats every file and parses the ones
whose fingerprint (size, mtime, ctime, inode) is new. Parsed results are kept without
their body, so a daemon holding the cache for 100k memories stays small. A file whose
mtime is within a couple of seconds of now is never cached (the "racy git" rule: a
second write inside the same timestamp tick would go unseen).
"""

from __future__ import annotations

import os
import stat
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from memoryd.compiler import is_generated
from memoryd.memory import Memory, parse
from memoryd.roots import relative_id, walk_root

RACY_NS = 2_000_000_000
Fingerprint = tuple[int, int, int, int]


@dataclass(frozen=True)
class Scanned:
    """One file of a root. ``memory`` has its frontmatter and problems, not its body."""

    path: Path
    rel: str  # root-relative POSIX path
    size: int
    memory: Memory | None  # None when the file could not be read, or is generated
    error: str | None = None

    @property
    def generated(self) -> bool:
        return is_generated(self.rel)


class ScanCache:
    """Parsed frontmatter by path and fingerprint; safe to share between threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[Path, tuple[Fingerprint, Memory]] = {}
        self.parsed = 0  # how many files were read and parsed (for tests and benchmarks)

    def get(self, path: Path, fingerprint: Fingerprint) -> Memory | None:
        with self._lock:
            hit = self._entries.get(path)
        return hit[1] if hit and hit[0] == fingerprint else None

    def put(self, path: Path, fingerprint: Fingerprint, memory: Memory) -> None:
        with self._lock:
            self.parsed += 1
            if time.time_ns() - fingerprint[1] > RACY_NS:
                self._entries[path] = (fingerprint, memory)
            else:
                self._entries.pop(path, None)

    def forget_missing(self, root: Path, present: set[Path]) -> None:
        with self._lock:
            for path in [p for p in self._entries if root in p.parents and p not in present]:
                del self._entries[path]


def scan_root(root: Path, cache: ScanCache | None = None) -> list[Scanned]:
    """Every memory-named file of ``root``, sorted by path; generated ones are not parsed."""
    cache = cache if cache is not None else ScanCache()
    files = walk_root(root)
    cache.forget_missing(root, set(files))
    return [scan_file(root, path, cache) for path in files]


def scan_file(root: Path, path: Path, cache: ScanCache) -> Scanned:
    rel = relative_id(root, path)
    if is_generated(rel):
        return Scanned(path, rel, 0, None)
    try:
        st = os.stat(path)
    except OSError as exc:
        return Scanned(path, rel, 0, None, _reason(exc))
    if not stat.S_ISREG(st.st_mode):  # a FIFO or device named like a memory: never open it
        return Scanned(path, rel, 0, None, "not a regular file")
    fingerprint = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
    memory = cache.get(path, fingerprint)
    if memory is None:
        try:
            raw = path.read_bytes()
        except OSError as exc:
            return Scanned(path, rel, st.st_size, None, _reason(exc))
        parsed = parse(raw)
        memory = Memory(meta=parsed.meta, problems=parsed.problems)
        cache.put(path, fingerprint, memory)
    return Scanned(path, rel, st.st_size, memory)


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__
