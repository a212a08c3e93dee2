"""A page of the memories table: filtered, sorted and cut in SQL, never the whole list.

The page's Memories view used to ask ``inspect`` for every memory and sort them in the
browser: 4.4 MB of JSON and 15 s at 10k memories. The index already holds every field the
list shows, so one query answers a page: ``WHERE`` for the filters, ``ORDER BY`` for the
column clicked, ``LIMIT``/``OFFSET`` for the page.

The listing's columns are copied once into a narrow temporary table with an index per
sort key, so a page reads no bodies and walks an index instead of sorting every row. Two
of them are not in the index and come in with the copy: the hit counts (each root's
``.state.json``) and the number of findings each file has in the cached inspect result.
The copy is made again only when one of the three changed (the index: SQLite's
``data_version``, which moves when another connection commits).
"""

from __future__ import annotations

import posixpath
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memoryd.index.db import IndexDB, load_problems
from memoryd.roots import CONFLICTS_FILE, INDEX_FILE, ROOT_FILE

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

_REL = "substr(m.path, length(m.root) + 2)"
# ROOT.md, CONFLICTS.md and every index.md are memoryd's own files, never memories (the
# index holds them for search; compile.blocks.is_generated says the same of a path)
_OWN = ", ".join(repr(name) for name in (ROOT_FILE, INDEX_FILE, CONFLICTS_FILE))
_BUILD = [
    "DROP TABLE IF EXISTS temp.browse_rows",
    f"""CREATE TEMP TABLE browse_rows AS SELECT
        m.path, m.root, m.scope, m.layout, m.type, m.id, m.kind, coalesce(m.kind, '') AS kind_key,
        m.summary, m.pinned, m.superseded_by, m.created, m.updated, m.problems AS own,
        {_REL} AS rel, memoryd_dirname({_REL}) AS folder,
        coalesce(m.updated, m.created, m.mtime_ns / 1000000) AS stamp,
        json_array_length(m.problems) AS own_n, coalesce(h.n, 0) AS hits,
        json_array_length(m.problems) + coalesce(f.n, 0) AS problems
        FROM memories AS m
        LEFT JOIN temp.browse_hits AS h ON h.root = m.root AND h.id = m.id
        LEFT JOIN temp.browse_findings AS f ON f.path = m.path
        WHERE {_REL} NOT IN ({_OWN}) AND {_REL} NOT LIKE '%/' || {INDEX_FILE!r}""",
    "CREATE INDEX temp.browse_by_id ON browse_rows(id, path)",
]  # the other sorts' indexes: each made when its column is first sorted by (_sorted)
_COLUMNS = """
    root, scope, layout, type, id, kind, summary, pinned, superseded_by, created, updated,
    own, rel, folder, stamp, hits, problems
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


class Browser:
    """Pages of one open index; keeps the listing table until its inputs change."""

    def __init__(self, db: IndexDB) -> None:
        self.db = db
        self._made: tuple[int, dict[str, dict[str, int]], dict[str, int]] | None = None
        db.conn.create_function("memoryd_dirname", 1, posixpath.dirname, deterministic=True)
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
        self._build(hits, findings)
        where, params = _where(roots, query)
        total = int(
            conn.execute(f"SELECT count(*) FROM temp.browse_rows WHERE {where}", params).fetchone()[
                0
            ]
        )
        column, flipped = SORTS[query.sort]
        self._sorted(column)
        direction = "DESC" if query.desc != flipped else "ASC"
        sql = (
            f"SELECT {_COLUMNS} FROM temp.browse_rows WHERE {where}"
            f" ORDER BY {column} {direction}, id {direction}, path {direction} LIMIT ? OFFSET ?"
        )
        limit = max(1, min(query.limit, MAX_LIMIT))
        cursor = conn.execute(sql, [*params, limit, max(0, query.offset)])
        names = [d[0] for d in cursor.description]
        rows = [_row(dict(zip(names, values, strict=True))) for values in cursor]
        return Page(total, rows, _facets(conn, roots) if facets else {})

    def counts(self, roots: Sequence[Path]) -> dict[str, int]:
        """How many memory files each root has in the listing (call after a page)."""
        marks = ", ".join("?" * len(roots)) or "NULL"
        cursor = self.db.conn.execute(
            f"SELECT root, count(*) FROM temp.browse_rows WHERE root IN ({marks}) GROUP BY root",
            [str(r) for r in roots],
        )
        return {str(root): int(n) for root, n in cursor}

    def _sorted(self, column: str) -> None:
        """An index to walk for this sort (a page then reads 50 rows, not every row)."""
        self.db.conn.execute(
            f"CREATE INDEX IF NOT EXISTS temp.browse_by_{column} ON browse_rows({column}, id, path)"
        )

    def _build(self, hits: Hits, findings: Mapping[Path, int]) -> None:
        """The listing table again when the index, the hit counts or the findings changed."""
        conn = self.db.conn
        # commits of other connections (the daemon's, a reconcile's); this one writes
        # only its temporary tables
        version = int(conn.execute("PRAGMA data_version").fetchone()[0])
        made = (
            version,
            {str(root): dict(counts) for root, counts in hits.items()},
            {str(path): n for path, n in findings.items()},
        )
        if self._made == made:
            return
        conn.execute("BEGIN")  # one transaction, not one per row (the connection autocommits)
        try:
            _inputs(conn, made[1], made[2])
            for statement in _BUILD:
                conn.execute(statement)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        self._made = made


def _inputs(
    conn: sqlite3.Connection, hits: dict[str, dict[str, int]], findings: dict[str, int]
) -> None:
    conn.execute("DROP TABLE IF EXISTS temp.browse_hits")
    conn.execute("DROP TABLE IF EXISTS temp.browse_findings")
    conn.execute(
        "CREATE TEMP TABLE browse_hits (root TEXT, id TEXT, n INTEGER, PRIMARY KEY (root, id))"
    )
    conn.execute("CREATE TEMP TABLE browse_findings (path TEXT PRIMARY KEY, n INTEGER)")
    conn.executemany(
        "INSERT OR REPLACE INTO temp.browse_hits VALUES (?, ?, ?)",
        ((root, ident, n) for root, counts in hits.items() for ident, n in counts.items()),
    )
    conn.executemany("INSERT OR REPLACE INTO temp.browse_findings VALUES (?, ?)", findings.items())


def _where(roots: Sequence[Path], query: Query) -> tuple[str, list[Any]]:
    marks = ", ".join("?" * len(roots)) or "NULL"
    clauses = [f"root IN ({marks})"]
    params: list[Any] = [str(r) for r in roots]
    needle = query.text.strip()
    if needle:
        like = "%" + needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        clauses.append(
            "(id LIKE ? ESCAPE '\\' OR coalesce(summary, '') LIKE ? ESCAPE '\\'"
            " OR rel LIKE ? ESCAPE '\\')"
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
            "superseded": "superseded_by IS NOT NULL",
            "problems": "problems > 0",
            "never": "hits = 0",
        }[query.flag])  # fmt: skip
    return " AND ".join(clauses), params


def _facets(conn: sqlite3.Connection, roots: Sequence[Path]) -> dict[str, list[str]]:
    marks = ", ".join("?" * len(roots)) or "NULL"
    names = [str(r) for r in roots]
    where = f"FROM temp.browse_rows WHERE root IN ({marks})"
    kinds = conn.execute(f"SELECT DISTINCT kind_key {where}", names)
    folders = conn.execute(f"SELECT DISTINCT folder {where}", names)
    return {
        "kinds": sorted(str(k) for (k,) in kinds),
        "folders": sorted(str(f) for (f,) in folders),
    }


def _row(values: dict[str, Any]) -> dict[str, Any]:
    own = load_problems(str(values.pop("own")))
    values["path"] = values.pop("rel")
    values["pinned"] = bool(values["pinned"])
    values["superseded"] = values["superseded_by"] is not None
    values["own_problems"] = [{"code": p.code, "message": p.message} for p in own]
    return values
