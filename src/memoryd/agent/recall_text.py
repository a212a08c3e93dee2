"""memory_recall's answer as the model reads it: each hit with its heading (id, scope and
kind or another layout's type, score, matched terms), a staleness warning where its cited
code changed, and its body, all within what Claude Code shows the model.

Pure text from the hits (:mod:`memoryd.agent.mcp_server` runs the search): kept apart from
the server so the SDK is not needed to read or test how an answer is cut.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memoryd.agent import citing, context
from memoryd.index.hitview import provenance
from memoryd.injection import cut_body
from memoryd.inspection import INSPECT_CHARS

if TYPE_CHECKING:
    from memoryd.index.search import Hit


def format_hits(query: str, hits: list[Hit], checker: citing.Checker, cap: int) -> str:
    if not hits:
        return (
            f"No memory matched {query!r}. Zero results do not prove nothing was recorded: "
            "retry with fewer, rarer words (one or two), a synonym, or the other language."
        )
    parts = []
    for hit in hits:
        matched = ", ".join(f"{term}×{count}" for term, count in sorted(hit.terms.items()))
        head = f"## {hit.id} ({describe(hit)}, score {hit.score:.2f}"
        stale = citing.stale_reasons(checker.of_file(hit.path))
        warning = "".join(f"\nMAY BE STALE, check before trusting: {reason}" for reason in stale)
        _, by = provenance(hit)
        warning = f"\nTeam memory, {by}{warning}" if by else warning
        parts.append((hit, (
            f"{head}, matched: {matched or '-'})\n{hit.summary or '(no summary)'}{warning}\n\n"
            f"{context.shown_body(hit, cap).strip()}"
        )))  # fmt: skip
    return within(parts, RECALL_CHARS)


# What memory_recall answers at most: Claude Code keeps a longer tool answer out of the
# model's context (above about 50,000 characters it saves it to a file and shows the model
# its first 2 KB, so five runbooks of 14 KB reached the model as the start of the first).
RECALL_CHARS = INSPECT_CHARS
RECALL_CUT = "[… cut at the {limit}-character answer limit: the whole memory is {path}]"
RECALL_LEFT_OUT = (
    "[… {count} more matching memor{y} left out at the {limit}-character answer limit: "
    "{ids}; recall one with rarer words, or read its file]"
)
_MIN_ROOM = 200  # less room than this for a hit: it is left out, not cut to its heading


def within(parts: list[tuple[Hit, str]], limit: int) -> str:
    """The hits' texts, best first, in at most ``limit`` characters: whole while they fit,
    then the first that does not cut at a line (with where the whole memory is), then the
    ids of those left out. Each hit kept leaves room for the notice of those after it."""
    kept: list[str] = []
    used = 0
    for index, (hit, text) in enumerate(parts):
        after = _left_out(parts[index + 1 :], limit)
        reserve = len(after) + 2 if after else 0
        gap = 2 if kept else 0
        if used + gap + len(text) + reserve <= limit:
            kept.append(text)
            used += gap + len(text)
            continue
        marker = RECALL_CUT.format(limit=limit, path=hit.path)
        room = limit - used - gap - len(marker) - 1 - reserve
        left = parts[index + 1 :]
        if room >= _MIN_ROOM:
            head, _ = cut_body(text, room)
            kept.append(f"{head}\n{marker}")
        else:  # no room worth cutting to: this one is left out too
            left = parts[index:]
        notice = _left_out(left, limit)
        return "\n\n".join([*kept, *([notice] if notice else [])])
    return "\n\n".join(kept)


def _left_out(parts: list[tuple[Hit, str]], limit: int) -> str:
    if not parts:
        return ""
    ids = ", ".join(hit.id for hit, _ in parts)
    count = len(parts)
    return RECALL_LEFT_OUT.format(count=count, y="y" if count == 1 else "ies", limit=limit, ids=ids)


def describe(hit: Hit) -> str:
    """``scope kind`` for a memoryd memory; layout, type and scope_id for another layout's file."""
    row = hit.row if hit.layout != "plugin" else None  # memoryd's own: no row made
    if row is None:
        return f"{hit.scope} {hit.kind or 'memory'}"
    where = f", scope_id {row.scope_id}" if row.scope_id else ""
    return f"{hit.scope} {row.layout} file, type {row.type or 'free'}{where}"
