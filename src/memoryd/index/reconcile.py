"""Bring the index in line with the files: the only writer of the memories table.

A size+mtime fingerprint decides which files to read again; a content hash
decides whether anything changed. A row is deleted only when its file is
provably gone (or no longer a memory file): a file or folder that cannot be
read is reported as *unknown* and its row kept, so a failed scan never empties
the index. A fingerprint is trusted only when the file was already older than
:data:`RACY_NS` when it was read (an edit within the same mtime tick and of the
same size would otherwise go unseen).
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memoryd.config import Config, RootConfig
from memoryd.index.db import IndexDB, dump_problems, join_lines
from memoryd.index.layout import identify, member
from memoryd.memory import Problem, id_for_path, parse, validate
from memoryd.roots import SKIP_DIRS, is_memory_name, walk_files, walk_root

log = logging.getLogger(__name__)

RACY_NS = 2_000_000_000
BATCH = 500  # files per write transaction
HEAD_BYTES = 64 * 1024  # how much of an oversized file is read for its frontmatter

_UPSERT_COLUMNS = (
    "path", "root", "scope", "layout", "type", "scope_id", "id", "kind", "summary",
    "load_when", "pinned", "supersedes", "superseded_by", "created", "updated", "size",
    "mtime_ns", "checked_ns", "hash", "oversized", "problems", "body",
)  # fmt: skip
_UPSERT = (
    f"INSERT INTO memories ({', '.join(_UPSERT_COLUMNS)}) "
    f"VALUES ({', '.join('?' for _ in _UPSERT_COLUMNS)}) ON CONFLICT(path) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in _UPSERT_COLUMNS[1:])
)
_TOUCH = "UPDATE memories SET size = ?, mtime_ns = ?, checked_ns = ? WHERE path = ?"


@dataclass
class ReconcileReport:
    added: list[Path] = field(default_factory=list)
    changed: list[Path] = field(default_factory=list)
    removed: list[Path] = field(default_factory=list)
    unknown: list[tuple[Path, str]] = field(default_factory=list)
    oversized: list[Path] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def modified(self) -> bool:
        """Whether any row was added, changed or removed."""
        return bool(self.added or self.changed or self.removed)

    def to_json(self) -> dict[str, Any]:
        return {
            "added": [str(p) for p in self.added],
            "changed": [str(p) for p in self.changed],
            "removed": [str(p) for p in self.removed],
            "unknown": [{"path": str(p), "reason": r} for p, r in self.unknown],
            "oversized": [str(p) for p in self.oversized],
            "seconds": round(self.seconds, 4),
        }


@dataclass(frozen=True)
class _Known:
    size: int
    mtime_ns: int
    checked_ns: int
    hash: str


@dataclass(frozen=True)
class _Read:
    data: bytes  # the whole file, or its head when oversized
    size: int
    mtime_ns: int
    hash: str
    oversized: bool


def reconcile(
    db: IndexDB,
    config: Config,
    roots: Sequence[RootConfig] | None = None,
    only: Collection[Path] | None = None,
) -> ReconcileReport:
    """Reconcile ``roots`` (default: every configured root), or just the paths in ``only``."""
    started = time.perf_counter()
    report = ReconcileReport()
    for root in config.roots if roots is None else roots:
        _Pass(db, config, root, report).run(only)
    if only is None:
        _drop_unlisted_foreign_roots(db, [*config.roots, *(roots or ())], report)
    report.seconds = time.perf_counter() - started
    return report


class _Pass:
    """One root's reconcile: plan which paths to look at, then read and write in batches.

    Paths are plain strings here (``pathlib`` costs more than the syscalls at 100k files).
    """

    def __init__(self, db: IndexDB, config: Config, root: RootConfig, report: ReconcileReport):
        self.db = db
        self.root = root
        self.base = str(root.path)
        self.cap = config.search.max_file_bytes
        self.report = report
        self.ops: list[tuple[str, tuple[Any, ...]]] = []

    def run(self, only: Collection[Path] | None) -> None:
        if only is None:
            if not self.root.path.is_dir():
                reason = "root folder is missing or not a folder; its rows are kept"
                self.report.unknown.append((self.root.path, reason))
                return
            files = [f for f in walk_files(self.root.path) if self.member(f)]
            known = self.known(None)
        else:
            files, known = self.plan(only)
        seen = set(files)
        for path in files:
            self.visit(path, known.get(path))
        for path in sorted(known.keys() - seen):
            self.vanished(path)
        self.flush()

    def known(self, prefixes: Iterable[str] | None) -> dict[str, _Known]:
        sql = "SELECT path, size, mtime_ns, checked_ns, hash FROM memories WHERE root = ?"
        if prefixes is None:
            rows = self.db.conn.execute(sql, (self.base,)).fetchall()
        else:  # the path itself or anything below it, by an index range scan (not a full scan)
            sql = sql.replace("root = ?", "+root = ?")  # "+": search by the path index
            sql += " AND (path = ? OR (path > ? AND path < ?))"
            rows = []
            for prefix in set(prefixes):
                params = (self.base, prefix, prefix + "/", prefix + "0")  # "0" sorts after "/"
                rows += self.db.conn.execute(sql, params).fetchall()
        return {r[0]: _Known(r[1], r[2], r[3], r[4]) for r in rows}

    def plan(self, only: Collection[Path]) -> tuple[list[str], dict[str, _Known]]:
        """The files to visit and the rows to check for the changed paths in ``only``."""
        mine = [p for p in only if p == self.root.path or self.root.path in p.parents]
        files: set[str] = set()
        for path in mine:
            if path.is_dir() and not path.is_symlink():
                files.update(str(f) for f in walk_root(path) if self.eligible(f))
            elif self.eligible(path):
                files.add(str(path))
        return sorted(files), self.known(str(p) for p in mine)

    def eligible(self, path: Path) -> bool:
        """Would :func:`walk_root` list this path (a memory file inside the root)?"""
        try:
            relative = path.relative_to(self.root.path)
        except ValueError:
            return False
        if any(part in SKIP_DIRS or part.startswith(".") for part in relative.parts[:-1]):
            return False
        if not is_memory_name(path.name) or not path.is_file():
            return False
        if any(p.is_symlink() for p in path.parents if self.root.path in p.parents):
            return False  # walk_root never descends through a linked folder
        if path.is_symlink() and not path.resolve().is_relative_to(self.root.path.resolve()):
            return False
        return self.member(str(path))

    def relative(self, path: str) -> str:
        return path[len(self.base) + 1 :].replace(os.sep, "/")

    def member(self, path: str) -> bool:
        """A file of the root's layout (a claude root holds transcripts too)."""
        return member(self.root, self.relative(path))

    def visit(self, path: str, known: _Known | None) -> None:
        try:
            st = os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            if known is not None:
                self.remove(path)
            return
        except OSError as exc:
            self.report.unknown.append((Path(path), _reason(exc)))
            return
        if known is not None and _fresh(known, st.st_size, st.st_mtime_ns):
            return
        try:
            read = read_file(Path(path), self.cap)
        except (FileNotFoundError, NotADirectoryError):
            if known is not None:
                self.remove(path)
            return
        except OSError as exc:
            self.report.unknown.append((Path(path), _reason(exc)))
            return
        self.store(path, read, known)

    def store(self, path: str, read: _Read, known: _Known | None) -> None:
        checked = time.time_ns()
        if read.oversized:
            self.report.oversized.append(Path(path))
        if known is not None and known.hash == read.hash:
            self.ops.append((_TOUCH, (read.size, read.mtime_ns, checked, path)))
        else:
            (self.report.changed if known else self.report.added).append(Path(path))
            self.ops.append((_UPSERT, record(self.root, path, read, checked)))
        if len(self.ops) >= BATCH:
            self.flush()

    def vanished(self, path: str) -> None:
        reason = _why_unlisted(self.root.path, Path(path))
        if reason is None:
            self.remove(path)
        else:
            self.report.unknown.append((Path(path), reason))

    def remove(self, path: str) -> None:
        self.report.removed.append(Path(path))
        self.ops.append(("DELETE FROM memories WHERE path = ?", (path,)))

    def flush(self) -> None:
        if not self.ops:
            return
        with self.db.write() as conn:
            for sql, params in self.ops:
                conn.execute(sql, params)
        self.ops = []


