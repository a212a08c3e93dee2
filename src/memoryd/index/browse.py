"""A page of the memories table: filtered, sorted and cut in SQL, never the whole list.

The page's Memories view used to ask ``inspect`` for every memory and sort them in the
browser: 4.4 MB of JSON and 15 s at 10k memories. The index already holds every field the
list shows, so one query answers a page: ``WHERE`` for the filters, ``ORDER BY`` for the
column clicked, ``LIMIT``/``OFFSET`` for the page.

The listing's sort and filter columns are copied once into a narrow temporary table with
an index per sort key, so a page walks an index instead of sorting every row, and reads
the rest of its rows (summary, dates, problems) from the index by rowid. The copy reads
one index of the memories table (``memories_listing``: every column it takes, the derived
ones computed by SQLite as a row is written, see memoryd.index.schema), never the bodies.
Two columns are not in the index and come in with the copy: the hit counts (each root's
``.state.json``) and the number of findings each file has in the cached inspect result.
The copy is made again only when one of the three changed (the index: SQLite's
``data_version``, which moves when another connection commits, and the connection's own
``total_changes``); the kinds, folders and
counts per root the view shows beside the list are read once per copy.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memoryd.index.db import IndexDB, load_problems

# the sort keys: the listing table's column, and whether "ascending" walks it backwards
# (age: the newest first is the smallest age, the largest date)
SORTS = {
    "id": ("id", False),
    "kind": ("kind_key", False),
    "scope": ("scope", False),
    "folder": ("folder", False),
    "age": ("stamp", True),
    "hits": ("hits", False),
    "problems": ("problems", False),
}
FLAGS = ("pinned", "superseded", "problems", "never")
MAX_LIMIT = 500

_BUILD = [
    "DROP TABLE IF EXISTS temp.browse_rows",
    """CREATE TEMP TABLE browse_rows AS SELECT
        m.rowid AS row, m.root, m.scope, m.id, coalesce(m.kind, '') AS kind_key, m.folder,
        m.stamp, m.pinned, m.superseded_by IS NOT NULL AS superseded,
        coalesce(h.n, 0) AS hits, m.own_n + coalesce(f.n, 0) AS problems
        FROM memories AS m INDEXED BY memories_listing
        LEFT JOIN temp.browse_hits AS h ON h.root = m.root AND h.id = m.id
        LEFT JOIN temp.browse_findings AS f ON f.row = m.rowid
        WHERE m.listed""",
    "CREATE INDEX temp.browse_by_id ON browse_rows(id, row)",
]  # the other sorts' indexes: each made when its column is first sorted by (_sorted)
# what a row of the page shows beside the listing's columns: read by rowid, a page at a time
_SHOWN = """
    rowid, root, scope, layout, type, id, kind, summary, pinned, superseded_by, created,
    updated, problems AS own, rel, folder, stamp
