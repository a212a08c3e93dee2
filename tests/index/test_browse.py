"""A page of the memories table in SQL: the same rows, in the same order, as sorting and
filtering the whole list by hand would give, for any memories, query and page."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memoryd.config.sections import Config
from memoryd.index import reconcile
from memoryd.index.browse import FLAGS, SORTS, Browser, Query
from memoryd.index.db import IndexDB
from tests.index.conftest import DAY_MS, NOW_MS, World, write_memory

KINDS = ["fact", "decision", None]
FOLDERS = ["", "facts", "facts/deep", "决定"]

memory = st.fixed_dictionaries({
    "folder": st.sampled_from(FOLDERS),
    "kind": st.sampled_from(KINDS),
    "pinned": st.booleans(),
    "superseded": st.booleans(),
    "age": st.integers(0, 3),  # ties too: among them, the order of the ids
    "hits": st.integers(0, 3),
    "findings": st.integers(0, 2),
    "summary": st.sampled_from(["Redis 会话", "50% of it", "under_score", "plain"]),
})  # fmt: skip


def build(world: World, db: IndexDB, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Write the memories, index them; the rows as the page should show them."""
    root = world.global_root.path
    shutil.rmtree(root)
    root.mkdir()
    expected = []
    for n, item in enumerate(items):
        rel = f"{item['folder']}/m{n:02}.md".lstrip("/")
        ident = rel.removesuffix(".md")  # a plugin root's id is its path
        meta: dict[str, Any] = {"id": ident, "summary": item["summary"]}
        if item["kind"]:
            meta["kind"] = item["kind"]
        if item["pinned"]:
            meta["pinned"] = True
        if item["superseded"]:
            meta["superseded_by"] = "m99"
        meta["updated"] = NOW_MS - item["age"] * DAY_MS
        write_memory(root, rel, f"body {n}", **meta)
        expected.append({**item, "id": ident, "path": rel, "stamp": meta["updated"]})
    reconcile(db, Config(roots=(world.global_root,)), [world.global_root])
    return expected


def by_hand(items: list[dict[str, Any]], q: Query) -> list[str]:
    def keep(m: dict[str, Any]) -> bool:
        text = q.text.lower()
        if text and not any(text in s.lower() for s in (m["id"], m["summary"], m["path"])):
            return False
        if q.kind is not None and (m["kind"] or "") != q.kind:
            return False
        if q.folder is not None and m["folder"] != q.folder:
            return False
        flags: dict[str | None, bool] = {
            None: True,
            "pinned": m["pinned"],
            "superseded": m["superseded"],
            "problems": m["findings"] > 0,
            "never": m["hits"] == 0,
        }
        return flags[q.flag]

    keys: dict[str, Callable[[dict[str, Any]], Any]] = {
        "id": lambda m: m["id"],
        "kind": lambda m: m["kind"] or "",
        "scope": lambda m: "global",
        "folder": lambda m: m["folder"],
        "age": lambda m: m["stamp"],  # walked backwards: the newest first
        "hits": lambda m: m["hits"],
        "problems": lambda m: m["findings"],
    }
    key = keys[q.sort]
    backwards = q.desc != SORTS[q.sort][1]
    rows = sorted(filter(keep, items), key=lambda m: (key(m), m["id"]), reverse=backwards)
    return [m["id"] for m in rows][q.offset : q.offset + q.limit]


queries = st.builds(
    Query,
    text=st.sampled_from(["", "redis", "50%", "_", "deep/", "m0", "会话", "facts/m"]),
    kind=st.sampled_from([None, "", "fact"]),
    folder=st.sampled_from([None, *FOLDERS]),
    flag=st.sampled_from([None, *FLAGS]),
    sort=st.sampled_from(list(SORTS)),
    desc=st.booleans(),
    offset=st.integers(0, 6),
    limit=st.integers(1, 8),
)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(memory, min_size=0, max_size=12), st.lists(queries, min_size=1, max_size=6))
def test_a_page_is_the_whole_list_sorted_filtered_and_cut(
    world: World, db: IndexDB, items: list[dict[str, Any]], asked: list[Query]
) -> None:
    expected = build(world, db, items)
    root = world.global_root.path
    hits = {root: {m["id"]: m["hits"] for m in expected if m["hits"]}}
    findings = {root / m["path"]: m["findings"] for m in expected if m["findings"]}
    for q in asked:
        got = Browser(db).page([root], q, hits=hits, findings=findings, facets=True)
        assert [r["id"] for r in got.rows] == by_hand(expected, q), q
        assert got.total == len(
            by_hand(expected, Query(**{**q.__dict__, "offset": 0, "limit": 999}))
        )
        assert got.facets["folders"] == sorted({m["folder"] for m in expected})
        assert got.facets["kinds"] == sorted({m["kind"] or "" for m in expected})
    browser = Browser(db)
    browser.page([root], Query(), hits={}, findings={})
    assert browser.counts([root]) == ({str(root): len(items)} if items else {})


