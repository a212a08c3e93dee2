"""A recalled memory as the user sees it: its JSON object and its block of text.

Both ``memoryd recall`` paths print hits through these two functions (the full one's
:class:`memoryd.index.search.Hit` and the lean one's, :mod:`memoryd.lean_recall`), so
their output is the same bytes by construction. Light: no typing or pathlib at run time.
A hit with no body (a file over ``search.max_file_bytes`` is indexed by its frontmatter
alone) has its summary as its snippet: the text shows it once, on the summary's line, and
says in the snippet's place that the body was not loaded (:func:`memoryd.oversize.not_loaded`,
the words the MCP answer and ``memoryd context`` give it); its JSON has ``"oversized": true``.
"""

from __future__ import annotations

from memoryd.oversize import not_loaded

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any, Protocol

    class _Row(Protocol):
        @property
        def layout(self) -> str: ...
        @property
        def type(self) -> str | None: ...
        @property
        def scope_id(self) -> str | None: ...
        @property
        def oversized(self) -> bool: ...
        @property
        def size(self) -> int: ...

    class _Verdict(Protocol):
        @property
        def stale(self) -> bool: ...
        @property
        def reason(self) -> str: ...
        @property
        def citation(self) -> Any: ...

    class Shown(Protocol):
        """What a hit shows (a search Hit, or the lean recall's)."""

        @property
        def id(self) -> str: ...
        @property
        def path(self) -> object: ...
        @property
        def root(self) -> object: ...
        @property
        def scope(self) -> str: ...
        @property
        def kind(self) -> str | None: ...
        @property
        def summary(self) -> str | None: ...
        @property
        def score(self) -> float: ...
        @property
        def parts(self) -> dict[str, float]: ...
        @property
        def terms(self) -> dict[str, int]: ...
        @property
        def snippet(self) -> str: ...
        @property
        def body(self) -> str: ...
        @property
        def row(self) -> _Row | None: ...
        @property
        def layout(self) -> str: ...  # the row's, read without making the row
        @property
        def oversized(self) -> bool: ...  # the row's, likewise
        def conflict(self) -> dict[str, str]: ...


def provenance(hit: Shown) -> tuple[dict[str, str], str]:
    """A team root's hit's provenance fields and its line (:mod:`memoryd.team`), read from
    its file (the index keeps none of it; a few small files an answer); nothing for other
    hits, which import nothing for it (the lean recall stays light)."""
    if hit.scope != "team":
        return {}, ""
    from memoryd.memory import parse
    from memoryd.team import described
    from memoryd.team import provenance as fields

    try:
        with open(str(hit.path), "rb") as file:
            meta = parse(file.read()).meta
    except OSError:
        return {}, ""
    return fields(meta), described(meta)


def to_json(hit: Shown) -> dict[str, Any]:
    """The hit's JSON object (``memoryd recall --json``, the MCP tool, the UI)."""
    foreign = {}
    row = hit.row if hit.layout != "plugin" else None  # a plugin hit makes no row here
    if row is not None:
        foreign = {"layout": row.layout, "type": row.type, "scope_id": row.scope_id}
    found, _ = provenance(hit)
    return {
        **foreign,
        **hit.conflict(),
        "id": hit.id,
        "path": str(hit.path),
        "root": str(hit.root),
        "scope": hit.scope,
        "kind": hit.kind,
        "summary": hit.summary,
        "score": float(f"{hit.score:.6g}"),  # significant digits: bm25 can be ~1e-6
        "parts": {name: float(f"{value:.6g}") for name, value in hit.parts.items()},
        "terms": hit.terms,
        "snippet": hit.snippet,
        "body": hit.body,
        **({"oversized": True} if hit.oversized else {}),
        **({"provenance": found} if found else {}),
    }


def text(hits: Sequence[Shown], verdicts: Mapping[Any, Sequence[_Verdict]], cap: int) -> str:
    """The hits as ``memoryd recall`` prints them, numbered, with stale citations flagged
    (``cap``: ``search.max_file_bytes``, named where a body was over it)."""
    blocks = []
    for number, hit in enumerate(hits, start=1):
        label = hit.kind or (hit.row.type if hit.row is not None else None)
        kind = f"{label}, " if label else ""
        terms = ", ".join(f"{t}×{n}" for t, n in hit.terms.items())
        lines = [f"{number}. {hit.id}  ({kind}{hit.scope}, score {hit.score:.3g})"]
        if hit.summary:
            lines.append(f"   {hit.summary}")
        _, by = provenance(hit)
        if by:
            lines.append(f"   {by}")
        conflict = hit.conflict()
        if conflict:
            lines.append(
                f"   sync conflict copy: {conflict['conflict_device']}'s version of "
                f"{conflict['conflict_of']} (see CONFLICTS.md)"
            )
        if hit.body.strip():  # no body: the snippet is the summary, shown above (or blank)
            lines.append(f"   {hit.snippet}")
        elif hit.oversized and hit.row is not None:  # and a body not loaded says so
            lines.append("   " + not_loaded(hit.path, hit.row.size, cap))
        lines += [f"   matched: {terms}", f"   {hit.path}"]
        stale = [v for v in verdicts[hit.path] if v.stale]
        lines += [f"   MAY BE STALE: {v.citation.where}: {v.reason}" for v in stale]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def no_match(query: str, searched: Sequence[str]) -> str:
    """The note of a recall that found nothing in the roots ``searched`` (their paths)."""
    where = ", ".join(searched) or "no roots"
    return (
        f"no memory matches {query!r} (searched {where}); "
        "try fewer or rarer words, or another language"
    )
