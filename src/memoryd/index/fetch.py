"""Candidate rows for a query: FTS5's bm25 top-k, then the memories that pass the filters.

bm25 is computed by FTS5 for every document that matches, so the work grows
with the number of matches. Two things keep it small:

* FTS5 ranks on its own table first (``ORDER BY bm25 LIMIT k``), and only those
  ``k`` rowids are looked up in the memories table and filtered (root, kind,
  superseded...). When too few pass, ``k`` grows until enough do or the matches
  run out.
* With several query terms, an AND pass runs first; when it alone yields enough
  candidates the OR pass (which matches far more documents) is skipped. bm25 of
  a document is the same under AND and OR, and a document matching every term
  usually outranks one matching some, so the top results rarely differ;
  ``bench/index_bench.py`` measures how often they do. ``strategy="or"`` skips it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from memoryd.config import RootConfig
from memoryd.index.db import IndexDB
from memoryd.index.tokenizer import fts_expression

# bm25 column weights: id, summary, load_when, body.
COLUMN_WEIGHTS = (3.0, 4.0, 4.0, 1.0)
GROWTH = 8
STRATEGIES = ("and-or", "or")


class Candidate(NamedTuple):
    """What ranking needs of a row (the full :class:`Row` is read for the kept few)."""

    rowid: int
    root: str
    scope: str
    layout: str
    id: str
    pinned: bool
    created: int | None
    updated: int | None
    mtime_ns: int


_CANDIDATE_COLUMNS = "rowid, root, scope, layout, id, pinned, created, updated, mtime_ns"


def candidates(
    db: IndexDB,
    terms: Sequence[str],
    roots: Sequence[RootConfig],
    filters: Mapping[str, str | None],
    fetch: int,
    *,
    strategy: str = "and-or",
) -> list[tuple[float, Candidate]]:
    """Up to ``fetch`` ``(relevance, candidate)`` pairs, best bm25 first."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}")
    if strategy == "and-or" and len(terms) > 1:
        found = _top(db, fts_expression(terms, "AND"), roots, filters, fetch)
        if len(found) >= fetch:
            return found
    return _top(db, fts_expression(terms), roots, filters, fetch)


def _top(
    db: IndexDB,
    expression: str | None,
    roots: Sequence[RootConfig],
    filters: Mapping[str, str | None],
    fetch: int,
) -> list[tuple[float, Candidate]]:
    if expression is None:
        return []
    weights = ", ".join(str(w) for w in COLUMN_WEIGHTS)
    sql = (
        f"SELECT rowid, bm25(memories_fts, {weights}) AS rel FROM memories_fts "
        "WHERE memories_fts MATCH ? ORDER BY rel LIMIT ?"
    )
    k = fetch * 2
    while True:
        ranked = db.conn.execute(sql, (expression, k)).fetchall()
        rows = _rows(db, [rowid for rowid, _ in ranked], roots, filters)
        found = [(-rel, rows[rowid]) for rowid, rel in ranked if rowid in rows]
        if len(found) >= fetch or len(ranked) < k:
            return found[:fetch]
        k *= GROWTH


def _rows(
    db: IndexDB, rowids: list[int], roots: Sequence[RootConfig], filters: Mapping[str, str | None]
) -> dict[int, Candidate]:
    if not rowids or not roots:
        return {}
    sql = (
        f"SELECT {_CANDIDATE_COLUMNS} FROM memories WHERE rowid IN "
        f"(SELECT value FROM json_each(?)) AND root IN ({', '.join('?' for _ in roots)}) "
        "AND superseded_by IS NULL"
    )
    params: list[Any] = [_json_ints(rowids), *(str(r.path) for r in roots)]
    for column, value in filters.items():  # column names are ours, never the user's
        if value is not None:
            sql += f" AND {column} = ?"
            params.append(value)
    return {values[0]: Candidate(*values) for values in db.conn.execute(sql, params)}


def _json_ints(values: list[int]) -> str:
    return "[" + ",".join(str(int(v)) for v in values) + "]"
