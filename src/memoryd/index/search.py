"""Recall: query the FTS5 table, rank, cut at the score floor, explain each hit.

The query is tokenized like the text and becomes OR-joined quoted terms (the
design's rule: AND finds nothing for most multi-word queries of real memory).
FTS5's column-weighted bm25 picks ``min(limit*3, 50)`` candidates, plus every
memory that holds all the terms when those are fewer.

Relevance decides what is returned: memories holding every distinct query term
form the first tier and the others the second (coverage tiers), so no age, pin
or hit count puts a memory that holds a subset of the terms above one that holds
them all. Within a tier, bm25 × scope prior × time decay × recall boost orders
them (:func:`score`); the decay is bounded below by ``decay_floor``, so an old
match is lowered, never erased. The relative floor compares bm25 alone and never
drops a memory of the first tier.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from memoryd.config import Config, RootConfig, SearchConfig
from memoryd.index.db import IndexDB, Row
from memoryd.index.fetch import Found, Visible, candidates
from memoryd.index.hits import bump_hits, hit_lookup
from memoryd.index.snippet import MARKERS, hit_counts, make_snippet
from memoryd.index.tokenizer import query_words

log = logging.getLogger(__name__)

DAY_MS = 86_400_000
BOOST_HALF = 3  # hits at which the recall boost is half its maximum
MAX_FETCH = 50


@dataclass(frozen=True)
class Hit:
    """One recalled memory with the reasons it matched."""

    id: str
    path: Path
    root: Path
    scope: str
    kind: str | None
    summary: str | None
    score: float
    terms: dict[str, int]  # matched query term -> occurrences in the memory
    snippet: str  # original text around the matches, matches marked «like this»
    body: str
    relevance: float = 0.0  # the bm25 part of the score
    parts: dict[str, float] = field(default_factory=dict)  # what score multiplies (score_parts)
    row: Row | None = field(default=None, repr=False, compare=False)

    def conflict(self) -> dict[str, str]:
        """``conflict_of`` and ``conflict_device`` when this is a sync conflict copy."""
        from memoryd.sync.conflicts import parse_copy_name

        try:
            name = parse_copy_name(self.path.relative_to(self.root).as_posix())
        except ValueError:
            return {}
        return (
            {} if name is None else {"conflict_of": name.original, "conflict_device": name.device}
        )

    def to_json(self) -> dict[str, Any]:
        foreign = {}
        if self.row is not None and self.row.layout != "plugin":
            row = self.row
            foreign = {"layout": row.layout, "type": row.type, "scope_id": row.scope_id}
        return {
            **foreign,
            **self.conflict(),
            "id": self.id,
            "path": str(self.path),
            "root": str(self.root),
            "scope": self.scope,
            "kind": self.kind,
            "summary": self.summary,
            "score": float(f"{self.score:.6g}"),  # significant digits: bm25 can be ~1e-6
            "parts": {name: float(f"{value:.6g}") for name, value in self.parts.items()},
            "terms": self.terms,
            "snippet": self.snippet,
            "body": self.body,
        }


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

    ``type`` and ``scope_id`` filter the layered and claude layouts' rows;
    ``markers="layered"`` marks matches in snippets with ``<<`` ``>>``;
    ``strategy`` is :func:`memoryd.index.fetch.candidates`'s; ``visible`` narrows the
    other layouts' rows to the caller's project and session (:class:`Visible`).
    """
    settings = config.search
    limit = settings.limit if limit is None else limit
    roots = [r for r in roots if scope is None or r.scope == scope]
    forms = query_words(query)
    terms = list(forms)
    if not terms or limit <= 0 or not roots:
        return []
    fetch = max(limit, min(limit * 3, MAX_FETCH))
    filters = {"kind": kind, "type": type, "scope_id": scope_id}
    found = candidates(
        db, terms, roots, filters, fetch, strategy=strategy, enough=limit, visible=visible
    )
    now = int(time.time() * 1000) if now_ms is None else now_ms
    counts = {str(r.path): hit_lookup(r.path) for r in roots}
    parts = {
        f.candidate.rowid: score_parts(
            settings, f.relevance, f.candidate, counts[f.candidate.root](f.candidate.id), now
        )
        for f in found
    }
    scored = [(math.prod(parts[f.candidate.rowid].values()), f) for f in found]
    kept = cut(ranked(scored), settings.score_floor, limit)
    rows = db.rows_by_rowid([f.candidate.rowid for _total, f in kept])
    marks = MARKERS[markers]
    hits = [
        _hit(
            rows[f.candidate.rowid],
            total,
            f.relevance,
            forms,
            marks,
            parts=parts[f.candidate.rowid],
        )
        for total, f in kept
    ]
    if bump:
        _bump(hits)
    return hits


