"""Hit reasons and snippets, cut from the original text (pure).

A query term is matched against the normalized text (NFKC, case folded) and
each match is mapped back to the characters of the original, so a snippet
shows what the author wrote (``LockFile``, full-width letters, ``deployment``
for the term ``deploy``) rather than the bigrams and stems the index stores.
"""

from __future__ import annotations

import bisect
import functools
import unicodedata
from collections.abc import Sequence

from memoryd.index.tokenizer import WORD_CHAR, char_kind, is_cjk, is_cjk_char, normalize, stem

TYPE_CHECKING = False  # typing stays off the lean recall's imports (memoryd.lean_recall)
if TYPE_CHECKING:
    from typing import Protocol

    class _Text(Protocol):
        @property
        def id(self) -> str: ...
        @property
        def summary(self) -> str | None: ...
        @property
        def load_when(self) -> tuple[str, ...]: ...
        @property
        def body(self) -> str: ...


OPEN, CLOSE = "«", "»"
MARKERS = {"plugin": (OPEN, CLOSE), "layered": ("<<", ">>")}  # `recall --markers`
WIDTH = 160  # characters of original text in a snippet


def explain(
    forms: dict[str, str], row: _Text, marks: tuple[str, str]
) -> tuple[dict[str, int], str]:
    """A hit's reasons: each matched query word as written (``forms``: term -> word) with
    its count, and the snippet around the matches.

    The same as :func:`hit_counts` and :func:`make_snippet` on the row, with one search
    of the normalized head (id, summary, load_when) and body, joined by a newline, for
    both, when folding the body character by character gives what the tokenizer's
    :func:`normalize` gives (always for ASCII, nearly always otherwise): a term never
    spans a newline, so the counts add up field by field, and the matches past the head
    are the body's. What depends on the query alone is worked out once per query
    (:func:`_plan`), not once per hit.
    """
    body = row.body
    if body:
        if body.isascii():  # _fold_exact's first case, without the call
            folded, exact = body.lower(), True
        else:
            folded, _origin, exact = _fold_exact(body)
        if exact:
            query, words, heads = _plan(tuple(forms))
            head = normalize("\n".join([row.id, row.summary or "", " ".join(row.load_when)]))
            skip = len(head) + 1  # where the body starts in the joined text
            text = head + "\n" + folded
            stems = _stems(text, words, heads) if words else {}
            counts: dict[str, int] = {}
            spans: list[tuple[int, int]] = []
            for term in query:
                found = stems.get(term, []) if term in words else _finds(text, term)
                if found:
                    counts[forms[term]] = len(found)
                    spans += [(a - skip, b - skip) for a, b in found if a >= skip]
            if spans:
                return counts, _render(body, _merge(spans), marks)
            return counts, _render(body if body.strip() else "", [], marks)
    every = list(forms)
    counts = {forms[t]: n for t, n in hit_counts(every, row).items()}
    return counts, make_snippet(every, body or row.summary or "", marks=marks)


@functools.lru_cache(maxsize=256)
def _plan(terms: tuple[str, ...]) -> tuple[tuple[str, ...], frozenset[str], tuple[str, ...]]:
    """What explaining a query's hits needs of its terms, once per query: the terms, the
    word (not CJK) terms, and the heads their words begin with (see
    :func:`_words_starting_with`)."""
    words = _word_terms(terms)
    return terms, frozenset(words), _heads(words)


def _finds(text: str, term: str) -> list[tuple[int, int]]:
    """Every (overlapping) occurrence of a CJK term."""
    found: list[tuple[int, int]] = []
    size = len(term)
    start = text.find(term)
    while start >= 0:
        found.append((start, start + size))
        start = text.find(term, start + 1)
    return found


