from __future__ import annotations

import pytest

from memoryd.index.tokenizer import fts_expression, index_tokens, query_terms, tokenize

SENTENCE = "部署脚本用 pnpm 而不是 npm,因为 lockfile 不兼容"


def test_cjk_runs_become_bigrams_and_words_stay_whole() -> None:
    assert tokenize(SENTENCE) == [
        "部署", "署脚", "脚本", "本用", "pnpm", "而不", "不是", "npm", "因为",
        "lockfile", "不兼", "兼容",
    ]  # fmt: skip


def test_one_character_run_is_the_character() -> None:
    assert tokenize("用 a 部") == ["用", "a", "部"]


def test_index_adds_the_last_character_of_each_run() -> None:
    assert index_tokens("部署脚本") == ["部署", "署脚", "脚本", "本"]


def test_nfkc_and_case_folding() -> None:
    assert tokenize("ＬｏｃｋＦｉｌｅ Straße ＡＢＣ") == ["lockfile", "strasse", "abc"]


def test_kana_and_hangul_are_cjk_and_underscore_joins_words() -> None:
    assert tokenize("カタカナ 한국어 snake_case x2") == [
        "カタ", "タカ", "カナ", "한국", "국어", "snake_case", "x2",
    ]  # fmt: skip


def test_punctuation_separates() -> None:
    assert tokenize("a.b-c/d,部署。配置") == ["a", "b", "c", "d", "部署", "配置"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ('"', None),
        ("*", None),
        ('say "hi" AND (bye) NEAR x*', '"say" OR "hi" OR "and" OR "bye" OR "near" OR "x"'),
        ("部", '"部"*'),
        ("部署 部署", '"部署"'),
    ],
)
def test_fts_expression_quotes_every_term(query: str, expected: str | None) -> None:
    assert fts_expression(query_terms(query)) == expected