def test_a_row_carries_what_the_list_shows(world: World, db: IndexDB) -> None:
    root = world.global_root.path
    write_memory(root, "facts/a.md", "alpha", id="facts/a", kind="fact", summary="a",
                 pinned=True, superseded_by="facts/b", created=NOW_MS - 2 * DAY_MS)  # fmt: skip
    (root / "facts/bad.md").write_text("---\nkind: [unclosed\n---\nx\n")
    for own in ("ROOT.md", "CONFLICTS.md", "facts/index.md"):  # memoryd's, not memories
        (root / own).write_text("# generated\n")
    reconcile(db, Config(roots=(world.global_root,)), [world.global_root])
    browser = Browser(db)
    got = browser.page(
        [root, world.project_root.path], Query(), hits={root: {"facts/a": 4}}, findings={}
    )
    a, bad = got.rows
    assert got.total == 2 and browser.counts([root]) == {str(root): 2}
    assert {k: a[k] for k in ("id", "path", "folder", "kind", "pinned", "superseded",
                               "superseded_by", "hits", "stamp", "problems", "own_problems")} == {
        "id": "facts/a", "path": "facts/a.md", "folder": "facts", "kind": "fact",
        "pinned": True, "superseded": True, "superseded_by": "facts/b", "hits": 4,
        "stamp": NOW_MS - 2 * DAY_MS, "problems": 0, "own_problems": [],
    }  # fmt: skip
    assert bad["id"] == "facts/bad" and bad["problems"] == len(bad["own_problems"]) >= 1
    assert bad["stamp"] == (root / "facts/bad.md").stat().st_mtime_ns // 1_000_000  # no date


def test_the_listing_is_copied_from_its_index_alone(world: World, db: IndexDB) -> None:
    """The copy walks one index, whose entries hold every column it takes (a scan of the
    rows, which hold the bodies, cost 0.6 s of CPU at 100k memories, the index 0.14 s), and
    its derived columns are the ones the list shows."""
    from memoryd.index.browse import _BUILD

    root = world.global_root.path
    write_memory(root, "a/b/c.md", "x" * 5000, id="a/b/c", summary="deep")
    write_memory(root, "top.md", "y", id="top", summary="top")
    (root / "a" / "index.md").write_text("# generated\n")
    (root / "a" / "INDEX.md").write_text("---\nid: a/INDEX\n---\nnot memoryd's own\n")
    reconcile(db, Config(roots=(world.global_root,)), [world.global_root])
    got = Browser(db).page([root], Query(), hits={}, findings={}, facets=True)
    select = _BUILD[1][_BUILD[1].index("SELECT") :]
    plan = " ".join(str(row[-1]) for row in db.conn.execute(f"EXPLAIN QUERY PLAN {select}"))
    assert plan.startswith("SCAN m USING INDEX memories_listing"), plan
    assert [(r["id"], r["folder"]) for r in got.rows] == [
        ("a/INDEX", "a"), ("a/b/c", "a/b"), ("top", "")
    ]  # fmt: skip
    assert got.facets["folders"] == ["", "a", "a/b"]


def test_a_filter_without_words_narrows_the_total_too(world: World, db: IndexDB) -> None:
    """The unfiltered total is read once per copy; a flag alone (no text, kind or folder)
    is a filter all the same."""
    root = world.global_root.path
    write_memory(root, "a.md", "x", id="a", summary="a", pinned=True)
    write_memory(root, "b.md", "y", id="b", summary="b")
    reconcile(db, Config(roots=(world.global_root,)), [world.global_root])
    browser = Browser(db)
    assert browser.page([root], Query(), hits={}, findings={}).total == 2
    for flag, ids in (("pinned", ["a"]), ("never", ["a", "b"]), ("superseded", [])):
        got = browser.page([root], Query(flag=flag), hits={}, findings={})
        assert (got.total, [r["id"] for r in got.rows]) == (len(ids), ids), flag