def _stems(
    text: str, words: frozenset[str], heads: tuple[str, ...]
) -> dict[str, list[tuple[int, int]]]:
    """Where each of the word terms ``words`` occurs in ``text`` as a word's stem."""
    stems: dict[str, list[tuple[int, int]]] = {}
    for start, end in _word_spans(text, heads):
        word = stem(text[start:end])
        if word in words:
            stems.setdefault(word, []).append((start, end))
    return stems


def hit_counts(terms: Sequence[str], row: _Text) -> dict[str, int]:
    """How often each query term occurs in the memory (terms that occur at all)."""
    parts = [row.id, row.summary or "", " ".join(row.load_when), row.body]
    return term_counts(terms, normalize("\n".join(parts)))


def term_counts(terms: Sequence[str], folded: str) -> dict[str, int]:
    """How often each term occurs among the index tokens of the normalized text ``folded``.

    Counted by searching for the terms rather than tokenizing the whole text (a
    compiled ROOT.md is a megabyte): a word term as a whole word, a bigram at
    every position (they overlap), a single CJK character anywhere, as a prefix
    search would find it.
    """
    words = _Words(folded, terms)
    counts: dict[str, int] = {}
    for term in terms:
        found = folded.count(term) if is_cjk_char(term) else len(words.occurrences(term))
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
    words = _Words(folded, terms)
    spans: list[tuple[int, int]] = []
    for term in terms:
        for start, end in words.occurrences(term):
            spans.append((origin[start], origin[end - 1] + 1))
    return _merge(spans)


class _Words:
    """Where terms occur in a normalized text: a CJK term anywhere, a word term as a whole
    word whose stem it is (``npm`` not in ``pnpm``; ``deploy`` in ``deployment``).

    Only the words that begin like a term's stem are stemmed (found by ``str.find``
    for all the terms), not every word of the text: a stem is the word's beginning,
    bar a last ``y``/``i``.
    """

    def __init__(self, text: str, terms: Sequence[str]) -> None:
        self.text = text
        self.words = _word_terms(tuple(terms))
        self._stems: dict[str, list[tuple[int, int]]] | None = None

    def occurrences(self, term: str) -> list[tuple[int, int]]:
        if term in self.words:
            if self._stems is None:
                self._stems = _stems(self.text, frozenset(self.words), _heads(self.words))
            return self._stems.get(term, [])
        return _finds(self.text, term)


def _heads(terms: Sequence[str]) -> tuple[str, ...]:
    """What a word whose stem is one of ``terms`` begins with (a stem may change a last
    ``y`` to ``i``: ``happi`` is the stem of ``happy``)."""
    return tuple(sorted({t[: max(1, len(t) - 1)] for t in terms}))


def _words_starting_with(text: str, terms: Sequence[str]) -> list[tuple[int, int]]:
    """Where the whole words (as the tokenizer cuts them) that begin like one of ``terms``
    are, in order.

    The spans of ``(?<!W)(?:heads)W*`` with ``W`` a word character that is not CJK, found
    with ``str.find`` and a character test rather than a regex compiled for the terms:
    compiling that character class cost 0.2 ms, more than a hit's reasons and snippet.
    """
    return _word_spans(text, _heads(terms))


def _word_spans(text: str, heads: Sequence[str]) -> list[tuple[int, int]]:
    """:func:`_words_starting_with`, given the heads: each word walked character by
    character from its start (no regex: importing ``re`` costs the lean recall more than
    its snippets)."""
    starts: set[int] = set()
    for head in heads:
        at = text.find(head)
        while at >= 0:
            starts.add(at)
            at = text.find(head, at + 1)
    spans: list[tuple[int, int]] = []
    end, size = 0, len(text)
    ascii_word = _ASCII_WORD
    for start in sorted(starts):
        if start < end:
            continue
        if start:  # a word starts here only after a character of no word
            before = text[start - 1]
            if before in ascii_word or (not before.isascii() and _is_word(before)):
                continue
        end = start + 1
        while end < size:
            char = text[end]
            if char not in ascii_word and (char.isascii() or not _is_word(char)):
                break
            end += 1
        spans.append((start, end))
    return spans


