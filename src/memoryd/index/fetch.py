"""Candidate rows for a query: FTS5's bm25 top-k, then the memories that pass the filters.

bm25 is computed by FTS5 for every document that matches, so the work grows
with the number of matches. Two things keep it small:

* FTS5 ranks on its own table first (``ORDER BY bm25 LIMIT k``), and only those
  ``k`` rowids (``fetch`` plus a margin) are looked up in the memories table and
  filtered (root, kind, superseded...). When too few pass, ``k`` grows until enough
  do or the matches run out.
* With several query terms, documents matching *all* of them are asked for
  first (``strategy="and-or"``, the default), and OR runs only when they are too
  few. ``strategy="levels"`` goes on level by level: all terms, then all but one,
  and so on down to any one term (plain OR); the first level that yields enough
  candidates ends the search, so the OR pass (which matches far more documents)
  often never runs. It is faster on long queries but changes the candidates, and
  so the final list, more often (time decay then reorders them), which is why it
  is not the default. A level is an FTS5
  expression ``(a AND b) OR (a AND c) OR (b AND c)``. FTS5 counts a term once
  for each group that matches, so a document holding ``m`` of the terms scores
  ``comb(m-1, need-1)`` times its OR bm25; the candidates' texts give ``m`` and
  the factor is divided out. A document matching more terms usually outranks
  one matching fewer; ``bench/index_bench.py`` measures how often the final list
  differs from OR alone. ``strategy="or"`` is the design's plain OR.

Every candidate says whether it holds *every* query term (``full``): ranking puts
those first (see :mod:`memoryd.index.search`). The AND level is complete whenever
it yields fewer than ``fetch`` rows, so its rows are kept beside the OR query's
top-k: a memory holding every term is never lost to many that hold one.
"""

from __future__ import annotations

import functools
from collections import namedtuple
from collections.abc import Mapping, Sequence
from functools import partial
from itertools import combinations
from math import comb

from memoryd.index.snippet import term_counts
from memoryd.index.tokenizer import fts_expression, normalize, phrase, phrases

# Light on purpose: the lean ``memoryd recall`` (memoryd.lean_recall) fetches through this
# module, and typing, dataclasses and the config's classes cost it more than its query.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable
    from typing import Any, NamedTuple, Protocol

    class _Index(Protocol):  # an IndexDB, or the lean recall's connection
        @property
        def conn(self) -> sqlite3.Connection: ...

    class _Root(Protocol):
        @property
        def path(self) -> object: ...  # a Path, or the lean recall's str

    class _Visible(Protocol):
        def sql(self) -> tuple[str, list[Any]]: ...

    class Candidate(NamedTuple):
        """A candidate row: what ranking reads first (``rowid`` to ``mtime_ns``), then the
        rest of its memory, read in the same statement (a kept one becomes its hit's
        :class:`~memoryd.index.db.Row` with no second read). The rest defaults to None
        for a candidate made by hand, as ranking's tests make them."""

        rowid: int
        root: str
        scope: str
        layout: str
        id: str
        pinned: bool
        created: int | None
        updated: int | None
        mtime_ns: int
        path: str | None = None
        type: str | None = None
        scope_id: str | None = None
        kind: str | None = None
        summary: str | None = None
        load_when: str | None = None
        supersedes: str | None = None
        superseded_by: str | None = None
        size: int | None = None
        hash: str | None = None
        problems: str | None = None
        body: str | None = None
        oversized: int | None = None

    class Found(NamedTuple):
        """One candidate with its bm25 relevance and whether it holds every query term."""

        relevance: float
        candidate: Candidate
        full: bool

else:
    Candidate = namedtuple(
        "Candidate",
        "rowid root scope layout id pinned created updated mtime_ns path type scope_id kind "
        "summary load_when supersedes superseded_by size hash problems body oversized",
        defaults=(None,) * 13,
    )
    Found = namedtuple("Found", "relevance candidate full")

