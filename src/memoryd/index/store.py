"""Writing rows: the memories table and its full-text table, always together.

The full-text table is contentless, so every change to a row's text columns
must tell FTS5 the exact tokens that were inserted (the ``'delete'`` command)
before the new ones go in. That used to be done by triggers; it is done here
instead, in the caller's ``BEGIN IMMEDIATE`` transaction, because a trigger
that writes to FTS5 opens a savepoint per row and FTS5 flushes its pending
terms to a new segment at every savepoint: a cold index of 10k files wrote 10k
tiny segments and spent most of its time merging them (3x slower at 10k,
worse at 100k). Statements issued one by one from here let FTS5 gather terms
in memory and write a few large segments.

This module is the only writer of both tables (:mod:`memoryd.index.reconcile`
is its only caller), so the two never disagree: each function changes both in
the same transaction, and a rolled-back transaction rolls back both.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from typing import Any

from memoryd.index.tokenizer import index_text

COLUMNS = (
    "path", "root", "scope", "layout", "type", "scope_id", "id", "kind", "summary",
    "load_when", "pinned", "supersedes", "superseded_by", "created", "updated", "size",
    "mtime_ns", "checked_ns", "hash", "oversized", "problems", "body",
)  # fmt: skip
TEXT_COLUMNS = ("id", "summary", "load_when", "body")  # the FTS columns, in order
_TEXT_AT = tuple(COLUMNS.index(c) for c in TEXT_COLUMNS)

# A new path is inserted without looking for its row first (the look-up was a fifth of the
# writes of a cold index); a path that has one already (another root lists it too) is updated.
_INSERT = (
    f"INSERT INTO memories ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))}) "
    "ON CONFLICT (path) DO NOTHING"
)
_UPDATE = f"UPDATE memories SET {', '.join(f'{c} = ?' for c in COLUMNS[1:])} WHERE rowid = ?"
_OLD = f"SELECT rowid, path, root, layout, {', '.join(TEXT_COLUMNS)} FROM memories WHERE path = ?"
_FTS_INSERT = f"INSERT INTO memories_fts(rowid, {', '.join(TEXT_COLUMNS)}) VALUES (?, ?, ?, ?, ?)"
_FTS_DELETE = (
    f"INSERT INTO memories_fts(memories_fts, rowid, {', '.join(TEXT_COLUMNS)}) "
    "VALUES ('delete', ?, ?, ?, ?, ?)"
)
_TOUCH = "UPDATE memories SET size = ?, mtime_ns = ?, checked_ns = ? WHERE path = ?"


def texts(row: Sequence[Any]) -> tuple[str | None, ...]:
    """The text a memories row (in :data:`COLUMNS` order) gives each FTS column: its own,
    or none for a compiled file (:func:`compiled`)."""
    if compiled(row[0], row[1], row[3]):
        return _NO_TEXT
    return tuple(row[i] for i in _TEXT_AT)


_NO_TEXT = ("",) * len(TEXT_COLUMNS)
_SUMMARY, _BODY = TEXT_COLUMNS.index("summary"), TEXT_COLUMNS.index("body")


def fts_tokens(rows: Sequence[Sequence[str | None]]) -> list[tuple[str, ...]]:
    """What FTS5 is given for each of ``rows`` (each a :func:`texts`): every column's
    :func:`index_text`, one column at a time (``map`` runs in C), except a summary that
    is the body over again (:func:`_unrepeated`)."""
    columns = [list(map(index_text, column)) for column in zip(*rows, strict=True)]
    if columns:
        columns[_SUMMARY] = list(map(_unrepeated, columns[_SUMMARY], columns[_BODY]))
    return list(zip(*columns, strict=True))


def _unrepeated(summary: str, body: str) -> str:
    """A summary's tokens, or none when they are the body's own: a one-sentence memory
    whose summary is its whole text would count every word twice, a question's filler
    too ("What did you get?" outranked the long memory holding the answer). A summary
    that says more than the body, or less (the first sentence of several), still counts.
    (Equal token lists give strings whose lengths differ only by the double spaces of
    pieces without a token, so a much shorter summary is not compared word by word.)"""
    if summary == body or (2 * len(summary) >= len(body) and summary.split() == body.split()):
        return ""
    return summary


def compiled(path: str, root: str, layout: str) -> bool:
    """A plugin root's ROOT.md or a folder's index.md: memoryd writes them from the
    memories' frontmatter, so they only repeat the memories' summaries and triggers, and
    recall never returns them. They keep their row (fingerprint, text, problems) but give
    FTS5 no text: ROOT.md and the index.md files hold more than a quarter of a root's
    text (1.5 of 5.3 MB at 10k memories), a cold index tokenized and inserted all of it,
    and so did every reindex of them after a ``remember``; and at 10k memories they match
    nearly every query, so FTS5 scored them (and their long position lists) for nothing.
    """
    return layout == "plugin" and (
        path == root + os.sep + "ROOT.md" or path.endswith(os.sep + "index.md")
    )


def put(conn: sqlite3.Connection, row: Sequence[Any], tokens: Sequence[str]) -> None:
    """Insert or replace the row for ``row[0]`` (its path); ``tokens`` is what
    :func:`fts_tokens` gives its :func:`texts`."""
    inserted = conn.execute(_INSERT, tuple(row))
    if inserted.rowcount == 1:
        rowid = inserted.lastrowid
    else:
        old = conn.execute(_OLD, (row[0],)).fetchone()
        rowid = old[0]
        _forget_text(conn, old)
        conn.execute(_UPDATE, (*row[1:], rowid))
    conn.execute(_FTS_INSERT, (rowid, *tokens))


def put_many(
    conn: sqlite3.Connection, items: Sequence[tuple[Sequence[Any], Sequence[str]]]
) -> None:
    """:func:`put` for many ``(row, tokens)`` at once, in one ``executemany`` per table.

    The rows are inserted first. When every one was new (SQLite counts as many changes as
    rows: a cold index), ``AUTOINCREMENT`` gave them consecutive rowids in order, ending at
    ``last_insert_rowid()``. Otherwise the new rowids are read back by path (each new row's
    is above all earlier ones), and a path that already had a row (another root lists it)
    takes :func:`put`'s update branch. A cold index of 10k files spent a seventh of its
    writes issuing two statements per file from Python.
    """
    if not items:
        return
    (top,) = conn.execute("SELECT coalesce(max(rowid), 0) FROM memories").fetchone()
    changes = conn.total_changes
    conn.executemany(_INSERT, [row for row, _ in items])
    if conn.total_changes - changes == len(items):
        (last,) = conn.execute("SELECT last_insert_rowid()").fetchone()
        rowids = range(last - len(items) + 1, last + 1)
        fts = [(rowid, *tokens) for rowid, (_, tokens) in zip(rowids, items, strict=True)]
        conn.executemany(_FTS_INSERT, fts)
        return
    new = dict(conn.execute("SELECT path, rowid FROM memories WHERE rowid > ?", (top,)))
    fts = []
    for row, tokens in items:
        rowid = new.get(row[0])
        if rowid is None:
            put(conn, row, tokens)  # the insert found a row: update it
        else:
            fts.append((rowid, *tokens))
    conn.executemany(_FTS_INSERT, fts)


def delete(conn: sqlite3.Connection, path: str) -> bool:
    """Remove the row of ``path`` (False when there was none)."""
    old = conn.execute(_OLD, (path,)).fetchone()
    if old is None:
        return False
    _forget_text(conn, old)
    conn.execute("DELETE FROM memories WHERE rowid = ?", (old[0],))
    return True


def touch(conn: sqlite3.Connection, path: str, size: int, mtime_ns: int, checked_ns: int) -> None:
    """Record a new fingerprint for an unchanged file (its text is not touched)."""
    conn.execute(_TOUCH, (size, mtime_ns, checked_ns, path))


def _forget_text(conn: sqlite3.Connection, old: Sequence[Any]) -> None:
    """Take a row's tokens out of the full-text table (the exact ones it was given):
    ``old`` is an :data:`_OLD` row, and its text goes to FTS5 as :func:`texts` gave it."""
    rowid, path, root, layout, *text = old
    (given,) = fts_tokens([_NO_TEXT if compiled(path, root, layout) else text])
    conn.execute(_FTS_DELETE, (rowid, *given))