"""


@dataclass(frozen=True)
class Query:
    """What the user asked for: the filters, the column to sort by, the page."""

    text: str = ""
    kind: str | None = None  # "" means "no kind"
    folder: str | None = None
    scope: str | None = None
    flag: str | None = None  # one of FLAGS
    sort: str = "id"
    desc: bool = False
    offset: int = 0
    limit: int = 50


@dataclass(frozen=True)
class Page:
    total: int  # rows that pass the filters
    rows: list[dict[str, Any]]
    facets: dict[str, list[str]] = field(default_factory=dict)


Hits = Mapping[Path, Mapping[str, int]]


@dataclass(frozen=True)
class _Made:
    """What one copy was made from, and what it says of every root (read once per copy)."""

    inputs: tuple[tuple[int, int], dict[str, dict[str, int]], dict[str, int]]
    kinds: dict[str, set[str]]  # root -> the kinds ("" for none) of its memories
    folders: dict[str, set[str]]
    counts: dict[str, int]


class Browser:
    """Pages of one open index; keeps the listing table until its inputs change."""

    def __init__(self, db: IndexDB) -> None:
        self.db = db
        self._made: _Made | None = None
        db.conn.execute("PRAGMA temp_store = MEMORY")  # the listing and its inputs

    def page(
        self,
        roots: Sequence[Path],
        query: Query,
        *,
        hits: Hits,
        findings: Mapping[Path, int],
        facets: bool = False,
    ) -> Page:
        """One page of the memories of ``roots``; ``hits`` per root and id, ``findings`` (the
        number of inspect findings) per file; ``facets``: also the kinds and folders to
        filter by."""
        if query.sort not in SORTS:
            raise ValueError(f"cannot sort by {query.sort!r}")
        conn = self.db.conn
        made = self._build(hits, findings)
        names = [str(r) for r in roots]
        clauses, params = _where(names, query)
        where = " AND ".join(clauses)
        if len(clauses) == 1:  # the roots alone (the page as it opens): counted per copy
            total = sum(made.counts.get(name, 0) for name in names)
        else:
            total = int(
                conn.execute(f"SELECT count(*) FROM temp.browse_rows WHERE {where}", params)
                .fetchone()[0]
            )  # fmt: skip
        column, flipped = SORTS[query.sort]
        self._sorted(column)
        direction = "DESC" if query.desc != flipped else "ASC"
        sql = (
            f"SELECT row, hits, problems FROM temp.browse_rows WHERE {where}"
            f" ORDER BY {column} {direction}, id {direction}, row {direction} LIMIT ? OFFSET ?"
        )
        limit = max(1, min(query.limit, MAX_LIMIT))
        picked = conn.execute(sql, [*params, limit, max(0, query.offset)]).fetchall()
        rows = _shown(conn, picked)
        found = {
            "kinds": sorted(set().union(*(made.kinds.get(n, ()) for n in names))),
            "folders": sorted(set().union(*(made.folders.get(n, ()) for n in names))),
        }
        return Page(total, rows, found if facets else {})

    def counts(self, roots: Sequence[Path]) -> dict[str, int]:
        """How many memory files each root has in the listing (call after a page)."""
        counts = self._made.counts if self._made else {}
        return {str(r): counts[str(r)] for r in roots if str(r) in counts}

    def _sorted(self, column: str) -> None:
        """An index to walk for this sort (a page then reads 50 rows, not every row)."""
        self.db.conn.execute(
            f"CREATE INDEX IF NOT EXISTS temp.browse_by_{column} ON browse_rows({column}, id, row)"
        )

    def _build(self, hits: Hits, findings: Mapping[Path, int]) -> _Made:
        """The listing table again when the index, the hit counts or the findings changed."""
        conn = self.db.conn
        # commits of other connections (the daemon's) move data_version, this one's own
        # (a reconcile on it, when no daemon runs) total_changes
        version = int(conn.execute("PRAGMA data_version").fetchone()[0])
        inputs = (
            (version, conn.total_changes),
            {str(root): dict(counts) for root, counts in hits.items()},
            {str(path): n for path, n in findings.items()},
        )
        if self._made is not None and self._made.inputs == inputs:
            return self._made
        conn.execute("BEGIN")  # one transaction, not one per row (the connection autocommits)
        try:
            _inputs(conn, inputs[1], inputs[2])
            for statement in _BUILD:
                conn.execute(statement)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        # what this build changed (its own temporary tables) is not a change of the index
        inputs = ((version, conn.total_changes), inputs[1], inputs[2])
        kinds: dict[str, set[str]] = {}
        folders: dict[str, set[str]] = {}
        counts: dict[str, int] = {}
        groups = "SELECT root, kind_key, folder, count(*) FROM temp.browse_rows GROUP BY 1, 2, 3"
        for root, kind, folder, n in conn.execute(groups):
            kinds.setdefault(root, set()).add(str(kind))
            folders.setdefault(root, set()).add(str(folder))
            counts[root] = counts.get(root, 0) + int(n)
        self._made = _Made(inputs, kinds, folders, counts)
        return self._made


def _inputs(
    conn: sqlite3.Connection, hits: dict[str, dict[str, int]], findings: dict[str, int]
) -> None:
    conn.execute("DROP TABLE IF EXISTS temp.browse_hits")
    conn.execute("DROP TABLE IF EXISTS temp.browse_findings")
    conn.execute(
        "CREATE TEMP TABLE browse_hits (root TEXT, id TEXT, n INTEGER, PRIMARY KEY (root, id))"
    )
    conn.execute("CREATE TEMP TABLE browse_findings (row INTEGER PRIMARY KEY, n INTEGER)")
    # handed over as JSON, one statement per root: 0.1 s less than a row at a time at 20k
    for root, counts in hits.items():
        conn.execute(
            "INSERT OR REPLACE INTO temp.browse_hits SELECT ?, key, value FROM json_each(?)",
            (root, json.dumps(counts)),
        )
    conn.execute(  # by row: the listing's index holds no paths
        "INSERT OR REPLACE INTO temp.browse_findings SELECT m.rowid, j.value"
        " FROM json_each(?) AS j JOIN memories AS m ON m.path = j.key",
        (json.dumps(findings),),
    )


def _shown(conn: sqlite3.Connection, picked: list[tuple[int, int, int]]) -> list[dict[str, Any]]:
    """The rows of a page, in the order picked, with what the list shows of each."""
    marks = ", ".join("?" * len(picked))
    cursor = conn.execute(
        f"SELECT {_SHOWN} FROM memories WHERE rowid IN ({marks})", [row for row, _, _ in picked]
    )
    names = [d[0] for d in cursor.description]
    by_row = {values[0]: dict(zip(names, values, strict=True)) for values in cursor}
    return [
        _row({**by_row[row], "hits": hits, "problems": problems})
        for row, hits, problems in picked
        if row in by_row
    ]


def _where(roots: Sequence[str], query: Query) -> tuple[list[str], list[Any]]:
    marks = ", ".join("?" * len(roots)) or "NULL"
    clauses = [f"root IN ({marks})"]
    params: list[Any] = list(roots)
    needle = query.text.strip()
    if needle:  # the columns the copy leaves out, read from the memories table
        like = "%" + needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        clauses.append(
            "row IN (SELECT rowid FROM memories WHERE id LIKE ? ESCAPE '\\'"
            " OR coalesce(summary, '') LIKE ? ESCAPE '\\' OR rel LIKE ? ESCAPE '\\')"
        )
        params += [like, like, like]
    for column, value in (
        ("kind_key", query.kind),
        ("folder", query.folder),
        ("scope", query.scope),
    ):
        if value is not None:
            clauses.append(f"{column} = ?")
            params.append(value)
    if query.flag is not None:
        if query.flag not in FLAGS:
            raise ValueError(f"no filter {query.flag!r}")
        clauses.append({
            "pinned": "pinned",
            "superseded": "superseded",
            "problems": "problems > 0",
            "never": "hits = 0",
        }[query.flag])  # fmt: skip
    return clauses, params


def _row(values: dict[str, Any]) -> dict[str, Any]:
    own = load_problems(str(values.pop("own")))
    values["path"] = values.pop("rel")
    values["pinned"] = bool(values["pinned"])
    values["superseded"] = values["superseded_by"] is not None
    values["own_problems"] = [{"code": p.code, "message": p.message} for p in own]
    return values
