"""The one way a recall picks its hits: fetch the candidates, rank them, cut.

FTS5's column-weighted bm25 picks ``min(limit*3, MAX_FETCH)`` candidates (never fewer
than ``limit``), plus every memory that holds all the terms when those are fewer;
:mod:`memoryd.index.ranking` orders and cuts them (coverage tiers first, see
docs/search.md). The full recall (:func:`memoryd.index.search.recall`) and the lean one
(:mod:`memoryd.lean_recall`) both call :func:`pick` and make their own kind of hit of
what it keeps. Light: the lean path loads it.
"""

from __future__ import annotations

import functools

from memoryd.index.fetch import candidates, coverage
from memoryd.index.ranking import rank

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from memoryd.index.fetch import Found, _Index, _Root, _Visible
    from memoryd.index.ranking import Settings

    Kept = tuple[float, Found, dict[str, float]]  # (score, found, parts), as rank gives them
    Ranked = Callable[..., list[Kept]]  # rank with the query's settings: (found, limit=)

MAX_FETCH = 50


def fetch_size(limit: int) -> int:
    """How many candidates a recall of ``limit`` hits fetches by bm25."""
    return max(limit, min(limit * 3, MAX_FETCH))


def pick(  # noqa: PLR0917 - a recall's settings, passed on
    db: _Index,
    forms: Mapping[str, str],
    roots: Sequence[_Root],
    filters: Mapping[str, str | None],
    limit: int,
    settings: Settings,
    counts: Mapping[str, Callable[[str], int]],
    now_ms: int,
    *,
    dates: Sequence[tuple[int, int]] = (),
    strategy: str = "and-or",
    visible: _Visible | None = None,
    admit: Callable[[Sequence[Found]], None] | None = None,
    fuse: Callable[[list[Found], Ranked, int], list[Kept]] | None = None,
) -> list[Kept]:
    """The ``limit`` best memories for the query words ``forms`` (term -> word) and
    ``dates`` in ``roots``, as :func:`memoryd.index.ranking.rank` gives them. ``admit``
    sees every candidate before ranking (the lean path hands over to the full one there);
    ``fuse`` (the full path's semantic stage) takes the candidates, the ranking and the
    fetch size and gives the kept ones instead."""
    terms = list(forms)
    fetch = fetch_size(limit)
    found = candidates(
        db, terms, roots, filters, fetch, strategy=strategy, enough=limit, visible=visible
    )
    if admit is not None:
        admit(found)
    ranked = functools.partial(
        rank, settings, hits=counts, now_ms=now_ms, coverage=coverage(terms), dates=dates
    )
    if fuse is not None:
        return fuse(found, ranked, fetch)
    if not found:
        return []
    return ranked(found, limit=limit)