# bm25 column weights: id, summary, load_when, body. The summary weighs as the body does: most
# summaries repeat the body's first words, and at 4 a question's filler matched twice in the
# short memories whose summary is their whole text (such a summary now gives FTS5 no text at
# all: memoryd.index.store.fts_tokens; docs/search.md).
COLUMN_WEIGHTS = (3.0, 1.0, 4.0, 1.0)
GROWTH = 8
# Rows FTS5's top k holds beyond ``fetch`` for the filters to refuse: superseded memories
# (about 1%), other roots' rows, other kinds. (A root's ROOT.md and index.md files never
# match: they give FTS5 no text, see memoryd.index.store.compiled.) Only the rows stepped
# to are looked up in the memories table (_top), so the margin costs FTS5's sort alone.
MARGIN = 16
MAX_LEVEL_TERMS = 6  # beyond this many terms: all terms, then any term (the groups multiply)
STRATEGIES = ("and-or", "levels", "or")


# A Candidate's columns: what ranking reads, then the rest of the row. Reading the rest with
# every candidate costs a few bodies more than the kept ones need; reading it for the kept
# ones after cost one more statement per recall, more (bench/floor_bench.py's needle row).
_CANDIDATE_COLUMNS = (
    "rowid, root, scope, layout, id, pinned, created, updated, mtime_ns, path, type, "
    "scope_id, kind, summary, load_when, supersedes, superseded_by, size, hash, problems, "
    "body, oversized"
)
_CANDIDATE_FIELDS = ", ".join(f"memories.{c}" for c in _CANDIDATE_COLUMNS.split(", ")[1:])


class Snapshot:
    """``with Snapshot(conn):`` the reads inside see one version of the index: a read
    transaction, or the caller's own when it has one (left open). A recall of several
    terms reads its candidates in several statements (all terms, then any); in several
    transactions a reconcile committing in between (the daemon's, on its own connection)
    could give one memory as two versions, or lose a row between them. (A class, not
    contextlib: the lean recall's imports stay few, see tests/test_startup.py.)
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn, self.began = conn, False

    def __enter__(self) -> None:
        self.began = not self.conn.in_transaction
        if self.began:
            self.conn.execute("BEGIN")

    def __exit__(self, *exc: object) -> None:
        if self.began:
            self.conn.execute("COMMIT")


def json_ints(values: list[int]) -> str:
    """A JSON array of integers, for ``rowid IN (SELECT value FROM json_each(?))``."""
    return "[" + ",".join(str(int(v)) for v in values) + "]"


def candidates(
    db: _Index,
    terms: Sequence[str],
    roots: Sequence[_Root],
    filters: Mapping[str, str | None],
    fetch: int,
    *,
    strategy: str = "and-or",
    visible: _Visible | None = None,
    enough: int | None = None,
) -> list[Found]:
    """At least the ``fetch`` best by bm25, plus every memory holding all ``terms``
    when those are fewer than ``fetch`` (``visible``: see
    :class:`memoryd.layouts.visible.Visible`; None sees every row).

    ``enough``: when at least this many memories hold every term (recall passes its
    limit), they alone are returned and the OR query never runs: ranking puts them first
    and the floor never drops them, so its rows could only rank below the cut.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}")
    whole = len(terms)
    if whole == 1:  # one statement (run again whole if its k grows): one version of the index
        passes = _passes(roots, filters, visible)
        return _top_passing(db, passes, fts_expression(terms), fetch, full=True)
    if strategy == "and-or":
        least = min(fetch, enough or fetch)  # (as "enough or fetch" before: 0 is unset)
        return _and_or(db, terms, _passes(roots, filters, visible), fetch, least)
    with Snapshot(db.conn):  # the AND and OR statements read one version
        return _several(db, terms, roots, filters, fetch, strategy, visible, enough)


