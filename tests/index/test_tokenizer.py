from __future__ import annotations

import datetime
import re
import sqlite3
import subprocess
import sys
import unicodedata

import pytest
import Stemmer
from hypothesis import given
from hypothesis import strategies as st

from memoryd.index import tokenizer
from memoryd.index.tokenizer import (
    CJK_RANGES,
    _index_re,
    fts_expression,
    index_text,
    index_tokens,
    is_cjk,
    normalize,
    query_dates,
    query_terms,
    split_run,
    stem,
    tokenize,
)

SENTENCE = "部署脚本用 pnpm 而不是 npm,因为 lockfile 不兼容"


def test_cjk_runs_become_bigrams_and_words_stay_whole() -> None:
    assert tokenize(SENTENCE) == [
        "部署", "署脚", "脚本", "本用", "pnpm", "而不", "不是", "npm", "因为",
        "lockfil", "不兼", "兼容",
    ]  # fmt: skip


def test_one_character_run_is_the_character() -> None:
    assert tokenize("用 a 部") == ["用", "a", "部"]


def test_index_adds_the_last_character_of_each_run() -> None:
    assert index_tokens("部署脚本") == ["部署", "署脚", "脚本", "本"]


def test_nfkc_and_case_folding() -> None:
    assert tokenize("ＬｏｃｋＦｉｌｅ Straße ＡＢＣ") == ["lockfil", "strass", "abc"]


def test_kana_and_hangul_are_cjk_and_underscore_joins_words() -> None:
    assert tokenize("カタカナ 한국어 snake_case x2") == [
        "カタ", "タカ", "カナ", "한국", "국어", "snake_cas", "x2",
    ]  # fmt: skip


def test_punctuation_separates() -> None:
    assert tokenize("a.b-c/d,部署。配置") == ["a", "b", "c", "d", "部署", "配置"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ('"', None),
        ("*", None),
        ('say "hi" AND (bye) NEAR x*', '"say" OR "hi" OR "bye" OR "near" OR "x"'),
        ("部", '"部"*'),
        ("部署 部署", '"部署"'),
    ],
)
def test_fts_expression_quotes_every_term(query: str, expected: str | None) -> None:
    assert fts_expression(query_terms(query)) == expected


# The specification, written as plainly as possible: the tokenizer's fast path
# (ASCII runs first, CJK split only inside non-ASCII runs) must agree with it.
_SPEC_RUN = re.compile(f"[{CJK_RANGES}]+|[^\\W{CJK_RANGES}]+")


def spec_tokens(text: str, tails: bool) -> list[str]:
    out: list[str] = []
    for run in _SPEC_RUN.findall(unicodedata.normalize("NFKC", text).casefold()):
        if not is_cjk(run[0]) and all(c <= "\u024f" for c in run):
            out.append(Stemmer.Stemmer("english").stemWord(run))  # Latin script: its stem
        elif not is_cjk(run[0]) or len(run) == 1:
            out.append(run)
        else:
            out.extend(run[i : i + 2] for i in range(len(run) - 1))
            out.extend([run[-1]] if tails else [])
    return out


_ALPHABET = st.sampled_from(
    list("aZz09_ -.,/:'\"\t\nßİﬁ") + list("部署脚本兼容々〇カタかな한국ㄱ。、")
    + ["\u2f00", "\u2e80", "\uff21", "\uff10", "\u0301", "\u00a0", "\U00020000", "é", "Ω"]
)  # fmt: skip


_FTS = sqlite3.connect(":memory:")
_FTS.execute("CREATE VIRTUAL TABLE t USING fts5(c, content='', tokenize=\"ascii tokenchars '_'\")")
_FTS.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")


def fts_reads(stored: str) -> list[str]:
    """The tokens FTS5 (as the index creates it) reads from ``stored``, in order."""
    with _FTS:
        _FTS.execute("INSERT INTO t(rowid, c) VALUES (1, ?)", (stored,))
        tokens = [term for (term,) in _FTS.execute("SELECT term FROM v ORDER BY offset")]
        _FTS.execute("INSERT INTO t(t, rowid, c) VALUES ('delete', 1, ?)", (stored,))
    return tokens


