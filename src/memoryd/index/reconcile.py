"""Bring the index in line with the files: the only writer of the memories table.

A size+mtime fingerprint decides which files to read again; a content hash
decides whether anything changed. A row is deleted only when its file is
provably gone (or no longer a memory file): a file or folder that cannot be
read is reported as *unknown* and its row kept, so a failed scan never empties
the index. A fingerprint is trusted only when the file was already settled
(:func:`memoryd.fingerprint.settled`) when it was read: an edit within the same mtime
tick and of the same size would otherwise go unseen.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import operator
import os
import sqlite3
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from memoryd import fingerprint as fp
from memoryd.config.sections import Config, RootConfig
from memoryd.index import store
from memoryd.index.db import IndexDB
from memoryd.index.layout import member
from memoryd.index.loader import HEAD_BYTES, LOAD_CHUNK, Failed, Loaded, Spread, load_many, reason
from memoryd.index.staleness import FINGERPRINT_SQL, foreign_rows, fresh_row
from memoryd.layouts import every_file_belongs
from memoryd.roots import listed, walk_files, walk_root

log = logging.getLogger(__name__)

# Files per write transaction, and the bytes of their text at most. FTS5 writes a segment of
# its index at every commit and merges segments as it goes, so fewer, larger transactions
# cost a cold index a third less in writes (with FTS5's hashsize raised to match, see
# memoryd.index.schema); the byte cap keeps a batch of large files from filling memory. The
# byte cap is what ends a batch of memories (a few KB each): a cold index of 10k (9 MB) is
# one transaction, and FTS5 one segment for a query to read where 5000 files a batch left
# three (a first-run query at 10k took 11% less; the cold index the same CPU). A batch's
# rows and tokens are Python objects several times the size of its text, at the peak of a
# cold index: 12 MB, not 16, took 25 MB off a cold reindex's peak at 100k (196 -> 171 MB)
# for no CPU that could be told apart from the machine's noise.
BATCH = 20_000
BATCH_BYTES = 12 << 20
# A pass that reads this many files writes with a page cache of BULK_CACHE_KIB (see
# _page_cache): 32 MiB made a cold index's writes of 100k files a fifth cheaper; 128 MiB
# gained less (more memory to manage than pages to reuse).
BULK_FILES = 2000
BULK_CACHE_KIB = 32 << 10


_KINDS = ("added", "changed", "removed", "oversized")
_PATH_ORDER = operator.methodcaller("split", "/")  # how PosixPath sorts its str: by parts


@dataclass
class ReconcileReport:
    """What one reconcile did to the index.

    The paths are gathered as str (``names``) and become sorted Paths when first asked
    for: a cold index of 100k files spent half a second making and sorting Paths that
    ``memoryd reindex`` only counts.
    """

    unknown: list[tuple[Path, str]] = field(default_factory=list)
    seconds: float = 0.0
    names: dict[str, list[str]] = field(
        default_factory=lambda: {kind: [] for kind in _KINDS}, repr=False
    )

    def _paths(self, kind: str) -> list[Path]:
        return [Path(name) for name in sorted(self.names[kind], key=_PATH_ORDER)]

    @functools.cached_property
    def added(self) -> list[Path]:
        return self._paths("added")

    @functools.cached_property
    def changed(self) -> list[Path]:
        return self._paths("changed")

    @functools.cached_property
    def removed(self) -> list[Path]:
        return self._paths("removed")

    @functools.cached_property
    def oversized(self) -> list[Path]:
        return self._paths("oversized")

    def count(self, kind: str) -> int:
        """How many paths were ``kind`` (added, changed, removed, oversized)."""
        return len(self.names[kind])

    @property
    def modified(self) -> bool:
        """Whether any row was added, changed or removed."""
        names = self.names
        return bool(names["added"] or names["changed"] or names["removed"])

    def to_json(self) -> dict[str, Any]:
        ordered = {kind: sorted(self.names[kind], key=_PATH_ORDER) for kind in _KINDS}
        return {
            "added": ordered["added"],
            "changed": ordered["changed"],
            "removed": ordered["removed"],
            "unknown": [{"path": str(p), "reason": r} for p, r in self.unknown],
            "oversized": ordered["oversized"],
            "seconds": round(self.seconds, 4),
        }


SPREAD = Spread()  # a cold index of thousands of files is loaded by worker processes too
# Told of each file a pass parsed whole: its root, path, fingerprint (None: read too soon
# after its last change to be trusted, see memoryd.fingerprint.settled) and frontmatter. A
# compile after the reconcile takes them and need not read and parse every file again.
Parsed = Callable[[RootConfig, str, fp.Fingerprint | None, dict[Any, Any]], None]


NOT_UTF8 = "the file name is not valid UTF-8, so it cannot be searched; rename it to index it"


def _storable(path: str) -> bool:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:  # surrogate-escaped bytes from the file system
        return False
    return True


# A row's fingerprint as SQLite returns it (staleness.FINGERPRINT_SQL's columns, then the
# hash). A plain row, not a NamedTuple: a full reconcile holds one per file, and building
# 10k NamedTuples was a fifth of a no-change reconcile.
_Known = tuple[str, int, int, int, str]
_HASH: Final = 4


def reconcile(
    db: IndexDB,
    config: Config,
    roots: Sequence[RootConfig] | None = None,
    only: Collection[Path] | None = None,
    *,
    spread: Spread = SPREAD,
    parsed: Parsed | None = None,
) -> ReconcileReport:
    """Reconcile ``roots`` (default: every configured root), or just the paths in ``only``;
    ``parsed`` hears of each file read and parsed (see :data:`Parsed`)."""
    started = time.perf_counter()
    report = ReconcileReport()
    for root in config.roots if roots is None else roots:
        _Pass(db, config, root, report, spread, parsed).run(only)
    if only is None:
        _drop_unlisted_foreign_roots(db, [*config.roots, *(roots or ())], report)
    if config.search.semantic:  # the optional embeddings follow the rows they were made of
        from memoryd.index import semantic

        semantic.update(db.conn)
    report.seconds = time.perf_counter() - started
    return report


class _Pass:
    """One root's reconcile: plan which paths to look at, then read and write in batches.

    Paths are plain strings here (``pathlib`` costs more than the syscalls at 100k files).
    """

    def __init__(  # noqa: PLR0917 - the pass's parts, from reconcile
        self,
        db: IndexDB,
        config: Config,
        root: RootConfig,
        report: ReconcileReport,
        spread: Spread,
        parsed: Parsed | None,
    ) -> None:
        self.db = db
        self.spread = spread
        self.parsed = parsed
        self.root = root
        self.base = str(root.path)
        self.cap = config.search.max_file_bytes
        self.report = report
        self.ops: list[Callable[[sqlite3.Connection], object]] = []  # pending writes
        self.puts: list[tuple[tuple[Any, ...], tuple[str, ...]]] = []  # pending rows, in bulk
        self.pending_bytes = 0  # the text the pending writes hold

    def run(self, only: Collection[Path] | None) -> None:
        if only is None:
            if not self.root.path.is_dir():
                reason = "root folder is missing or not a folder; its rows are kept"
                self.report.unknown.append((self.root.path, reason))
                return
            files = walk_files(self.root.path)
            if every_file_belongs(self.root.layout):  # only a non-ASCII name needs a look
                files = [f for f in files if f.isascii() or self.member(f)]
            else:
                files = [f for f in files if self.member(f)]
            known = self.known(None)
        else:
            files, known = self.plan(only)
        stale = self.stale_files(files, known)
        olds = [known[p][_HASH] if p in known else None for p in stale]
        with _page_cache(self.db.conn, BULK_CACHE_KIB if len(stale) >= BULK_FILES else 0):
            for path, result in self.load_all(stale, olds):
                self.store(path, result, known.get(path))
            for path in sorted(known.keys() - set(files)):
                self.vanished(path)
            self.flush()

    def load_all(
        self, paths: Sequence[str], old_hashes: Sequence[str | None]
    ) -> Iterator[tuple[str, Loaded | Failed]]:
        """``(path, load result)`` for each path; large batches in worker processes, in the
        order they finish (:mod:`memoryd.index.pool`), small ones here, in order (a chunk
        at a time, phase by phase: :func:`memoryd.index.loader.load_many`)."""
        cpus = os.cpu_count() or 1
        if len(paths) >= self.spread.min_files and cpus >= self.spread.min_cpus:
            from memoryd.index.pool import load_parallel  # subprocess stays off small batches

            items = list(zip(paths, old_hashes, strict=True))
            workers = max(1, min(3, cpus - 1))
            yield from load_parallel(self.root, items, self.cap, workers, self.spread)
            return
        for start in range(0, len(paths), LOAD_CHUNK):  # a pair a file, a chunk at a time
            end = start + LOAD_CHUNK  # (all at once: 17 MB of tuples held at 300k)
            chunk = list(zip(paths[start:end], old_hashes[start:end], strict=True))
            loaded = load_many(self.root, chunk, self.cap)
            yield from zip(paths[start:end], loaded, strict=True)

    def known(self, prefixes: Iterable[str] | None) -> dict[str, _Known]:
        sql = FINGERPRINT_SQL.format(more=", hash")
        if prefixes is None:
            rows = self.db.conn.execute(sql, (self.base,)).fetchall()
        else:  # the path itself or anything below it, by an index range scan (not a full scan)
            sql = sql.replace("root = ?", "+root = ?")  # "+": search by the path index
            sql += " AND (path = ? OR (path > ? AND path < ?))"
            rows = []
            for prefix in set(prefixes):
                params = (self.base, prefix, prefix + "/", prefix + "0")  # "0" sorts after "/"
                rows += self.db.conn.execute(sql, params).fetchall()
        return {row[0]: row for row in rows}

    def plan(self, only: Collection[Path]) -> tuple[list[str], dict[str, _Known]]:
        """The files to visit and the rows to check for the changed paths in ``only``."""
        mine = [p for p in only if p == self.root.path or self.root.path in p.parents]
        for path in [p for p in mine if not _storable(str(p))]:
            mine.remove(path)
            self.report.unknown.append((path, NOT_UTF8))
        files: set[str] = set()
        for path in mine:
            if path.is_dir() and not path.is_symlink():
                files.update(str(f) for f in walk_root(path) if self.eligible(f))
            elif self.eligible(path):
                files.add(str(path))
        return sorted(files), self.known(str(p) for p in mine)

    def eligible(self, path: Path) -> bool:
        """Would :func:`walk_root` list this path, a readable file of the root's layout?"""
        return listed(self.root.path, path) and path.is_file() and self.member(str(path))

    def relative(self, path: str) -> str:
        return path[len(self.base) + 1 :].replace(os.sep, "/")

    def member(self, path: str) -> bool:
        """A file of the root's layout (a claude root holds transcripts too) whose name
        SQLite can store: a name that is not UTF-8 (``caf\\xe9.md``) is reported, not
        indexed, and sync still carries it."""
        if not path.isascii() and not _storable(path):
            self.report.unknown.append((Path(path), NOT_UTF8))
            return False
        return member(self.root, self.relative(path))

    def stale_files(self, files: Sequence[str], known: dict[str, _Known]) -> list[str]:
        """The files that must be read (their fingerprint is not a settled match).

        One loop with its lookups bound: it runs for every file of a no-change reconcile.
        A file without a row is read without a stat first (every file of a cold index: a
        tenth of a cold index's system calls): the read's own ``fstat`` gives its
        fingerprint, and a file that cannot be read is reported by the load as the stat
        would have (gone: no row to remove; unreadable: unknown, with the reason).
        """
        stale: list[str] = []
        stat, row_of, add = os.stat, known.get, stale.append
        for path in files:
            row = row_of(path)
            if row is None:
                add(path)
                continue
            try:
                st = stat(path)
            except (FileNotFoundError, NotADirectoryError):
                add(path)  # gone since the walk: the load says so and the row goes
                continue
            except OSError as exc:
                self.report.unknown.append((Path(path), reason(exc)))
                continue
            if not fresh_row(row, st.st_size, st.st_mtime_ns):
                add(path)
        return stale

    def store(self, path: str, result: Loaded | Failed, known: _Known | None) -> None:
        if isinstance(result, Failed):
            if not result.gone:
                self.report.unknown.append((Path(path), result.reason))
            elif known is not None:
                self.remove(path)
            return
        if result.oversized:
            self.report.names["oversized"].append(path)
        if self.parsed is not None and result.meta is not None:
            settled = fp.settled(result.mtime_ns, result.checked_ns)
            self.parsed(self.root, path, result.fingerprint if settled else None, result.meta)
        if result.row is None:  # the load found the hash it was given: only the fingerprint moved
            fingerprint = (result.size, result.mtime_ns, result.checked_ns)
            self.ops.append(lambda conn: store.touch(conn, path, *fingerprint))
        else:
            self.report.names["changed" if known else "added"].append(path)
            self.puts.append((result.row, result.tokens))
            self.pending_bytes += min(result.size, HEAD_BYTES) if result.oversized else result.size
        if len(self.ops) + len(self.puts) >= BATCH or self.pending_bytes >= BATCH_BYTES:
            self.flush()

    def vanished(self, path: str) -> None:
        reason = _why_unlisted(self.root.path, Path(path))
        if reason is None:
            self.remove(path)
        else:
            self.report.unknown.append((Path(path), reason))

    def remove(self, path: str) -> None:
        self.report.names["removed"].append(path)
        self.ops.append(lambda conn: store.delete(conn, path))

    def flush(self) -> None:
        if not self.ops and not self.puts:
            return
        try:
            with self.db.write() as conn:
                for op in self.ops:  # touches and removes: a pass never puts their paths
                    op(conn)
                store.put_many(conn, self.puts)
        finally:
            self.ops, self.puts, self.pending_bytes = [], [], 0


