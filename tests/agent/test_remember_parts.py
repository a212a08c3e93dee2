from __future__ import annotations

from pathlib import Path

import pytest

from memoryd.agent.forget import retarget
from memoryd.agent.gate import coverage
from memoryd.agent.remember import (
    Request,
    agent_kind,
    build_memory,
    category_for,
    slugify,
    unique_id,
)
from memoryd.memory import new_memory, parse, render


@pytest.mark.parametrize(
    ("kind", "folder"),
    [("rule", "rules"), ("rule-proposal", "proposals"), ("preference", "preferences"),
     ("decision", "decisions"), ("pitfall", "pitfalls"), ("fact", "facts"), ("runbook", "runbook")],
)  # fmt: skip
def test_category_follows_the_kind(kind: str, folder: str) -> None:
    assert category_for(kind) == folder


def test_only_an_agents_rule_is_downgraded() -> None:
    assert agent_kind("rule", agent=True) == ("rule-proposal", True)
    assert agent_kind("rule", agent=False) == ("rule", False)
    assert agent_kind("pitfall", agent=True) == ("pitfall", False)


def test_slugs_keep_every_scripts_words_short_and_stable() -> None:
    assert (
        slugify("Use pnpm, not npm: the lockfile differs!")
        == "use-pnpm-not-npm-the-lockfile-differs"
    )
    assert slugify("Café déjà vu, Việt") == "cafe-deja-vu-viet"
    assert slugify("部署脚本用 pnpm 而不是 npm") == "部署脚本用-pnpm-而不是-npm"
    assert slugify("部署脚本只能在跳板机上运行") == "部署脚本只能在跳板机上运行"
    assert slugify("\u304c") == slugify("\u304b\u3099") == "\u304c"  # が, composed or not
    assert len(slugify("部" * 100)) == 60
    nothing = slugify("!!! ??? 🎉")
    assert nothing.startswith("m-") and len(nothing) == 12 and nothing == slugify("!!! ??? 🎉")
    long = slugify(" ".join(["word"] * 40))
    assert len(long) <= 60 and not long.endswith("-")


def test_load_when_splits_at_commas() -> None:
    from memoryd.agent.remember import load_when_words

    assert load_when_words(["部署,pnpm", " deploy ", "发布，上线、回滚", ",,"]) == [
        "部署", "pnpm", "deploy", "发布", "上线", "回滚",
    ]  # fmt: skip


def test_unique_ids_count_up(tmp_path: Path) -> None:
    (tmp_path / "facts").mkdir()
    assert unique_id(tmp_path, "facts", "x") == "facts/x"
    (tmp_path / "facts" / "x.md").write_text("")
    (tmp_path / "facts" / "x-2.md").write_text("")
    assert unique_id(tmp_path, "facts", "x") == "facts/x-3"


def test_frontmatter_carries_every_given_field_in_order() -> None:
    request = Request(
        kind="pitfall", summary=" FTS5 splits 中文 badly ", body="Root cause.\n",
        load_when=("SQLite", " 分词 ", ""), highlight="0 hits", pinned=True,
        supersedes="pitfalls/old",
    )  # fmt: skip
    memory = build_memory(request, "pitfalls/fts5", "pitfall", 1791512014824)
    assert render(memory).decode() == (
        "---\nid: pitfalls/fts5\nkind: pitfall\nsummary: FTS5 splits 中文 badly\n"
        "highlight: 0 hits\ncreated: 1791512014824\nupdated: 1791512014824\n"
        "load_when:\n- SQLite\n- 分词\npinned: true\nsupersedes: pitfalls/old\n---\nRoot cause.\n"
    )
    plain = build_memory(Request(kind="fact", summary="s"), "facts/s", "fact", 1791512014824)
    assert set(plain.meta) == {"id", "kind", "summary", "created", "updated"}


def test_coverage_is_the_share_of_new_terms() -> None:
    assert coverage({"a", "b", "c", "d", "e"}, {"a", "b", "c", "d", "x"}) == 0.8
    assert coverage(set(), {"a"}) == 0.0


def test_links_are_cleared_or_moved() -> None:
    old = parse(render(new_memory({"id": "a", "superseded_by": "b"}, "x")))
    cleared = retarget(old, "b", None)
    assert cleared is not None and "superseded_by" not in cleared.meta
    moved = retarget(old, "b", "rules/b")
    assert moved is not None and moved.meta["superseded_by"] == "rules/b"
    newer = new_memory({"supersedes": ["a", "c"]}, "")
    assert retarget(newer, "a", None).meta["supersedes"] == ["c"]  # type: ignore[union-attr]
    assert retarget(newer, "a", "d").meta["supersedes"] == ["d", "c"]  # type: ignore[union-attr]
    assert retarget(new_memory({"supersedes": "a"}, ""), "a", None).meta == {}  # type: ignore[union-attr]
    assert retarget(new_memory({"supersedes": "z"}, ""), "a", None) is None
