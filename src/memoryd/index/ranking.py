"""Ranking recall's candidates: coverage tiers, then bm25 × scope × decay × boost (pure).

Relevance decides what is returned: memories holding every distinct query term form the
first tier and the others the second, so no age, pin or hit count puts a memory that holds
a subset of the terms above one that holds them all. Within a tier, bm25 × scope prior ×
time decay × recall boost orders them (:func:`score_parts`); the decay is bounded below by
``decay_floor``, so an old match is lowered, never erased. The relative floor compares bm25
alone and never drops a memory of the first tier.

A module of its own, importing nothing heavy: :mod:`memoryd.index.search` and the lean
``memoryd recall`` (:mod:`memoryd.lean_recall`) rank with the same code.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

TYPE_CHECKING = False  # typing stays off the lean recall's imports
if TYPE_CHECKING:
    from typing import Protocol

    from memoryd.index.fetch import Found

    class Settings(Protocol):
        """The ``search`` settings ranking reads (config's SearchConfig)."""

        @property
        def score_floor(self) -> float: ...
        @property
        def half_life_days(self) -> float: ...
        @property
        def decay_floor(self) -> float: ...
        @property
        def project_prior(self) -> float: ...
        @property
        def global_prior(self) -> float: ...
        @property
        def team_prior(self) -> float: ...
        @property
        def recall_boost_max(self) -> float: ...

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


DAY_MS = 86_400_000
BOOST_HALF = 3  # hits at which the recall boost is half its maximum


def rank(
    settings: Settings,
    found: Sequence[Found],
    hits: Mapping[str, Callable[[str], int]],
    now_ms: int,
    limit: int,
    *,
    coverage: Callable[[Found], int] | None = None,
    dates: Sequence[tuple[int, int]] = (),
) -> list[tuple[float, Found, dict[str, float]]]:
    """The ``limit`` best of ``found`` as ``(score, found, parts)``, ranked and cut at the
    score floor. ``hits``: each root's hit count lookup, by root path.

    ``coverage``: how many distinct query terms a candidate holds; the floor never cuts a
    candidate holding as many as the best one (:func:`floor_cut`). ``dates``: the query's
    date ranges (:func:`memoryd.index.tokenizer.query_dates`), in ms; a memory created or
    updated within one (:func:`dated`) has its score times :data:`DATE_BOOST` (a part
    named ``date``), within its coverage tier.

    Each candidate's factors are worked out as :func:`score_parts` does, in one loop
    with the settings read once (a query has up to 50 candidates); only the few kept
    get their ``parts`` as a dict. The score is the same product, in the same order.
    :func:`ranked` and :func:`cut` are done here as one sort of plain tuples,
    ``(not full, -score, position, ...)``: the position breaks ties as the stable sort
    by ``(not full, -score)`` does, with no key function called per candidate.
    """
    priors = {scope: scope_prior(settings, scope) for scope in ("project", "team")}
    other = settings.global_prior
    half_life, boost_max = settings.half_life_days, settings.recall_boost_max
    floor = min(1.0, settings.decay_floor)
    decays = not half_life <= 0  # (not "> 0": a NaN half-life decays, as decay() has it)
    unboosted = 1.0 + boost_max * 0 / (0 + BOOST_HALF)  # boost() of no hits, as it computes it
    day = DAY_MS
    scored: list[tuple[bool, float, int, Found, tuple[float, ...]]] = []
    keep = scored.append
    factors: tuple[float, ...]
    best = None  # the best relevance, as cut's max() finds it
    for f in found:
        relevance, row, full = f
        _rowid, root, scope, layout, memory_id, pinned, created, updated, mtime_ns = row[:9]
        if best is None or relevance > best:
            best = relevance
        prior = priors.get(scope, other)
        if layout != "plugin":  # math.prod's product, in the same order
            score, factors = relevance * prior, (relevance, prior)
        else:
            if pinned or not decays:
                age = 1.0
            else:  # decay(), inlined; "a if a > b else b" is max(b, a), without the call
                since = now_ms - (updated or created or mtime_ns // 1_000_000)
                curve = 0.5 ** ((since if since > 0 else 0) / day / half_life)
                age = curve if curve > floor else floor
            count = hits[root](memory_id)  # boost(), inlined; most memories have no hits
            boosted = 1.0 + boost_max * count / (count + BOOST_HALF) if count > 0 else unboosted
            score = relevance * prior * age * boosted
            factors = (relevance, prior, age, boosted)
        if dates and dated(dates, created, updated):  # a soft signal: one more factor
            score, factors = score * DATE_BOOST, (*factors, DATE_BOOST)
        keep((not full, -score, len(scored), f, factors))
    if best is None:
        return []
    scored.sort()  # = ranked(): every full match first, then by score, ties in their order
    kept = floor_cut(scored, settings.score_floor * best, coverage, limit)
    return [(-s[1], s[3], _parts(s[4])) for s in kept]


PARTS = ("relevance", "scope", "age", "hits")  # score_parts' names, in its order
DATE_BOOST = 1.5  # a memory dated within a date the query names (a soft signal)
DATE_BEFORE_MS = DAY_MS  # a date's range reaches this far before it (time zones) ...
DATE_AFTER_MS = 2 * DAY_MS  # ... and this far after: a day is told of that day or the next


def _parts(values: tuple[float, ...]) -> dict[str, float]:
    """The named factors: a row of another layout has two (relevance, scope), a dated
    memory one more at the end (``date``)."""
    names = PARTS[:2] if len(values) in (2, 3) else PARTS
    parts = dict(zip(names, values, strict=False))
    if len(values) in (3, 5):
        parts["date"] = values[-1]
    return parts


def dated(dates: Sequence[tuple[int, int]], created: int | None, updated: int | None) -> bool:
    """Whether ``created`` or ``updated`` falls within one of ``dates`` (widened by
    :data:`DATE_BEFORE_MS` and :data:`DATE_AFTER_MS`)."""
    for stamp in (created, updated):
        if stamp is not None:
            for start, end in dates:
                if start - DATE_BEFORE_MS <= stamp < end + DATE_AFTER_MS:
                    return True
    return False


def floor_cut(
    scored: list[tuple[bool, float, int, Found, tuple[float, ...]]],
    bar: float,
    coverage: Callable[[Found], int] | None,
    limit: int,
) -> list[tuple[bool, float, int, Found, tuple[float, ...]]]:
    """The first ``limit`` of ``scored`` (ranked) without the partial matches whose bm25 is
    under ``bar``, unless such a match holds as many query terms as the first entry does
    (``coverage``): a short list of memories that each hold the same words is a list of
    equals, and cutting its tail lost the answer its tenth place held
    (bench/conversations.py). Without ``coverage``, every partial match under the bar goes.
    """
    top: int | None = None
    kept = []
    for s in scored:
        if not s[0] or s[3][0] >= bar:
            kept.append(s)
        elif coverage is not None:
            if top is None:
                top = coverage(scored[0][3])
            if coverage(s[3]) >= top:
                kept.append(s)
        if len(kept) >= limit:
            break
    return kept or scored[:1]


def score(settings: Settings, relevance: float, row: Rankable, hits: int, now_ms: int) -> float:
    """bm25 relevance × scope prior × time decay × recall boost (pure)."""
    return math.prod(score_parts(settings, relevance, row, hits, now_ms).values())


def scope_prior(settings: Settings, scope: str) -> float:
    """The prior of a root's scope: project over team over global."""
    if scope == "project":
        return settings.project_prior
    return settings.team_prior if scope == "team" else settings.global_prior


def score_parts(
    settings: Settings, relevance: float, row: Rankable, hits: int, now_ms: int
) -> dict[str, float]:
    """The factors a score is the product of, by name (``memoryd ui`` shows them as they are).

    ``relevance`` (bm25), ``scope`` (the prior), ``age`` (the decay) and ``hits`` (the boost).
    Rows of the layered and claude layouts rank by bm25 and scope prior only, as the
    layered memory's own search does (no decay, and memoryd keeps no hit counts there).
    """
    prior = scope_prior(settings, row.scope)
    if row.layout != "plugin":
        return {"relevance": relevance, "scope": prior}
    return {
        "relevance": relevance,
        "scope": prior,
        "age": decay(settings, row, now_ms),
        "hits": boost(settings, hits),
    }


def decay(settings: Settings, row: Rankable, now_ms: int) -> float:
    """Halves every ``half_life_days`` since ``updated``, never below ``decay_floor``;
    pinned memories never decay."""
    if row.pinned or settings.half_life_days <= 0:
        return 1.0
    stamp = row.updated or row.created or row.mtime_ns // 1_000_000
    age_days = max(0, now_ms - stamp) / DAY_MS
    return max(min(1.0, settings.decay_floor), float(0.5 ** (age_days / settings.half_life_days)))


def boost(settings: Settings, hits: int) -> float:
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
