"""The per-session half of the injection block: what a session already holds, and the block
of only what is new to it.

A harness that keeps every block in the session's history (Claude Code keeps each hook's
``additionalContext``) passes what the session already holds (:class:`Given`): the rules,
the goal and the outline (the frame) come again only when the rules or the goal changed,
and a memory only when it was not shown yet or its text changed since. A block with
nothing new is empty. Pure, like :mod:`memoryd.injection`, whose layers it builds on;
:mod:`memoryd.agent.injected` keeps the record on disk.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from memoryd.injection import (
    DEFAULT_TOTAL,
    Block,
    RootBlocks,
    Searched,
    Shown,
    build,
    memory_sections,
    ordered,
    rule_lines,
    searched_lines,
    size,
)


@dataclass(frozen=True)
class Given:
    """What a session's context already holds from earlier blocks: the digest of the frame
    (:func:`frame_digest`) and each memory shown (:func:`memory_key` to :func:`shown_digest`)."""

    frame: str = ""
    shown: Mapping[str, str] = field(default_factory=dict)


def memory_key(hit: Shown) -> str:
    """The memory, across roots (an id is unique within its root)."""
    return f"{hit.scope}:{hit.id}"


def shown_digest(hit: Shown) -> str:
    """What was shown of it: a changed body or staleness shows it again."""
    return digest([hit.summary or "", hit.body, *hit.stale])


def frame_digest(views: Sequence[RootBlocks]) -> str:
    """The rules and the goals a frame carries (the outline may be a little out of date
    within a session: memory_recall reads the tree as it is)."""
    return digest([*rule_lines(views), *(line for v in ordered(views) for line in v.goal)])


def block_for(
    views: Sequence[RootBlocks],
    hits: Sequence[Shown],
    max_chars: int,
    max_entries: int,
    outline_chars: int,
    *,
    total_chars: int = DEFAULT_TOTAL,
    query: Searched | None = None,
    given: Given | None = None,
) -> Block:
    """:func:`memoryd.injection.build`'s block with the record of what it carries (its
    frame's digest, each memory shown). ``given``: what the session already holds (the
    frame and the memories it has are left out)."""
    frame = frame_digest(views)
    if given is not None:
        hits = [h for h in hits if given.shown.get(memory_key(h)) != shown_digest(h)]
        if given.frame == frame:
            limits = (max_chars, max_entries, total_chars)
            return _news(views, hits, limits, query=query, frame=frame)
    block = build(
        views, hits, max_chars, max_entries, outline_chars, total_chars=total_chars, query=query
    )
    return replace(block, frame=frame, shown=_shown(hits, block.entries))


def _news(
    views: Sequence[RootBlocks], hits: Sequence[Shown], limits: tuple[int, int, int], *,
    query: Searched | None, frame: str,
) -> Block:  # fmt: skip
    """The block for a session that holds this frame: only the memories it was not shown,
    or nothing at all (an empty text) when there are none. ``limits``: max_chars,
    max_entries and total_chars, as :func:`block_for` takes them."""
    max_chars, max_entries, total_chars = limits
    rules = rule_lines(views)
    left_out = query.left_out if query is not None else 0
    searched = searched_lines(query)
    room = total_chars - len("<memory>\n</memory>\n") - size(searched)
    lines, entries, cut = memory_sections(hits, rules, max_chars, max_entries, room)
    if not entries:
        return Block("", rules, query_terms_left_out=left_out, frame=frame, framed=False)
    out = ["<memory>", *[*lines, *searched][1:], "</memory>"]  # a section starts blank
    return Block(
        "\n".join(out) + "\n", rules, entries, cut or bool(searched),
        query_terms_left_out=left_out, frame=frame, framed=False, shown=_shown(hits, entries),
    )  # fmt: skip


def _shown(hits: Sequence[Shown], entries: Sequence[dict[str, Any]]) -> dict[str, str]:
    ids = {(e["id"], e["scope"]) for e in entries}
    return {memory_key(h): shown_digest(h) for h in hits if (h.id, h.scope) in ids}


def digest(parts: Sequence[str]) -> str:
    """Whether a text changed (CRC-32 and length: hashlib costs a plain context's start)."""
    data = "\0".join(parts).encode("utf-8", "replace")
    return f"{zlib.crc32(data):08x}{len(data):x}"