@contextlib.contextmanager
def _page_cache(conn: sqlite3.Connection, kib: int) -> Iterator[None]:
    """SQLite's page cache at ``kib`` KiB (0: as it is) while writing, then as it was.

    A batch of 5000 files touches far more pages (the rows, three indexes, FTS5's segments)
    than the default 2 MiB hold, and every page pushed out is read and parsed again: a
    cold index of 100k spent a fifth more on its writes with it. A daemon's connection
    gives the memory back afterwards (a smaller cache frees the pages above it).
    """
    if not kib:
        yield
        return
    (before,) = conn.execute("PRAGMA cache_size").fetchone()
    conn.execute(f"PRAGMA cache_size = {-kib}")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA cache_size = {int(before)}")


def _drop_unlisted_foreign_roots(
    db: IndexDB, listed: Sequence[RootConfig], report: ReconcileReport
) -> None:
    """Remove the rows of layered/claude roots config.yaml no longer lists (opt-out)."""
    paths = foreign_rows(db.conn, {str(r.path) for r in listed})
    if not paths:
        return
    with db.write() as conn:
        for path in paths:
            store.delete(conn, path)
    report.names["removed"].extend(paths)


def _why_unlisted(root: Path, path: Path) -> str | None:
    """None when ``path`` is provably gone (or not a memory file any more), else why unsure."""
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        return reason(exc)
    folder = path.parent
    while folder == root or root in folder.parents:
        try:
            os.scandir(folder).close()
        except OSError as exc:
            return f"cannot list {folder}: {reason(exc)}"
        if folder == root:
            break
        folder = folder.parent
    return None