@given(st.text(_ALPHABET, max_size=40) | st.text(max_size=40))
def test_tokens_match_the_specification(text: str) -> None:
    assert index_tokens(text) == spec_tokens(text, tails=True)
    assert tokenize(text) == spec_tokens(text, tails=False)
    for _ in range(2):  # the second time from index_text's memo
        stored = index_text(text)
        assert stored.split() == spec_tokens(text, tails=True)
        assert fts_reads(stored) == spec_tokens(text, tails=True)  # spaces in a row add none


def test_a_piece_without_tokens_leaves_two_spaces_that_fts5_reads_past() -> None:
    assert index_text("部署 。 pnpm → lockfile —") == "部署 署  pnpm  lockfil "
    assert fts_reads(index_text("部署 。 pnpm → lockfile —")) == ["部署", "署", "pnpm", "lockfil"]


def test_index_text_keeps_a_bounded_memo_of_words_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The memo keeps words and short runs (``42``, 部署), not an id's long number or a CJK
    clause, and is emptied when full, so a daemon that indexes ever-new words never grows
    it past its size."""
    memo = tokenizer._RunText()
    monkeypatch.setattr(tokenizer, "_RUN_TEXT", memo)
    monkeypatch.setattr(tokenizer, "RUN_MEMO_SIZE", 50)
    assert index_text("Deploying 000123 部署脚本用 pnpm") == "deploy 000123 部署 署脚 脚本 本用 用 pnpm"
    assert index_text("部署脚本用 deploys") == "部署 署脚 脚本 本用 用 deploy"
    assert index_text("Deploy #42") == "deploy 42"
    assert index_text("部署 café 部。 lock部署") == "部署 署 café 部 lock 部署 署"
    # the pieces between ASCII non-word characters, as UTF-8: words, short runs, a short
    # run with a mark (部。); not a long number, a CJK clause or a word run into CJK (lock部署)
    keys = {"deploying", "pnpm", "deploys", "deploy", "42", "部署", "café", "部。"}
    assert set(memo) == {key.encode() for key in keys}
    words = [f"word{chr(97 + i % 26)}{chr(97 + i // 26 % 26)}{chr(97 + i // 676)}" for i in range(400)]
    for word in words:
        assert index_text(f"the {word}") == f"the {stem(word)}"
        assert len(memo) <= 50


def test_a_cjk_run_is_made_of_doubled_characters_from_a_bounded_memo(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``ab bc cd d`` is ``a`` + ``b b`` + ``c c`` + ``d d`` less its first two characters;
    each character's doubled form is made once (by code point: str.translate asks for it),
    and that memo is emptied when full too."""
    doubled = tokenizer._Doubled()
    monkeypatch.setattr(tokenizer, "_RUN_TEXT", tokenizer._RunText())
    monkeypatch.setattr(tokenizer, "_DOUBLED", doubled)
    monkeypatch.setattr(tokenizer, "RUN_MEMO_SIZE", 50)
    assert index_text("部署脚本用 部") == "部署 署脚 脚本 本用 用 部"
    assert doubled == {ord(c): f"{c} {c}" for c in "部署脚本用"}
    for code in range(0x4E00, 0x4E00 + 400, 2):
        run = chr(code) + chr(code + 1) + "测试"
        assert index_text(run) == f"{run[:2]} {run[1:3]} 测试 试"
        assert len(doubled) <= 50


def test_split_run_sorts_every_code_point_as_the_regex_classes_do() -> None:
    """A query is cut by split_run (no regex); the index by _index_re: every code point is
    CJK, another word character or neither to both."""
    cjk = re.compile(f"[{CJK_RANGES}]")
    word = re.compile(f"[^\\W{CJK_RANGES}]")
    kinds = {tokenizer.CJK_CHAR: cjk, tokenizer.WORD_CHAR: word}
    differ = [
        hex(c) for c in range(0x110000)
        if [k for k, pattern in kinds.items() if pattern.match(chr(c))] != (
            [tokenizer.char_kind(chr(c))] if tokenizer.char_kind(chr(c)) else []
        )
    ]  # fmt: skip
    assert differ == []


