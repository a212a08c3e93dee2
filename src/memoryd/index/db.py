"""The index handle: :func:`open_index`, :class:`IndexDB` and its :class:`Row`."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sqlite3
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from memoryd import fingerprint
from memoryd.index import schema
from memoryd.index.fetch import Candidate
from memoryd.memory import Problem
from memoryd.paths import Paths

ROW_COLUMNS = (
    "path, root, scope, layout, type, scope_id, id, kind, summary, load_when, pinned, "
    "supersedes, superseded_by, created, updated, size, mtime_ns, hash, problems, body, oversized"
)


@dataclass(frozen=True)
class Row:
    """One indexed memory file, as stored."""

    path: Path
    root: Path
    scope: str
    layout: str
    type: str | None
    scope_id: str | None
    id: str
    kind: str | None
    summary: str | None
    load_when: tuple[str, ...]
    pinned: bool
    supersedes: tuple[str, ...]
    superseded_by: str | None
    created: int | None
    updated: int | None
    size: int
    mtime_ns: int
    hash: str
    problems: tuple[Problem, ...]
    body: str
    oversized: bool = False


def join_lines(values: tuple[str, ...]) -> str | None:
    return "\n".join(values) if values else None


def split_lines(value: str | None) -> tuple[str, ...]:
    return tuple(value.split("\n")) if value else ()


def dump_problems(problems: list[Problem] | tuple[Problem, ...]) -> str:
    if not problems:
        return "[]"  # nearly every file: no JSON encoder run for it
    return json.dumps(
        [{"code": p.code, "message": p.message} for p in problems], ensure_ascii=False
    )


def load_problems(text: str) -> tuple[Problem, ...]:
    if not text or text == "[]":  # nearly every row: no JSON to parse
        return ()
    return tuple(Problem(p["code"], p["message"]) for p in json.loads(text))


@functools.lru_cache(maxsize=64)
def root_path(root: str) -> Path:
    """A root's Path, made once: every row of a recall names one of a few roots."""
    return Path(root)


@functools.lru_cache(maxsize=4096)
def _folder_path(folder: str) -> Path:
    """A folder's Path, made once: a root's memories sit in a few folders."""
    return Path(folder)


def file_path(path: str) -> Path:
    """``Path(path)`` for a file's path as the index stores it (``str`` of a Path).

    Built as its folder's (remembered) Path with its name as one more part: Python 3.11's
    pathlib parses every part of a path given whole (25k instructions, the most of a row's
    cost), and ``folder / name`` parses the folder's parts again (14k). pathlib's own
    shortcut for a child it knows to be one part (what ``iterdir`` uses) takes 2k.
    """
    folder, _sep, name = path.rpartition(os.sep)
    if not folder or name in ("", ".", "..") or path.startswith("//"):  # "//" is a root
        return Path(path)
    parent = _folder_path(folder)
    return _child(parent, name) if _child is not None else parent / name


# pathlib's ``_make_child_relpath`` (Python 3.11 to 3.13): a child Path of one known part,
# not parsed again; ``/`` where a Python lacks it. tests/index/test_fast_paths.py holds
# its result to Path's on every shape of path.
_child = getattr(Path, "_make_child_relpath", None)


_new = object.__new__
_set = object.__setattr__


def row_from_sql(values: tuple[object, ...], made: Path | None = None) -> Row:
    """The :class:`Row` of one ``SELECT {ROW_COLUMNS}`` result.

    Its fields go into the instance's ``__dict__`` at once, as a frozen dataclass's
    ``__init__`` would have set them one by one (21 ``object.__setattr__`` calls, half
    the cost of a row): recall reads its hits' rows this way, reconcile every row.
    ``made``: the file's Path, when the caller already made it from the same ``path``.
    """
    (path, root, scope, layout, type_, scope_id, id_, kind, summary, load_when, pinned,
     supersedes, superseded_by, created, updated, size, mtime_ns, hash_, problems, body,
     oversized) = values  # fmt: skip
    row = _new(Row)
    _set(row, "__dict__", {
        "path": file_path(str(path)) if made is None else made,
        "root": root_path(str(root)),
        "scope": str(scope),
        "layout": str(layout),
        "type": type_ if isinstance(type_, str) else None,
        "scope_id": scope_id if isinstance(scope_id, str) else None,
        "id": str(id_),
        "kind": kind if isinstance(kind, str) else None,
        "summary": summary if isinstance(summary, str) else None,
        "load_when": split_lines(load_when if isinstance(load_when, str) else None),
        "pinned": bool(pinned),
        "supersedes": split_lines(supersedes if isinstance(supersedes, str) else None),
        "superseded_by": superseded_by if isinstance(superseded_by, str) else None,
        "created": created if isinstance(created, int) else None,
        "updated": updated if isinstance(updated, int) else None,
        "size": int(size),  # type: ignore[call-overload]
        "mtime_ns": int(mtime_ns),  # type: ignore[call-overload]
        "hash": str(hash_),
        "problems": load_problems(str(problems)),
        "body": str(body),
        "oversized": bool(oversized),
    })  # fmt: skip
    return row


