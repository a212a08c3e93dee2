"""Recall: query the FTS5 table, rank, cut at the score floor, explain each hit.

The query is tokenized like the text and becomes OR-joined quoted terms (the
design's rule: AND finds nothing for most multi-word queries of real memory);
:func:`memoryd.index.pick.pick` fetches and ranks the candidates, as it does for the
lean ``memoryd recall``, and each one it keeps becomes a :class:`Hit`.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memoryd.config.sections import Config, RootConfig
from memoryd.index import hitview
from memoryd.index.db import (
    IndexDB,
    Row,
    candidate_row,
    file_path,
    load_problems,
    root_path,
    split_lines,
)
from memoryd.index.fetch import Candidate, Found, _passes, candidate_rows
from memoryd.index.hits import Lookups, bump_each
from memoryd.index.pick import pick
from memoryd.index.snippet import MARKERS, explain
from memoryd.index.tokenizer import read_query
from memoryd.memory import Problem

if TYPE_CHECKING:
    from memoryd.index.pick import Kept, Ranked
    from memoryd.layouts.visible import Visible

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Hit:
    """One recalled memory with the reasons it matched.

    The reasons (:attr:`terms`, :attr:`snippet`) are worked out from the row when first
    read: the context block an agent gets each turn shows hits' bodies, not their reasons,
    and explaining the hits was a sixth of a needle query's instructions at 1k memories.
    So is :attr:`row`, from the fetch's row (``source``), which holds all of it: a caller
    that reads a hit's fields alone (id, path, summary, body, score) makes no Row.
    """

    id: str
    path: Path
    root: Path
    scope: str
    kind: str | None
    summary: str | None
    score: float
    body: str
    relevance: float = 0.0  # the bm25 part of the score
    parts: dict[str, float] = field(default_factory=dict)  # what score multiplies (score_parts)
    source: Candidate | None = field(default=None, repr=False, compare=False)  # see row
    forms: dict[str, str] = field(default_factory=dict, repr=False)  # term -> query word
    marks: tuple[str, str] = MARKERS["plugin"]  # what a snippet marks a match with

    @functools.cached_property
    def row(self) -> Row | None:
        """The memory's row as the index stores it (None for a hit made without one)."""
        return None if self.source is None else candidate_row(self.source, path=self.path)

    # What the callers read of a hit's row, read from its source without making the Row:
    # the JSON's layout, the context's and MCP's oversized line, the CLI's problem lines.

    @property
    def layout(self) -> str:
        """The layout of the memory's root (``plugin``: memoryd's own)."""
        source = self.source
        return source.layout if source is not None else "plugin"

    @property
    def oversized(self) -> bool:
        """Over ``search.max_file_bytes``: only its frontmatter was indexed."""
        source = self.source
        return bool(source.oversized) if source is not None else False

    @property
    def problems(self) -> tuple[Problem, ...]:
        """The problems the index stored for the memory (a frontmatter that does not parse)."""
        source = self.source
        return load_problems(str(source.problems)) if source is not None else ()

    @property
    def terms(self) -> dict[str, int]:
        """Each matched query word as written, with its occurrences in the memory."""
        return self._reasons[0]

    @property
    def snippet(self) -> str:
        """Original text around the matches, the matches marked («like this»)."""
        return self._reasons[1]

    @functools.cached_property
    def _reasons(self) -> tuple[dict[str, int], str]:
        if self.source is None:
            return {}, ""
        return explain(self.forms, self, self.marks)  # id, summary, load_when, body

    @property
    def load_when(self) -> tuple[str, ...]:
        """The memory's ``load_when`` triggers."""
        source = self.source
        return split_lines(source.load_when) if source is not None else ()

    def conflict(self) -> dict[str, str]:
        """``conflict_of`` and ``conflict_device`` when this is a sync conflict copy."""
        from memoryd.conflicts import parse_copy_name

        try:
            name = parse_copy_name(self.path.relative_to(self.root).as_posix())
        except ValueError:
            return {}
        return (
            {} if name is None else {"conflict_of": name.original, "conflict_device": name.device}
        )

    def to_json(self) -> dict[str, Any]:
        return hitview.to_json(self)


