"""When the index can answer as it is: the rules every reader of it applies the same way.

A recall reads the index only when a reconcile of the roots it searches would change
nothing. The full path (:func:`memoryd.freshness.ensure_fresh`) reconciles to make it
so; the lean ``memoryd recall`` (:mod:`memoryd.lean_recall`) only checks and hands over
to the full path when something would change. Both decide with these functions, so the
lean path skips work but never restates a rule. Light (os alone): the lean path loads it.
"""

from __future__ import annotations

from memoryd.fingerprint import settled

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Sequence
    from typing import Any, TypeVar

    R = TypeVar("R")

# The columns a row's fingerprint is read from, in :func:`fresh_row`'s order.
FINGERPRINT_SQL = "SELECT path, size, mtime_ns, checked_ns{more} FROM memories WHERE root = ?"
_SIZE, _MTIME, _CHECKED = 1, 2, 3


def fresh_row(row: Sequence[Any], size: int, mtime_ns: int) -> bool:
    """Does a row (:data:`FINGERPRINT_SQL`'s columns) hold the fingerprint of a file of
    this size and mtime, taken when the file was already settled?"""
    return row[_SIZE] == size and row[_MTIME] == mtime_ns and settled(mtime_ns, row[_CHECKED])


def to_check(
    roots: Sequence[R], listed: Callable[[R], bool], *, daemon: bool, empty: bool
) -> list[R]:
    """The roots of ``roots`` whose files must be compared with the index.

    A running daemon keeps the roots config.yaml lists fresh, so only the others (a
    project root found from the folder) need a look, unless the index is empty: that is
    never the daemon's work (an open just created or emptied it, or moved a damaged one
    aside), and trusting it answered every recall with nothing until the daemon's next
    full reconcile.
    """
    if daemon and not empty:
        return [r for r in roots if not listed(r)]
    return list(roots)


def foreign_rows(conn: sqlite3.Connection, keep: set[str], *, first: bool = False) -> list[str]:
    """The paths of the rows of layered and claude roots that are not in ``keep`` (the
    roots config.yaml lists, and those being read): a reconcile removes them (opt-out).
    ``first``: stop at the first one (enough to know there is one)."""
    sql = "SELECT path FROM memories WHERE root = ? AND layout != 'plugin'"
    if first:
        sql += " LIMIT 1"
    found: list[str] = []
    for (root,) in conn.execute("SELECT DISTINCT root FROM memories").fetchall():
        if root not in keep:
            found += [path for (path,) in conn.execute(sql, (root,))]
            if first and found:
                break
    return found