def candidate_row(c: Candidate, path: Path | None = None) -> Row:
    """The :class:`Row` of a fetch candidate, which holds all of it (one statement read
    both; see :mod:`memoryd.index.fetch`); ``path``: its Path, when already made."""
    return row_from_sql((
        c.path, c.root, c.scope, c.layout, c.type, c.scope_id, c.id, c.kind, c.summary,
        c.load_when, c.pinned, c.supersedes, c.superseded_by, c.created, c.updated, c.size,
        c.mtime_ns, c.hash, c.problems, c.body, c.oversized,
    ), path)  # fmt: skip


class IndexDB:
    """An open index. ``with open_index(paths) as db:`` closes it afterwards."""

    def __init__(self, conn: sqlite3.Connection, file: Path) -> None:
        self.conn = conn
        self.file = file
        self.identity = fingerprint.identity(file)  # the file opened and checked
        self._vouched = 0  # conn.total_changes when the file was last vouched for

    def vouch(self) -> None:
        """After this connection's writes (committed): the file as they left it passes as
        checked (:func:`memoryd.index.schema.vouch`). Nothing to do when it wrote nothing."""
        if self._unvouched():
            self._vouched = self.conn.total_changes
            schema.vouch(self.file, self.identity)

    def _unvouched(self) -> bool:
        """Has this connection committed writes since it last vouched for the file?"""
        return self.conn.total_changes != self._vouched and not self.conn.in_transaction

    def rows(self, root: Path | None = None) -> list[Row]:
        """Every indexed file (of one root), sorted by path."""
        sql = f"SELECT {ROW_COLUMNS} FROM memories"
        params: tuple[str, ...] = ()
        if root is not None:
            sql += " WHERE root = ?"
            params = (str(root),)
        cursor = self.conn.execute(sql + " ORDER BY path", params)
        return [row_from_sql(values) for values in cursor]

    def count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM memories").fetchone()[0])

    def problems(self, paths: Collection[Path]) -> dict[Path, tuple[Problem, ...]]:
        """The problems stored for those of ``paths`` that have any."""
        found: dict[Path, tuple[Problem, ...]] = {}
        names = [str(p) for p in paths]
        for start in range(0, len(names), 500):  # SQLite's limit on bound parameters
            chunk = names[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            cursor = self.conn.execute(
                f"SELECT path, problems FROM memories WHERE path IN ({marks})"
                " AND problems != '[]'",
                chunk,
            )
            found.update((Path(path), load_problems(str(text))) for path, text in cursor)
        return found

    @contextlib.contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A ``BEGIN IMMEDIATE`` transaction."""
        with schema.write(self.conn) as conn:
            yield conn

    def reset(self) -> None:
        """Empty the index (``reindex --full``)."""
        schema.reset(self.conn)

    def close(self) -> None:
        """Close the connection; the checkpoint of a last connection that wrote changes the
        main file, which it then vouches for."""
        wrote = self._unvouched()
        self.conn.close()
        if wrote:
            schema.vouch(self.file, self.identity)

    def __enter__(self) -> IndexDB:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def open_index(
    paths: Paths, *, check_same_thread: bool = True, discard: bool = False
) -> IndexDB:
    """Open (creating, migrating or rebuilding as needed) the index in memoryd's cache;
    ``discard``: emptied, to be rebuilt from the files (``reindex --full``, see
    :func:`memoryd.index.schema.connect`)."""
    file = paths.index_db
    conn = schema.connect(file, check_same_thread=check_same_thread, discard=discard)
    return IndexDB(conn, file)
