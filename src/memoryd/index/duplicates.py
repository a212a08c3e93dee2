"""Memories that already say what a new one says: the candidates of remember's duplicate check.

The question is "has this been said already?", which has nothing to do with how
old or how often recalled the earlier memory is, so recall's ranking (time decay,
score floor, top-k) must not decide which memories are compared: a three-year-old
memory restated word for word would fall out of a decayed top 20.

Instead every memory that *could* hold ``share`` of the new text's terms is
read. One that holds at least that share lacks at most ``n - ceil(share × n)``
of the ``n`` terms, so it holds at least one of any ``n - ceil(share × n) + 1``
of them (pigeonhole). The rarest terms (fewest documents in FTS5) are those, so
a single OR query over a few rare terms finds every candidate, and the
candidates' texts decide the share exactly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from memoryd.config.sections import RootConfig
from memoryd.index.db import IndexDB, Row, candidate_row
from memoryd.index.fetch import candidate_rows
from memoryd.index.tokenizer import fts_expression, query_terms


def content_terms(text: str) -> set[str]:
    """The terms a memory's text is compared by: its search terms, stop words left out."""
    return set(query_terms(text))


def covering(
    db: IndexDB, roots: Sequence[RootConfig], text: str, share: float
) -> list[tuple[Row, float]]:
    """Every current memory of ``roots`` holding at least ``share`` of ``text``'s terms,
    with the share it holds, largest first (ties by id)."""
    wanted = content_terms(text)
    if not wanted or not roots:
        return []
    need = max(1, math.ceil(share * len(wanted) - 1e-9))
    probes = _rarest(db, sorted(wanted), len(wanted) - need + 1)
    expression = fts_expression(probes)
    if expression is None:
        return []
    sql = "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?"
    rowids = [r[0] for r in db.conn.execute(sql, (expression,))]
    current = candidate_rows(db, rowids, roots, {})
    found = []
    for row in map(candidate_row, current.values()):
        held = len(wanted & content_terms("\n".join(p for p in (row.summary, row.body) if p)))
        if held >= need:
            found.append((row, held / len(wanted)))
    return sorted(found, key=lambda pair: (-pair[1], pair[0].id))


def _rarest(db: IndexDB, terms: list[str], count: int) -> list[str]:
    """The ``count`` terms held by the fewest memories."""
    sql = "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?"
    sizes = {t: db.conn.execute(sql, (fts_expression([t]),)).fetchone()[0] for t in terms}
    return sorted(terms, key=lambda t: (sizes[t], t))[:count]