def recall(
    db: IndexDB,
    config: Config,
    query: str,
    roots: Sequence[RootConfig],
    *,
    limit: int | None = None,
    kind: str | None = None,
    scope: str | None = None,
    now_ms: int | None = None,
    bump: bool = True,
    type: str | None = None,
    scope_id: str | None = None,
    markers: str = "plugin",
    strategy: str = "and-or",
    visible: Visible | None = None,
) -> list[Hit]:
    """The best memories for ``query`` in ``roots``, hit counts bumped (unless ``bump=False``).
    Only roots that are on disk are searched.

    ``type`` and ``scope_id`` filter the layered and claude layouts' rows;
    ``markers="layered"`` marks matches in snippets with ``<<`` ``>>``;
    ``strategy`` is :func:`memoryd.index.fetch.candidates`'s; ``visible`` narrows the
    other layouts' rows to the caller's project and session (:class:`Visible`).
    """
    settings = config.search
    limit = settings.limit if limit is None else limit
    # a root that is gone keeps its rows (its disk may come back) but has no hit: each
    # would name a file that is not there
    roots = [r for r in roots if (scope is None or r.scope == scope) and r.path.is_dir()]
    forms, dates = read_query(query)
    if not forms or limit <= 0 or not roots:
        return []
    filters = {"kind": kind, "type": type, "scope_id": scope_id}
    now = int(time.time() * 1000) if now_ms is None else now_ms
    fuse = None
    if settings.semantic:

        def fuse(found: list[Found], ranked: Ranked, fetch: int) -> list[Kept]:
            where = (roots, filters, visible)
            return _fused(
                db, query, found=found, ranked=ranked, where=where, fetch=fetch, limit=limit
            )

    kept = pick(
        db, forms, roots, filters, limit, settings, Lookups(), now,
        dates=dates, strategy=strategy, visible=visible, fuse=fuse,
    )  # fmt: skip
    marks = MARKERS[markers]
    hits = [_hit(f.candidate, t, f.relevance, forms, marks, parts=parts) for t, f, parts in kept]
    if bump:
        _bump(hits)
    return hits


def _fused(
    db: IndexDB,
    query: str,
    *,
    found: list[Found],
    ranked: Callable[..., list[tuple[float, Found, dict[str, float]]]],
    where: tuple[Sequence[RootConfig], dict[str, str | None], Visible | None],
    fetch: int,
    limit: int,
) -> list[tuple[float, Found, dict[str, float]]]:
    """The lexical ranking fused with the semantic stage's nearest memories
    (:mod:`memoryd.index.semantic`); the lexical ranking alone when the stage has no model."""
    from memoryd.index import semantic

    nearest = semantic.search(db.conn, query, _passes(*where), fetch)
    lexical = ranked(found, limit=fetch)
    if not nearest:
        return lexical[:limit]
    have = {f.candidate.rowid for _, f, _ in lexical}
    rows = candidate_rows(db, [r for r in nearest if r not in have], *where)
    extra = ranked([Found(0.0, c, False) for c in rows.values()], limit=len(rows))
    return semantic.fuse(lexical, nearest, {e[1].candidate.rowid: e for e in extra}, limit)


def _hit(
    c: Candidate,
    total: float,
    relevance: float,
    forms: dict[str, str],
    marks: tuple[str, str],
    *,
    parts: dict[str, float],
) -> Hit:
    """The :class:`Hit` of a kept candidate, its fields set at once (see
    :func:`row_from_sql`), as its Row would give them (``candidate_row``)."""
    hit = _new(Hit)
    _set(hit, "__dict__", {
        "id": c.id,
        "path": file_path(str(c.path)),
        "root": root_path(c.root),
        "scope": c.scope,
        "kind": c.kind,
        "summary": c.summary,
        "score": total,
        "body": c.body,
        "relevance": relevance,
        "parts": parts,
        "source": c,
        "forms": forms,
        "marks": marks,
    })  # fmt: skip
    return hit


_new = object.__new__
_set = object.__setattr__


def _bump(hits: Sequence[Hit]) -> None:
    for warning in bump_each(hits):  # a read-only root still answers; it just does not learn
        log.warning("%s", warning)