def _fresh_python(probe: str) -> subprocess.CompletedProcess[str]:
    """``probe`` run by a new interpreter: the tokenizer's lazy patterns not yet compiled."""
    command = [sys.executable, "-c", probe]
    return subprocess.run(command, check=False, capture_output=True, text=True, timeout=60)


def test_a_query_imports_no_regex_and_indexing_does() -> None:
    """Importing re and compiling the CJK classes cost a `memoryd recall` a sixth of its
    instructions: a query of any script, however long, is cut without them."""
    probe = (
        "import sys\n"
        "from memoryd.index import tokenizer as t\n"
        "t.query_terms('deploy with pnpm')\n"
        "t.query_terms('部署脚本 pnpm 配置ＬＯＣＫ。café→ok')\n"
        "t.index_tokens('部署' * 400)\n"
        "print('re' in sys.modules)\n"
        "t.index_text('部署 lock')\n"
        "print('re' in sys.modules)\n"
    )
    done = _fresh_python(probe)
    assert done.stdout.split() == ["False", "True"], done.stderr


def test_indexing_compiles_the_cjk_classes_for_short_runs_too() -> None:
    """split_run walks a run in Python, character by character: fine for a query's few
    words, a fifth of a cold index's CPU when every Chinese note goes through it. Indexing
    cuts a piece with its own compiled regexes instead (and never calls split_run): a run
    of common Han alone with one, any other piece with the CJK classes."""
    probe = (
        "from memoryd.index import tokenizer as t\n"
        "t.split_run = None\n"
        "print(t.index_text('部署脚本 uses pnpm'))\n"
        "print(len(t._HAN_RE), len(t._INDEX_RE))\n"
        "print(t.index_text('lock部署 カタ'))\n"
        "print(len(t._HAN_RE), len(t._INDEX_RE))\n"
    )
    done = _fresh_python(probe)
    expected = ["部署 署脚 脚本 本 use pnpm", "1 0", "lock 部署 署 カタ タ", "1 1"]
    assert done.stdout.splitlines() == expected, done.stderr


def test_a_han_clause_is_cut_without_the_cjk_classes(monkeypatch: pytest.MonkeyPatch) -> None:
    """A piece of common Han, alone or ending in 。 (most of the text of a Chinese note, and
    none of it in the memo), gets its bigrams without the CJK classes cutting it first;
    anything else in a piece still goes through them."""
    cut: list[str] = []

    class Counting:
        def __init__(self, pattern: re.Pattern[str]) -> None:
            self.pattern = pattern

        def findall(self, text: str) -> list[str]:
            cut.append(text)
            return self.pattern.findall(text)

    monkeypatch.setattr(tokenizer, "_RUN_TEXT", tokenizer._RunText())
    monkeypatch.setattr(tokenizer, "_INDEX_RE", [Counting(tokenizer._index_re())])
    assert index_text("部署脚本用。 配置 依赖。") == "部署 署脚 脚本 本用 用 配置 置 依赖 赖"
    assert cut == []
    assert index_text("部署。配置 是、 々部 カ。") == "部署 署 配置 置 是 々部 部 カ"
    assert cut == ["部署。配置", "是、", "々部", "カ。"]


@given(st.text(st.sampled_from([*"0123456789"]), min_size=1, max_size=30))
def test_a_number_is_indexed_as_it_is_without_the_stemmer(number: str) -> None:
    """Snowball's rules take letters: a number is its own stem, and a cold index, whose ids
    put a new six-digit number in nearly every file, no longer asks the stemmer for it."""
    assert Stemmer.Stemmer("english").stemWord(number) == number
    memo = tokenizer._RunText()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tokenizer, "_RUN_TEXT", memo)
        patch.setattr(tokenizer, "_stemmer", lambda: pytest.fail("the stemmer was asked"))
        assert index_text(f"{number} {number}") == f"{number} {number}"