def _and_or(
    db: _Index, terms: Sequence[str], passes: tuple[str, list[Any]], fetch: int, enough: int
) -> list[Found]:
    """:func:`candidates` of the default strategy for two terms or more: the memories
    holding every term, then (when fewer than ``enough`` do) the OR query's best, in one
    read transaction (:class:`Snapshot`).

    Which memories hold every term is asked first by their rowids alone (no bm25, no
    sort, no rows read; at most ``enough`` of them). When that many do, their bm25 top
    is read as before and the OR query may never run. When fewer do (a needle query:
    nearly always none), their rows are taken from the OR query's, which holds them all
    (every memory holding all the terms holds one), so no statement reads them twice;
    only when one of them ranks past the OR query's first k is their own top read.
    The candidates are the same either way: a memory's bm25 is the same in the AND
    query and the OR query (the same phrases), so are their order and their ties.
    """
    quoted = phrases(terms)  # the same phrases in both: the same bm25
    with Snapshot(db.conn):
        both, either = " AND ".join(quoted), " OR ".join(quoted)
        held = {rowid for (rowid,) in db.conn.execute(_HOLDING_SQL, (both, enough))}
        if len(held) >= enough:  # (held is then cut short at enough)
            full = _top_passing(db, passes, both, fetch, full=True)
            if len(full) >= enough:
                return full
            found = _top_passing(db, passes, either, fetch, full=False)
        elif held:  # every memory holding all the terms: the OR query's rows hold them
            full, found, complete = _top_holding(db, passes, either, fetch, held)
            if not complete:  # one ranks past the OR query's first k: the AND top has it
                full = _top_passing(db, passes, both, fetch, full=True)
        else:
            return _top_passing(db, passes, either, fetch, full=False)
        return _merged(full, found) if full else found


# The rowids of the memories that match an expression, at most ? of them, unranked.
_HOLDING_SQL = "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? LIMIT ?"


def _several(  # noqa: PLR0917 - candidates' arguments, passed on
    db: _Index,
    terms: Sequence[str],
    roots: Sequence[_Root],
    filters: Mapping[str, str | None],
    fetch: int,
    strategy: str,
    visible: _Visible | None,
    enough: int | None,
) -> list[Found]:
    """:func:`candidates` for two terms or more."""
    top = partial(_top, visible=visible)
    whole = len(terms)
    full: list[Found] = []
    if strategy != "or":
        for need in _levels(whole, strategy):
            found = top(db, at_least(terms, need), roots, filters, fetch, full=need == whole)
            if need == whole:
                full = found
            elif need > 1:
                found = _unskew(found, terms, need)
            if len(found) >= fetch or (need == whole and len(found) >= (enough or fetch)):
                return full if need == whole else _merged(full, found)
    found = top(db, fts_expression(terms), roots, filters, fetch, full=False)
    if strategy == "or":
        return [Found(r, c, _matched(terms, c) == whole) for r, c, _full in found]
    return _merged(full, found) if full else found


def _merged(full: list[Found], more: list[Found]) -> list[Found]:
    """Every row holding all terms, then the others of ``more`` (marked as not full)."""
    ids = {f.candidate.rowid for f in full}
    rest = [_found(Found, (r, c, False)) for r, c, _full in more if c.rowid not in ids]
    return full + rest


_found = tuple.__new__  # a Found without its Python-level __new__ (a query makes up to 80)


def _levels(count: int, strategy: str) -> list[int]:
    """How many terms a document must match, level by level (OR is the last)."""
    if strategy == "and-or" or count > MAX_LEVEL_TERMS:
        return [count]
    return list(range(count, 1, -1))


def at_least(terms: Sequence[str], need: int) -> str:
    """An FTS5 expression matching documents that contain ``need`` of ``terms``."""
    if need >= len(terms):  # every term: the phrases OR weighs them by, for the same bm25
        return " AND ".join(phrases(terms))
    quoted = [phrase(t) for t in terms]
    groups = [" AND ".join(group) for group in combinations(quoted, need)]
    return groups[0] if len(groups) == 1 else " OR ".join(f"({g})" for g in groups)