class Rankable(Protocol):
    """The fields ranking reads (a :class:`Row` or a fetch ``Candidate``)."""

    @property
    def scope(self) -> str: ...
    @property
    def layout(self) -> str: ...
    @property
    def pinned(self) -> bool: ...
    @property
    def created(self) -> int | None: ...
    @property
    def updated(self) -> int | None: ...
    @property
    def mtime_ns(self) -> int: ...


def score(settings: SearchConfig, relevance: float, row: Rankable, hits: int, now_ms: int) -> float:
    """bm25 relevance × scope prior × time decay × recall boost (pure)."""
    return math.prod(score_parts(settings, relevance, row, hits, now_ms).values())


def score_parts(
    settings: SearchConfig, relevance: float, row: Rankable, hits: int, now_ms: int
) -> dict[str, float]:
    """The factors a score is the product of, by name (``memoryd ui`` shows them as they are).

    ``relevance`` (bm25), ``scope`` (the prior), ``age`` (the decay) and ``hits`` (the boost).
    Rows of the layered and claude layouts rank by bm25 and scope prior only, as the
    layered memory's own search does (no decay, and memoryd keeps no hit counts there).
    """
    prior = settings.project_prior if row.scope == "project" else settings.global_prior
    if row.layout != "plugin":
        return {"relevance": relevance, "scope": prior}
    return {
        "relevance": relevance,
        "scope": prior,
        "age": decay(settings, row, now_ms),
        "hits": boost(settings, hits),
    }


def decay(settings: SearchConfig, row: Rankable, now_ms: int) -> float:
    """Halves every ``half_life_days`` since ``updated``, never below ``decay_floor``;
    pinned memories never decay."""
    if row.pinned or settings.half_life_days <= 0:
        return 1.0
    stamp = row.updated or row.created or row.mtime_ns // 1_000_000
    age_days = max(0, now_ms - stamp) / DAY_MS
    return max(min(1.0, settings.decay_floor), float(0.5 ** (age_days / settings.half_life_days)))


def boost(settings: SearchConfig, hits: int) -> float:
    """Grows with the hit count towards ``1 + recall_boost_max``."""
    hits = max(0, hits)
    return 1.0 + settings.recall_boost_max * hits / (hits + BOOST_HALF)


def ranked(scored: list[tuple[float, Found]]) -> list[tuple[float, Found]]:
    """Memories holding every query term first, then the others; by score within each."""
    return sorted(scored, key=lambda s: (not s[1].full, -s[0]))


def cut(scored: list[tuple[float, Found]], floor: float, limit: int) -> list[tuple[float, Found]]:
    """The first ``limit`` of ``scored`` (ranked), without the partial matches whose bm25 is
    under ``floor`` × the best bm25: relevance alone, so age never removes a result, and a
    memory holding every term is never removed."""
    if not scored:
        return []
    best = max(f.relevance for _, f in scored)
    kept = [s for s in scored if s[1].full or s[1].relevance >= floor * best]
    return (kept or scored[:1])[:limit]


def _hit(
    row: Row,
    total: float,
    relevance: float,
    forms: dict[str, str],
    marks: tuple[str, str],
    *,
    parts: dict[str, float],
) -> Hit:
    terms = list(forms)
    return Hit(
        id=row.id,
        path=row.path,
        root=row.root,
        scope=row.scope,
        kind=row.kind,
        summary=row.summary,
        score=total,
        terms={forms[t]: n for t, n in hit_counts(terms, row).items()},
        snippet=make_snippet(terms, row.body or row.summary or "", marks=marks),
        body=row.body,
        relevance=relevance,
        parts=parts,
        row=row,
    )


def _bump(hits: Sequence[Hit]) -> None:
    by_root: dict[Path, list[str]] = {}
    for hit in hits:
        if hit.row is not None and hit.row.layout != "plugin":
            continue  # never write into another agent's tree
        by_root.setdefault(hit.root, []).append(hit.id)
    for root, ids in by_root.items():
        try:
            bump_hits(root, ids)
        except OSError as exc:  # a read-only root still answers; it just does not learn
            log.warning("cannot record hits in %s: %s", root, exc)