_RUN_CHARS = st.sampled_from([*"aZ_9 部署ＬｏｃｋßİΩé\u0301\u3000カ한ー々。→-", "\U00020000", "\u2e80"])


@given(st.text(_RUN_CHARS) | st.text())
def test_a_text_split_without_the_regex_is_split_as_the_regex_splits_it(text: str) -> None:
    """A query is cut in Python, so recall need not import re: the parts the index's
    regex finds, CJK or not, in order."""
    folded = normalize(text)
    parts = [("", part) if part.isascii() or not is_cjk(part[0]) else (part, "")
             for part in _index_re().findall(folded)]  # fmt: skip
    assert split_run(folded) == parts


@given(st.text(st.characters(max_codepoint=0x7F)))
def test_an_ascii_text_is_cut_into_the_words_of_the_regex(text: str) -> None:
    """An ASCII query is cut by bytes.translate: the runs of \\w, stemmed."""
    assert tokenize(text) == [stem(word) for word in re.findall(r"\w+", text.lower())]


def _day(text: str) -> int:
    return int(
        datetime.datetime.fromisoformat(text).replace(tzinfo=datetime.UTC).timestamp() * 1000
    )


@pytest.mark.parametrize(
    ("query", "start", "end"),
    [("on 29 Dec 2023", "2023-12-29", "2023-12-30"), ("December 29th, 2023", "2023-12-29", "2023-12-30"),
     ("2023-12-29", "2023-12-29", "2023-12-30"), ("29.12.2023", "2023-12-29", "2023-12-30"),
     ("2023年12月29日", "2023-12-29", "2023-12-30"), ("in May 2024", "2024-05-01", "2024-06-01"),
     ("2023年12月", "2023-12-01", "2024-01-01"), ("back in 2017", "2017-01-01", "2018-01-01"),
     ("29 Feb 2024", "2024-02-29", "2024-03-01")],
)  # fmt: skip
def test_query_dates_reads_a_day_a_month_or_a_year(query: str, start: str, end: str) -> None:
    assert query_dates(query) == ((_day(start), _day(end)),)


@pytest.mark.parametrize("query", ["29 Feb 2023", "2023-13-01", "version 1.2023.4", "on May 7",
                                   "port 8080", "no digits"])  # fmt: skip
def test_query_dates_reads_no_date_that_is_not_one(query: str) -> None:
    assert query_dates(query) == ()


@given(st.dates(min_value=datetime.date(1900, 1, 1), max_value=datetime.date(2200, 12, 31)))
def test_query_dates_agrees_with_the_calendar(day: datetime.date) -> None:
    assert query_dates(day.isoformat()) == (
        (_day(day.isoformat()), _day(day.isoformat()) + 86_400_000),
    )


@given(st.text(_ALPHABET | st.sampled_from(list("我今天早上吃了面条后来和朋友争吵")), max_size=60))
def test_a_query_gives_each_term_once_or_all_but_its_characters_twice(query: str) -> None:
    """A prose query's bigrams and words weigh twice its characters (each given twice);
    any other query gives each term once. Which phrases appear never changes."""
    terms = query_terms(query)
    given_ = tokenizer.phrases(terms)
    assert set(given_) == {tokenizer.phrase(t) for t in terms}
    chars = [t for t in terms if tokenizer.is_cjk_char(t)]
    bigrams = [t for t in terms if len(t) == 2 and is_cjk(t[0])]
    prose = chars and len(bigrams) >= tokenizer.PROSE_BIGRAMS
    for term in terms:
        twice = prose and not tokenizer.is_cjk_char(term)
        assert given_.count(tokenizer.phrase(term)) == (2 if twice else 1)


def test_a_chinese_sentence_gives_its_bigrams_twice_and_its_characters_once() -> None:
    terms = query_terms("为什么爸爸妈妈总是争吵呢？我只想和他们一起出去玩。")
    expression = fts_expression(terms) or ""
    assert expression.count('"争吵"') == 2 and expression.count('"争"*') == 1
    assert fts_expression(query_terms("部署脚本")) == '"部署" OR "署脚" OR "脚本"'
