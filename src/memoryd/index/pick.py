"""The one way a recall picks its hits: fetch the candidates, rank them, cut.

FTS5's column-weighted bm25 picks ``min(limit*3, MAX_FETCH)`` candidates (never fewer
than ``limit``), plus every memory that holds all the terms when those are fewer;
:mod:`memoryd.index.ranking` orders and cuts them (coverage tiers first, see
docs/search.md). The full recall (:func:`memoryd.index.search.recall`) and the lean one
(:mod:`memoryd.lean_recall`) both call :func:`pick` and make their own kind of hit of
what it keeps. Light: the lean path loads it.
"""

from __future__ import annotations

from memoryd.index.fetch import candidates
from memoryd.index.ranking import rank

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from memoryd.index.fetch import Found, _Index, _Root, _Visible
    from memoryd.index.ranking import Settings

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
    strategy: str = "and-or",
    visible: _Visible | None = None,
    admit: Callable[[Sequence[Found]], None] | None = None,
) -> list[tuple[float, Found, dict[str, float]]]:
    """The ``limit`` best memories for the query words ``forms`` (term -> word) in
    ``roots``, as :func:`memoryd.index.ranking.rank` gives them. ``admit`` sees every
    candidate before ranking (the lean path hands over to the full one there)."""
    found = candidates(
        db, list(forms), roots, filters, fetch_size(limit),
        strategy=strategy, enough=limit, visible=visible,
    )  # fmt: skip
    if admit is not None:
        admit(found)
    if not found:
        return []
    return rank(settings, found, counts, now_ms, limit)