def _top(
    db: _Index,
    expression: str | None,
    roots: Sequence[_Root],
    filters: Mapping[str, str | None],
    fetch: int,
    *,
    full: bool,
    visible: _Visible | None = None,
) -> list[Found]:
    """The ``fetch`` best by bm25 that pass the filters, each a :data:`Found` marked
    ``full``: FTS5's top ``k`` and their rows in one statement (the rows looked up by
    rowid, in bm25 order, each marked whether it passes), ``k`` growing while too few pass
    and more match. Each row becomes its Found at once (the statement negates bm25).

    The statement's rows are taken no further than the ``fetch``-th that passes: SQLite
    looks a row up in ``memories`` only when it is stepped to, so the margin's rows (most
    of them pass) cost nothing unless they are needed (at 10k memories a looked-up row
    cost more than its share of FTS5's bm25).
    """
    if expression is None:
        return []
    return _top_passing(db, _passes(roots, filters, visible), expression, fetch, full=full)


def _top_passing(
    db: _Index, passes: tuple[str, list[Any]], expression: str | None, fetch: int, *, full: bool
) -> list[Found]:
    """:func:`_top` with its condition and parameters worked out (:func:`_passes`)."""
    if expression is None:
        return []
    condition, params = passes
    sql = _statement(condition)
    make = tuple.__new__  # a Found and a Candidate without their Python-level __new__
    k = fetch + MARGIN
    while True:
        cursor = db.conn.execute(sql, (*params, expression, k))
        found: list[Found] = []
        seen = 0
        want = fetch  # rows still to step through: each may be the fetch-th that passes
        while want > 0:
            ranked = cursor.fetchmany(want)
            seen += len(ranked)
            found += [
                make(Found, (row[0], make(Candidate, row[2:]), full)) for row in ranked if row[1]
            ]
            if len(ranked) < want:
                break  # the statement's rows ran out
            want = fetch - len(found)
        cursor.close()  # resets the statement: its read of the index ends here
        if len(found) >= fetch or seen < k:
            return found
        k *= GROWTH


def _top_holding(
    db: _Index, passes: tuple[str, list[Any]], expression: str, fetch: int, held: set[int]
) -> tuple[list[Found], list[Found], bool]:
    """The OR query's ``fetch`` best passing rows (as :func:`_top_passing` finds them,
    ``k`` growing while too few pass), the passing rows of ``held`` among its first ``k``
    (marked full, in bm25 order), and whether every row of ``held`` was among them.

    The statement is stepped past the ``fetch``-th passing row only while a row of
    ``held`` is still to come, and never past ``k`` for one: a memory holding every term
    that ranks that low (two common words among many memories) is cheaper to read by
    the AND query's own top than by stepping through the OR query's rows up to it.
    """
    condition, params = passes
    sql = _statement(condition)
    make = tuple.__new__
    k = fetch + MARGIN
    while True:
        cursor = db.conn.execute(sql, (*params, expression, k))
        full: list[Found] = []
        found: list[Found] = []
        left, seen = len(held), 0
        for row in cursor:  # row by row: SQLite looks a row up only when stepped to
            seen += 1
            candidate = None
            if row[2] in held:
                left -= 1
                if row[1]:
                    candidate = make(Candidate, row[2:])
                    full.append(make(Found, (row[0], candidate, True)))
            if row[1] and len(found) < fetch:
                candidate = candidate or make(Candidate, row[2:])
                found.append(make(Found, (row[0], candidate, False)))
            if left == 0 and len(found) >= fetch:
                break
        cursor.close()
        if len(found) >= fetch or seen < k:
            return full, found, left == 0
        k *= GROWTH  # too few passed and more match: as _top_passing does


_TOP_SQL: dict[str, str] = {}  # _top's statement by its condition: a few, made once each
_WEIGHTS = ", ".join(str(w) for w in COLUMN_WEIGHTS)


def _statement(condition: str) -> str:
    """:func:`_top_sql` of ``condition``, made once (:data:`_TOP_SQL`)."""
    sql = _TOP_SQL.get(condition)
    if sql is None:
        sql = _TOP_SQL[condition] = _top_sql(condition)
    return sql


