from __future__ import annotations

import re
import sys

from hypothesis import given
from hypothesis import strategies as st

from memoryd.index.snippet import (
    _best_window,
    _fold,
    _is_word,
    _words_starting_with,
    explain,
    find_spans,
    hit_counts,
    make_snippet,
    term_counts,
)
from memoryd.index.tokenizer import (
    CJK_RANGES,
    index_tokens,
    is_cjk,
    is_cjk_char,
    normalize,
    tokenize,
)


def spec_fold(text: str) -> tuple[str, list[int]]:
    """Each character normalized on its own, with the index it came from."""
    pieces, origin = [], []
    for index, char in enumerate(text):
        folded = char.lower() if char.isascii() else normalize(char)
        pieces.append(folded)
        origin += [index] * len(folded)
    return "".join(pieces), origin


_CHARS = st.sampled_from([*"aZ_ 部署ＬｏｃｋßﬁİΩé\u0301\u3000カ한", "\U00020000"])


@given(st.text(_CHARS, max_size=30) | st.text(max_size=30))
def test_fold_matches_folding_each_character(text: str) -> None:
    folded, origin = _fold(text)
    assert (folded, list(origin)) == spec_fold(text)


def test_a_megabyte_of_compiled_text_is_marked_like_a_short_one() -> None:
    line = "| pitfalls/部署-{n} | 部署脚本 uses pnpm, never npm | lockfile |\n"
    text = "".join(line.format(n=n) for n in range(16_000))  # ~1 MB, a 10k-memory ROOT.md
    assert make_snippet(["部署", "pnpm"], text).startswith(
        "| pitfalls/«部署»-0 | «部署»脚本 uses «pnpm», never npm"
    )
    spans = find_spans(["pnpm"], text)
    assert len(spans) == 16_000
    assert text[spans[-1][0] : spans[-1][1]] == "pnpm"


def test_best_window_covers_the_most_matches() -> None:
    spans = [(0, 3), (500, 503), (510, 513), (520, 523), (2000, 2003)]
    assert _best_window(spans) == 500 - 40  # the window opens a quarter before the cluster


@given(st.text(_CHARS, max_size=40) | st.text(max_size=40), st.lists(st.text(_CHARS, max_size=3)))
def test_term_counts_equal_counting_the_index_tokens(text: str, extra: list[str]) -> None:
    terms = list(dict.fromkeys([*tokenize(text), *(t for e in extra for t in tokenize(e))]))
    tokens = index_tokens(text)
    folded = normalize(text)
    expected = {t: (folded.count(t) if is_cjk_char(t) else tokens.count(t)) for t in terms}
    assert term_counts(terms, folded) == {t: n for t, n in expected.items() if n}


class _Row:
    def __init__(self, id: str, summary: str | None, load_when: list[str], body: str) -> None:
        self.id, self.summary, self.load_when, self.body = id, summary, tuple(load_when), body


_TEXT = st.text(_CHARS, max_size=40) | st.text(max_size=40)


@given(_TEXT, st.one_of(st.none(), _TEXT), st.lists(_TEXT, max_size=2), _TEXT, st.lists(_TEXT))
def test_explain_is_counting_every_field_and_marking_the_body(
    id: str, summary: str | None, load_when: list[str], body: str, queries: list[str]
) -> None:
    """The shortcut (the body searched once for counts and snippet) changes nothing."""
    row = _Row(id, summary, load_when, body)
    words = [w for q in [body, *queries] for w in tokenize(q)]
    forms = {w: w.upper() for w in dict.fromkeys(words)}
    terms = list(forms)
    if not terms:
        return
    expected_counts = {forms[t]: n for t, n in hit_counts(terms, row).items()}
    expected = (expected_counts, make_snippet(terms, body or summary or "", marks=("<<", ">>")))
    assert explain(forms, row, ("<<", ">>")) == expected


def test_a_word_character_is_what_the_tokenizer_keeps_in_a_word() -> None:
    word = re.compile(f"[^\\W{CJK_RANGES}]")
    differ = [c for c in map(chr, range(sys.maxunicode + 1)) if bool(word.match(c)) != _is_word(c)]
    assert differ == []


@given(_TEXT, st.lists(_TEXT, min_size=1, max_size=3))
def test_words_starting_with_find_what_the_regex_finds(text: str, sources: list[str]) -> None:
    """The words of a query (stems, not CJK) found as the regex the search compiled did."""
    terms = [t for s in [text, *sources] for t in tokenize(s) if not is_cjk(t[0])]
    if not terms:
        return
    word = f"[^\\W{CJK_RANGES}]"
    heads = "|".join(re.escape(t[: max(1, len(t) - 1)]) for t in terms)
    pattern = re.compile(f"(?<!{word})(?:{heads}){word}*")
    assert _words_starting_with(text, terms) == [m.span() for m in pattern.finditer(text)]