def _drop_unlisted_foreign_roots(
    db: IndexDB, listed: Sequence[RootConfig], report: ReconcileReport
) -> None:
    """Remove the rows of layered/claude roots config.yaml no longer lists (opt-out)."""
    keep = sorted({str(r.path) for r in listed})
    marks = ", ".join("?" for _ in keep)
    where = f"layout != 'plugin' AND root NOT IN ({marks})" if keep else "layout != 'plugin'"
    rows = db.conn.execute(f"SELECT path FROM memories WHERE {where}", keep).fetchall()
    if not rows:
        return
    with db.write() as conn:
        conn.execute(f"DELETE FROM memories WHERE {where}", keep)
    report.removed.extend(Path(r[0]) for r in rows)


def _fresh(known: _Known, size: int, mtime_ns: int) -> bool:
    """The fingerprint matches and was taken when the file was already settled."""
    return (
        known.size == size and known.mtime_ns == mtime_ns and known.checked_ns - mtime_ns > RACY_NS
    )


def read_file(path: Path, cap: int) -> _Read:
    """The bytes (or, above ``cap``, the head) of a file and the hash of all of it."""
    with open(path, "rb") as handle:
        st = os.fstat(handle.fileno())
        if st.st_size <= cap:
            data = handle.read()
            digest = hashlib.blake2b(data, digest_size=16).hexdigest()
            return _Read(data, len(data), st.st_mtime_ns, digest, oversized=False)
        head = handle.read(HEAD_BYTES)
        hasher = hashlib.blake2b(head, digest_size=16)
        while chunk := handle.read(1 << 20):
            hasher.update(chunk)
        return _Read(head, st.st_size, st.st_mtime_ns, hasher.hexdigest(), oversized=True)