def _top_sql(condition: str) -> str:
    """FTS5's top ``k`` by bm25 and their rows: the relevance (``-bm25``), whether the row
    passes ``condition``, then the :data:`Candidate` fields (``rowid`` first)."""
    return (
        f"SELECT -top.rel, {condition}, top.rowid, {_CANDIDATE_FIELDS} FROM "
        f"(SELECT rowid, bm25(memories_fts, {_WEIGHTS}) AS rel FROM memories_fts "
        "WHERE memories_fts MATCH ? ORDER BY rel LIMIT ?) AS top "
        "LEFT JOIN memories ON memories.rowid = top.rowid"
    )  # a LEFT JOIN keeps the subquery's (bm25) order: it is the outer loop


def _unskew(found: list[Found], terms: Sequence[str], need: int) -> list[Found]:
    """A level's bm25 back to the OR query's: divide by comb(m-1, need-1), re-sort."""
    fixed = []
    for rel, cand, full in found:
        have = max(need, _matched(terms, cand))
        fixed.append(Found(rel / comb(have - 1, need - 1), cand, full))
    return sorted(fixed, key=lambda f: -f[0])


def _folded(c: Candidate) -> str:
    """A candidate's texts, normalized as the index's tokens are made (one per line)."""
    return normalize("\n".join([t for t in (c.id, c.summary, c.load_when, c.body) if t]))


def coverage(terms: Sequence[str]) -> Callable[[Found], int]:
    """How many of ``terms`` a found candidate holds (ranking's floor asks it of the few
    candidates under its bar, :func:`memoryd.index.ranking.floor_cut`)."""
    return lambda found: _matched(terms, found.candidate)


def _matched(terms: Sequence[str], c: Candidate) -> int:
    """How many of the query terms a candidate's texts hold (as the index sees them: the
    text FTS5 was given, :func:`memoryd.index.store.texts`)."""
    return len(term_counts(terms, _folded(c)))


# Not superseded: no superseded_by, or one naming no memory of the root (a dangling
# link retires nothing; inspect reports it).
_CURRENT = (
    "(superseded_by IS NULL OR NOT EXISTS (SELECT 1 FROM memories AS newer "
    "WHERE newer.id = memories.superseded_by AND newer.root = memories.root))"
)


def candidate_rows(
    db: _Index,
    rowids: list[int],
    roots: Sequence[_Root],
    filters: Mapping[str, str | None],
    visible: _Visible | None = None,
) -> dict[int, Candidate]:
    """The rows among ``rowids`` that recall may return: in ``roots``, current (not
    superseded), passing ``filters`` (and ``visible``). (A compiled file is never among
    FTS5's rowids: it gives FTS5 no text, :func:`memoryd.index.store.compiled`.)"""
    if not rowids or not roots:
        return {}
    condition, params = _passes(roots, filters, visible)
    sql = (
        f"SELECT {_CANDIDATE_COLUMNS} FROM memories WHERE rowid IN "
        f"(SELECT value FROM json_each(?)) AND {condition}"
    )
    rows = db.conn.execute(sql, [json_ints(rowids), *params])
    return {values[0]: Candidate(*values) for values in rows}


def _passes(
    roots: Sequence[_Root], filters: Mapping[str, str | None], visible: _Visible | None
) -> tuple[str, list[Any]]:
    """The condition on a ``memories`` row that recall may return it, and its parameters."""
    params: list[Any] = [str(r.path) for r in roots]
    columns = []
    for column, value in filters.items():  # column names are ours, never the user's
        if value is not None:
            columns.append(column)
            params.append(value)
    sql = _condition(len(roots), tuple(columns))
    if visible is not None:
        condition, extra = visible.sql()
        sql += f" AND {condition}"
        params += extra
    return sql + ")", params


@functools.lru_cache(maxsize=64)
def _condition(roots: int, columns: tuple[str, ...]) -> str:
    """:func:`_passes`' condition for this many roots and these filtered columns, without
    its closing parenthesis."""
    # "+root": look the few rowids up, never scan a root's rows through an index on root
    marks = ", ".join("?" for _ in range(roots))
    sql = f"(+memories.root IN ({marks}) AND {_CURRENT}"
    return sql + "".join(f" AND memories.{column} = ?" for column in columns)