# The ASCII characters of a word (what _is_word holds for ASCII).
_ASCII_WORD = frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")


def _is_word(char: str) -> bool:
    """A character of a word token that is not CJK (the tokenizer's :func:`char_kind`)."""
    return char_kind(char) == WORD_CHAR


@functools.lru_cache(maxsize=1024)
def _word_terms(terms: tuple[str, ...]) -> tuple[str, ...]:
    """The terms that are words, not CJK (sorted): a query's few terms, asked per hit."""
    return tuple(sorted({t for t in terms if not is_cjk(t[0])}))


def _fold(text: str) -> tuple[str, Sequence[int]]:
    """The normalized text and, for each of its characters, the original index.

    Characters are normalized one by one. When each becomes exactly one character
    (nearly always) the map is the identity: a compiled ROOT.md of 10k memories is a
    megabyte of text.
    """
    folded, origin, _exact = _fold_exact(text)
    return folded, origin


def _fold_exact(text: str) -> tuple[str, Sequence[int], bool]:
    """:func:`_fold`, and whether the map is the identity and the folded text is what
    :func:`normalize` makes of the whole text (what :func:`explain`'s shortcut needs).

    A text already in NFKC (``unicodedata.is_normalized``, a quick check in C) holds no
    character that NFKC changes: such a character has a decomposition and is no primary
    composite, so NFKC never outputs it, in any context. Each character then folds to its
    case folding alone, and the whole text to ``text.casefold()``: no table to build.
    Otherwise each distinct character is folded on its own and the text translated.
    """
    if text.isascii():
        return text.lower(), range(len(text)), True
    if unicodedata.is_normalized("NFKC", text):
        folded = text.casefold()
        if len(folded) == len(text):  # no folding is empty: each character stayed one
            return folded, range(len(text)), True
    table = {ord(c): f for c in set(text) if (f := _fold_char(c)) != c}
    if all(len(f) == 1 for f in table.values()):
        folded = text.translate(table)
        return folded, range(len(text)), folded == normalize(text)
    pieces: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        folded = _fold_char(char)
        pieces.append(folded)
        origin.extend([index] * len(folded))
    return "".join(pieces), origin, False


@functools.lru_cache(maxsize=8192)
def _fold_char(char: str) -> str:
    return char.lower() if char.isascii() else normalize(char)


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _render(text: str, spans: list[tuple[int, int]], marks: tuple[str, str] = (OPEN, CLOSE)) -> str:
    size = len(text)
    if not spans:  # what the loop below makes of no spans: the first WIDTH characters
        return " ".join((text[:WIDTH] + "…" if size > WIDTH else text).split())
    begin = max(0, min(_best_window(spans), size - WIDTH))
    end = min(size, begin + WIDTH)
    out: list[str] = ["…"] if begin > 0 else []
    cursor = begin
    for start, stop in spans:
        if stop <= begin or start >= end:
            continue
        left = start if start > begin else begin  # max(start, begin), without the call
        right = stop if stop < end else end  # min(stop, end)
        out += [text[cursor:left], marks[0], text[left:right], marks[1]]
        cursor = right
    out.append(text[cursor:end])
    if end < size:
        out.append("…")
    return " ".join("".join(out).split())  # every run of white space one space, none at the ends


def _best_window(spans: list[tuple[int, int]]) -> int:
    """Where a window of WIDTH characters covering the most matches starts."""
    if len(spans) == 1:  # what the loop below finds for one span
        return max(0, spans[0][0] - WIDTH // 4)
    starts = [start for start, _ in spans]  # sorted: spans are merged
    best, best_count = starts[0], 0
    for i, start in enumerate(starts):
        count = bisect.bisect_left(starts, start + WIDTH, lo=i) - i
        if count > best_count:
            best, best_count = start, count
    return max(0, best - WIDTH // 4)
