"""Hit reasons and snippets, cut from the original text (pure).

A query term is matched against the normalized text (NFKC, case folded) and
each match is mapped back to the characters of the original, so a snippet
shows what the author wrote (``LockFile``, full-width letters) rather than
the bigrams the index stores.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Protocol

from memoryd.index.tokenizer import index_tokens, is_cjk, is_cjk_char, normalize

OPEN, CLOSE = "«", "»"
MARKERS = {"plugin": (OPEN, CLOSE), "layered": ("<<", ">>")}  # `recall --markers`
WIDTH = 160  # characters of original text in a snippet
_SPACE_RE = re.compile(r"\s+")


class _Text(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def summary(self) -> str | None: ...
    @property
    def load_when(self) -> tuple[str, ...]: ...
    @property
    def body(self) -> str: ...


def hit_counts(terms: Sequence[str], row: _Text) -> dict[str, int]:
    """How often each query term occurs in the memory (terms that occur at all)."""
    parts = [row.id, row.summary or "", " ".join(row.load_when), row.body]
    counter = Counter(t for part in parts for t in index_tokens(part))
    text = normalize("\n".join(parts))
    counts: dict[str, int] = {}
    for term in terms:
        found = text.count(term) if is_cjk_char(term) else counter[term]
        if found:
            counts[term] = found
    return counts


def make_snippet(terms: Sequence[str], *texts: str, marks: tuple[str, str] = (OPEN, CLOSE)) -> str:
    """About :data:`WIDTH` characters of the first text that matches, matches marked."""
    for text in texts:
        spans = find_spans(terms, text)
        if spans:
            return _render(text, spans, marks)
    first = next((t for t in texts if t.strip()), "")
    return _render(first, [], marks)


def find_spans(terms: Sequence[str], text: str) -> list[tuple[int, int]]:
    """Merged ``(start, end)`` ranges of the original ``text`` that match a term."""
    folded, origin = _fold(text)
    spans: list[tuple[int, int]] = []
    for term in terms:
        for start, end in _occurrences(term, folded):
            spans.append((origin[start], origin[end - 1] + 1))
    return _merge(spans)


def _occurrences(term: str, text: str) -> list[tuple[int, int]]:
    """Where ``term`` occurs; a word term only as a whole word (``npm`` not in ``pnpm``)."""
    whole = not is_cjk(term[0])
    found: list[tuple[int, int]] = []
    start = text.find(term)
    while start >= 0:
        end = start + len(term)
        if not whole or (_edge(text, start - 1) and _edge(text, end)):
            found.append((start, end))
        start = text.find(term, start + 1)
    return found


def _edge(text: str, index: int) -> bool:
    """No non-CJK word character at ``index`` (a word may end next to it)."""
    if index < 0 or index >= len(text):
        return True
    char = text[index]
    return not (char.isalnum() or char == "_") or is_cjk(char)


def _fold(text: str) -> tuple[str, list[int]]:
    """The normalized text and, for each of its characters, the original index."""
    if text.isascii():
        return text.lower(), list(range(len(text)))
    pieces: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        folded = char.lower() if char.isascii() else normalize(char)
        pieces.append(folded)
        origin.extend([index] * len(folded))
    return "".join(pieces), origin


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _render(text: str, spans: list[tuple[int, int]], marks: tuple[str, str] = (OPEN, CLOSE)) -> str:
    begin = _best_window(spans) if spans else 0
    begin = max(0, min(begin, len(text) - WIDTH))
    end = min(len(text), begin + WIDTH)
    out: list[str] = ["…"] if begin > 0 else []
    cursor = begin
    for start, stop in spans:
        if stop <= begin or start >= end:
            continue
        left, right = max(start, begin), min(stop, end)
        out += [text[cursor:left], marks[0], text[left:right], marks[1]]
        cursor = right
    out.append(text[cursor:end])
    if end < len(text):
        out.append("…")
    return _SPACE_RE.sub(" ", "".join(out)).strip()


def _best_window(spans: list[tuple[int, int]]) -> int:
    """Where a window of WIDTH characters covering the most matches starts."""
    best, best_count = spans[0][0], 0
    for i, (start, _) in enumerate(spans):
        count = sum(1 for s, _e in spans[i:] if s < start + WIDTH)
        if count > best_count:
            best, best_count = start, count
    return max(0, best - WIDTH // 4)