def record(root: RootConfig, path: str, read: _Read, checked_ns: int) -> tuple[Any, ...]:
    """The memories row for a file (pure: a function of its bytes and place)."""
    relative = path[len(str(root.path)) + 1 :].replace(os.sep, "/")
    memory = parse(read.data)
    ident = identify(root, relative, memory)
    problems = validate(
        memory, expected_id=id_for_path(relative) if root.layout == "plugin" else None
    )
    body = memory.body
    if read.oversized:
        body = ""
        problems.append(
            Problem("file.oversized", f"{read.size} bytes: only the frontmatter is indexed")
        )
    return (
        path, str(root.path), root.scope, root.layout, ident.type, ident.scope_id,
        ident.id, memory.kind, memory.summary, join_lines(memory.load_when),
        int(memory.pinned), join_lines(memory.supersedes), memory.superseded_by,
        memory.created, memory.updated, read.size, read.mtime_ns, checked_ns, read.hash,
        int(read.oversized), dump_problems(problems), body,
    )  # fmt: skip


def _why_unlisted(root: Path, path: Path) -> str | None:
    """None when ``path`` is provably gone (or not a memory file any more), else why unsure."""
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        return _reason(exc)
    folder = path.parent
    while folder == root or root in folder.parents:
        try:
            os.scandir(folder).close()
        except OSError as exc:
            return f"cannot list {folder}: {_reason(exc)}"
        if folder == root:
            break
        folder = folder.parent
    return None


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__
