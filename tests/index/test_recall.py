from __future__ import annotations

import dataclasses
import importlib
import json
import re
from typing import Any

import pytest

from memoryd.config.sections import Config, SearchConfig
from memoryd.index import IndexDB, open_index, ranking, recall, reconcile
from memoryd.index import pick as pick_module
from memoryd.index.fetch import at_least, candidates
from memoryd.index.hits import read_hits
from memoryd.index.tokenizer import query_words
from tests.index.conftest import DAY_MS, NOW_MS, World

SENTENCE = "部署脚本用 pnpm 而不是 npm,因为 lockfile 不兼容"


def ids(hits: list) -> list[str]:  # type: ignore[type-arg]
    return [h.id for h in hits]


def search(db: IndexDB, world: World, query: str, config: Config | None = None, **kw: object):  # type: ignore[no-untyped-def]
    config = config or world.config
    reconcile(db, config, world.roots)
    return recall(db, config, query, world.roots, now_ms=NOW_MS, bump=False, **kw)  # type: ignore[arg-type]


def filler(world: World, n: int = 20) -> None:
    """Unrelated memories, so that bm25's idf means something."""
    for i in range(n):
        world.write(world.global_root, f"facts/filler-{i:02}.md", f"unrelated note number {i}")


@pytest.mark.parametrize(
    "query", ["部署", "部署脚本", "脚本", "不兼容", "兼容", "pnpm", "lockfile", "LockFile", "部"]
)
def test_design_sentence_is_found(world: World, db: IndexDB, query: str) -> None:
    world.write(world.global_root, "pitfalls/deploy.md", SENTENCE, updated=NOW_MS)
    world.write(world.global_root, "facts/other.md", "部门 npm 的配置")
    assert "pitfalls/deploy" in ids(search(db, world, query))


def test_npm_does_not_match_pnpm(world: World, db: IndexDB) -> None:
    world.write(world.global_root, "pitfalls/pnpm.md", "always pnpm here")
    assert search(db, world, "npm") == []


@pytest.mark.parametrize(
    "query", ['"', "*", "AND", "(", "NEAR", 'pnpm" OR *', "NEAR(pnpm", "(pnpm"]
)
def test_fts_syntax_characters_never_raise(world: World, db: IndexDB, query: str) -> None:
    world.write(world.global_root, "facts/a.md", "rock and roll near the pnpm store")
    hits = search(db, world, query)
    assert ids(hits) == ([] if query in ('"', "*", "(") else ["facts/a"])


def test_project_beats_global_on_equal_text(world: World, db: IndexDB) -> None:
    world.write(world.global_root, "facts/x.md", "redis cache eviction", updated=NOW_MS)
    world.write(world.project_root, "facts/x.md", "redis cache eviction", updated=NOW_MS)
    hits = search(db, world, "redis")
    assert [h.scope for h in hits] == ["project", "global"]
    assert hits[1].score == pytest.approx(hits[0].score * 0.5)


def test_scope_priors_are_configurable(world: World, db: IndexDB) -> None:
    world.write(world.global_root, "facts/x.md", "redis cache eviction", updated=NOW_MS)
    world.write(world.project_root, "facts/x.md", "redis cache eviction", updated=NOW_MS)
    search_cfg = SearchConfig(project_prior=0.2, global_prior=1.0)
    config = dataclasses.replace(world.config, search=search_cfg)
    assert [h.scope for h in search(db, world, "redis", config)] == ["global", "project"]


def test_time_decay_halves_per_half_life(world: World, db: IndexDB) -> None:
    world.write(world.global_root, "facts/old.md", "kafka lag", updated=NOW_MS - 14 * DAY_MS)
    world.write(world.global_root, "facts/new.md", "kafka lag", updated=NOW_MS)
    curve = dataclasses.replace(world.config, search=SearchConfig(decay_floor=0))
    hits = search(db, world, "kafka", curve)
    assert ids(hits) == ["facts/new", "facts/old"]
    assert hits[1].score == pytest.approx(hits[0].score / 2)


def test_half_life_zero_turns_decay_off(world: World, db: IndexDB) -> None:
    world.write(world.global_root, "facts/old.md", "kafka lag", updated=NOW_MS - 90 * DAY_MS)
    world.write(world.global_root, "facts/new.md", "kafka lag", updated=NOW_MS)
    config = dataclasses.replace(world.config, search=SearchConfig(half_life_days=0))
    hits = search(db, world, "kafka", config)
    assert hits[0].score == pytest.approx(hits[1].score)


def test_pinned_never_decays(world: World, db: IndexDB) -> None:
    old = NOW_MS - 365 * DAY_MS
    world.write(world.global_root, "rules/pinned.md", "kafka lag", updated=old, pinned=True)
    world.write(world.global_root, "rules/recent.md", "kafka lag", updated=NOW_MS - DAY_MS)
    assert ids(search(db, world, "kafka")) == ["rules/pinned", "rules/recent"]


def test_recall_boost_from_hit_counts(world: World, db: IndexDB) -> None:
    world.write(world.global_root, "facts/aaa.md", "kafka lag", updated=NOW_MS)
    world.write(world.global_root, "facts/bbb.md", "kafka lag", updated=NOW_MS)
    assert ids(search(db, world, "kafka")) == ["facts/aaa", "facts/bbb"]
    state = {"hits": {"facts/bbb": 3}}
    (world.global_root.path / ".state.json").write_text(json.dumps(state))
    hits = search(db, world, "kafka")
    assert ids(hits) == ["facts/bbb", "facts/aaa"]
    assert hits[0].score == pytest.approx(hits[1].score * 1.25)  # 1 + 0.5 * 3 / (3 + 3)


def test_boost_is_bounded(world: World, db: IndexDB) -> None:
    world.write(world.global_root, "facts/aaa.md", "kafka lag", updated=NOW_MS)
    world.write(world.global_root, "facts/bbb.md", "kafka lag", updated=NOW_MS)
    (world.global_root.path / ".state.json").write_text(json.dumps({"hits": {"facts/bbb": 10**9}}))
    hits = search(db, world, "kafka")
    assert hits[0].score / hits[1].score == pytest.approx(1.5, rel=1e-6)


def test_superseded_memories_are_never_returned(world: World, db: IndexDB) -> None:
    world.write(world.global_root, "decisions/old.md", "use kafka kafka kafka",
                superseded_by="decisions/new")  # fmt: skip
    world.write(world.global_root, "decisions/new.md", "use kafka", supersedes=["decisions/old"])
    assert ids(search(db, world, "kafka")) == ["decisions/new"]


def test_score_floor_drops_weak_partial_matches_but_keeps_the_top(
    world: World, db: IndexDB
) -> None:
    filler(world)
    world.write(world.global_root, "facts/strong.md", "kafka kafka kafka", summary="kafka lag",
                updated=NOW_MS)  # fmt: skip
    long_body = "kafka " + " ".join(f"word{i}" for i in range(400))
    world.write(world.global_root, "facts/weak.md", long_body, updated=NOW_MS)
    no_floor = dataclasses.replace(world.config, search=SearchConfig(score_floor=0))
    everything = search(db, world, "kafka lag", no_floor)
    assert ids(everything) == ["facts/strong", "facts/weak"]
    assert everything[1].relevance < 0.15 * everything[0].relevance
    assert ids(search(db, world, "kafka lag")) == ["facts/strong"]
    high = dataclasses.replace(world.config, search=SearchConfig(score_floor=5.0))
    assert ids(search(db, world, "kafka lag", high)) == ["facts/strong"]


def test_score_floor_never_drops_a_memory_holding_every_term(world: World, db: IndexDB) -> None:
    filler(world)
    world.write(world.global_root, "facts/strong.md", "kafka kafka kafka", summary="kafka lag",
                updated=NOW_MS)  # fmt: skip
    long_body = "kafka " + " ".join(f"word{i}" for i in range(400))
    world.write(world.global_root, "facts/weak.md", long_body, updated=NOW_MS - 900 * DAY_MS)
    hits = search(db, world, "kafka")
    assert ids(hits) == ["facts/strong", "facts/weak"]
    assert hits[1].relevance < 0.15 * hits[0].relevance  # the old rule dropped it


def test_limit_kind_and_scope_filters(world: World, db: IndexDB) -> None:
    for i in range(5):
        world.write(world.global_root, f"facts/f{i}.md", "grpc deadline", kind="fact")
    world.write(world.project_root, "pitfalls/p.md", "grpc deadline", kind="pitfall")
    assert len(search(db, world, "grpc", limit=2)) == 2
    assert ids(search(db, world, "grpc", kind="pitfall")) == ["pitfalls/p"]
    assert {h.scope for h in search(db, world, "grpc", scope="global")} == {"global"}


def test_default_limit_is_ten(world: World, db: IndexDB) -> None:
    for i in range(15):
        world.write(world.global_root, f"facts/f{i:02}.md", "grpc deadline", updated=NOW_MS)
    assert len(search(db, world, "grpc")) == 10


def test_hit_reasons_count_matched_terms(world: World, db: IndexDB) -> None:
    world.write(world.global_root, "pitfalls/deploy.md", SENTENCE + "\n再次部署。",
                summary="pnpm 部署", load_when=["pnpm"])  # fmt: skip
    (hit,) = search(db, world, "部署 pnpm yarn")
    assert hit.terms == {"部署": 3, "pnpm": 3}
    assert hit.summary == "pnpm 部署"
    assert hit.body.startswith(SENTENCE)


def test_snippet_is_cut_from_original_text(world: World, db: IndexDB) -> None:
    body = ("Intro line. " * 30) + "The ＬｏｃｋＦｉｌｅ of pnpm 不兼容 here." + (" tail" * 60)
    world.write(world.global_root, "pitfalls/lock.md", body)
    (hit,) = search(db, world, "lockfile 兼容")
    assert "«ＬｏｃｋＦｉｌｅ»" in hit.snippet
    assert "不«兼容»" in hit.snippet
    assert hit.snippet.startswith("…") and hit.snippet.endswith("…")
    assert len(hit.snippet) < 200


def test_word_terms_are_not_marked_inside_longer_words(world: World, db: IndexDB) -> None:
    world.write(world.global_root, "facts/n.md", "pnpm then npm")
    (hit,) = search(db, world, "npm")
    assert hit.snippet == "pnpm then «npm»"


def test_recall_bumps_hit_counts(world: World, db: IndexDB) -> None:
    world.write(world.global_root, "facts/a.md", "grpc deadline")
    world.write(world.project_root, "facts/b.md", "grpc deadline")
    reconcile(db, world.config, world.roots)
    recall(db, world.config, "grpc", world.roots)
    recall(db, world.config, "grpc", world.roots)
    assert read_hits(world.global_root.path) == {"facts/a": 2}
    assert read_hits(world.project_root.path) == {"facts/b": 2}


def test_roots_not_searched_are_never_returned(world: World, db: IndexDB) -> None:
    world.write(world.global_root, "facts/a.md", "grpc deadline")
    world.write(world.project_root, "facts/b.md", "grpc deadline")
    reconcile(db, world.config, world.roots)
    hits = recall(db, world.config, "grpc", [world.global_root], bump=False)
    assert ids(hits) == ["facts/a"]


def test_searched_roots_are_found_below_many_better_rows_elsewhere(
    world: World, db: IndexDB
) -> None:
    for i in range(200):
        world.write(world.project_root, f"facts/p{i:03}.md", "grpc grpc grpc", summary="grpc")
    world.write(world.global_root, "facts/g.md", "grpc once in a longer body of other words")
    reconcile(db, world.config, world.roots)
    hits = recall(db, world.config, "grpc", [world.global_root], bump=False)
    assert ids(hits) == ["facts/g"]


@pytest.mark.parametrize("strategy", ["and-or", "levels", "or"])
def test_both_strategies_rank_full_matches_first(world: World, db: IndexDB, strategy: str) -> None:
    filler(world)
    world.write(world.global_root, "facts/both.md", "redis timeout on failover", updated=NOW_MS)
    world.write(world.global_root, "facts/one.md", "redis cluster sizing", updated=NOW_MS)
    world.write(world.global_root, "facts/other.md", "timeout budget", updated=NOW_MS)
    no_floor = dataclasses.replace(world.config, search=SearchConfig(score_floor=0))
    hits = search(db, world, "redis timeout", no_floor, strategy=strategy)
    assert ids(hits)[0] == "facts/both"
    assert set(ids(hits)) == {"facts/both", "facts/one", "facts/other"}  # OR fills in


def test_and_pass_alone_when_it_finds_enough(world: World, db: IndexDB) -> None:
    for i in range(40):
        world.write(world.global_root, f"facts/both{i:02}.md", "redis timeout", updated=NOW_MS)
    world.write(world.global_root, "facts/one.md", "redis", updated=NOW_MS)
    no_floor = dataclasses.replace(world.config, search=SearchConfig(score_floor=0))
    and_or = search(db, world, "redis timeout", no_floor, limit=10, strategy="and-or")
    only_or = search(db, world, "redis timeout", no_floor, limit=10, strategy="or")
    assert ids(and_or) == ids(only_or)
    assert "facts/one" not in ids(and_or)


def test_unknown_strategy_is_refused(world: World, db: IndexDB) -> None:
    with pytest.raises(ValueError, match="unknown strategy"):
        search(db, world, "redis timeout", strategy="fuzzy")


def test_recall_still_answers_when_hits_cannot_be_recorded(
    world: World, db: IndexDB, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    world.write(world.global_root, "facts/a.md", "grpc deadline")
    reconcile(db, world.config, world.roots)
    hits_module = importlib.import_module("memoryd.index.hits")  # both recalls count there

    def refuse(root: object, ids: object) -> None:
        raise PermissionError(13, "Read-only file system")

    monkeypatch.setattr(hits_module, "bump_hits", refuse)
    assert ids(recall(db, world.config, "grpc", world.roots)) == ["facts/a"]
    assert "cannot record hits" in caplog.text


def test_levels_match_at_least_n_terms_with_or_relevance(world: World, db: IndexDB) -> None:
    filler(world)
    world.write(world.global_root, "facts/abc.md", "alpha beta gamma")
    world.write(world.global_root, "facts/ab.md", "alpha beta filler words here")
    world.write(world.global_root, "facts/a.md", "alpha and more filler words here")
    reconcile(db, world.config, world.roots)
    terms = ["alpha", "beta", "gamma"]
    expressions = [at_least(terms, n) for n in (3, 2, 1)]
    assert expressions[0] == '"alpha" AND "beta" AND "gamma"'
    assert expressions[1] == '("alpha" AND "beta") OR ("alpha" AND "gamma") OR ("beta" AND "gamma")'
    matched = [fts_ids(db, e) for e in expressions]
    assert matched == [
        {"facts/abc"},
        {"facts/abc", "facts/ab"},
        {"facts/abc", "facts/ab", "facts/a"},
    ]
    or_rel = {c.id: rel for rel, c, _ in candidates(db, terms, world.roots, {}, 3, strategy="or")}
    two = {
        c.id: rel for rel, c, _ in candidates(db, terms, world.roots, {}, 2, strategy="levels")
    }  # stops at level 2
    assert set(two) == {"facts/abc", "facts/ab"}
    for memory_id, rel in two.items():
        assert rel == pytest.approx(or_rel[memory_id])


def fts_ids(db: IndexDB, expression: str) -> set[str]:
    sql = (
        "SELECT m.id FROM memories_fts JOIN memories AS m ON m.rowid = memories_fts.rowid "
        "WHERE memories_fts MATCH ?"
    )
    return {r[0] for r in db.conn.execute(sql, (expression,))}


def test_candidates_are_looked_up_by_rowid_not_by_scanning_a_root(
    world: World, db: IndexDB
) -> None:
    for i in range(20):
        world.write(world.global_root, f"facts/f{i}.md", f"pnpm note {i}")
    reconcile(db, world.config)
    statements: list[str] = []
    db.conn.set_trace_callback(statements.append)
    assert recall(db, world.config, "pnpm", world.config.roots, bump=False)
    db.conn.set_trace_callback(None)
    lookups = [s for s in statements if "LEFT JOIN memories ON memories.rowid" in s]
    assert lookups  # FTS5's top k and their rows, in one statement
    for sql in lookups:  # an index on root would make this read every row of the root
        plan = " / ".join(row[-1] for row in db.conn.execute("EXPLAIN QUERY PLAN " + sql))
        assert "INTEGER PRIMARY KEY (rowid=?)" in plan, plan


def test_enough_rows_holding_every_term_skip_the_or_query(world: World, db: IndexDB) -> None:
    filler(world)
    for i in range(4):  # hold both terms: with limit 3 they fill the list on their own
        world.write(world.global_root, f"facts/both-{i}.md", f"redis eviction policy {i}")
    for i in range(6):  # hold one term, and score higher on it than the others do
        world.write(world.global_root, f"facts/one-{i}.md", f"redis redis redis {i}")
    reconcile(db, world.config, world.roots)
    expressions: list[str] = []
    db.conn.set_trace_callback(expressions.append)
    try:
        hits = recall(
            db, world.config, "redis eviction", world.roots, limit=3, now_ms=NOW_MS, bump=False
        )
    finally:
        db.conn.set_trace_callback(None)
    matches = [m for e in expressions for m in re.findall(r"MATCH '([^']*)'", e)]
    # which rows hold both (rowids, at most 3), then their bm25 top: no OR query
    assert matches == ['"redi" AND "evict"', '"redi" AND "evict"']
    assert len(hits) == 3
    assert all(h.id.startswith("facts/both-") for h in hits)
    # the same list as when the OR query runs too (a limit past the AND rows forces it)
    wider = recall(
        db, world.config, "redis eviction", world.roots, limit=10, now_ms=NOW_MS, bump=False
    )
    assert ids(wider)[:3] == ids(hits)
    assert any(h.id.startswith("facts/one-") for h in wider)


def test_rows_the_filters_refuse_among_the_best_make_the_fetch_look_further(
    world: World, db: IndexDB
) -> None:
    """FTS5's top k and their rows come in one statement; when the best k are all refused
    (another kind, superseded, a compiled file), k grows until enough pass."""
    filler(world)
    for n in range(80):  # the best by bm25: the word in the summary of a short memory
        world.write(world.global_root, f"facts/f{n:02}.md", "zeta", summary="zeta", kind="fact")
    for n in range(3):  # ...and every one of them superseded by a memory without the word
        world.write(world.global_root, f"facts/s{n}.md", "zeta", summary="zeta", kind="fact",
                    superseded_by=f"facts/new{n}")  # fmt: skip
        world.write(world.global_root, f"facts/new{n}.md", "unrelated successor")
    for n in range(3):
        world.write(world.global_root, f"pitfalls/p{n}.md", "a long body that mentions zeta once "
                    "among many other words that dilute its weight", kind="pitfall")  # fmt: skip
    hits = search(db, world, "zeta", kind="pitfall")
    assert sorted(ids(hits)) == ["pitfalls/p0", "pitfalls/p1", "pitfalls/p2"]
    assert not {"facts/s0", "facts/s1", "facts/s2"} & set(ids(search(db, world, "zeta", limit=50)))


def test_a_reconcile_between_the_candidates_and_their_rows_changes_neither(
    world: World, db: IndexDB, monkeypatch: pytest.MonkeyPatch
) -> None:
    """recall reads its candidates and then the kept rows: both in one read transaction,
    so a reconcile committed in between (another connection: the daemon's) neither
    removes a kept row from under it nor mixes two versions of the index."""
    doomed = world.write(world.global_root, "facts/kafka.md", "kafka lag on the broker")
    world.write(world.global_root, "facts/other.md", "kafka consumer groups")
    reconcile(db, world.config, world.roots)
    real_rank = ranking.rank  # the function memoryd.index.pick (recall's) imported as its rank

    def rank_after_a_reconcile(*args: Any, **kwargs: Any) -> object:
        doomed.unlink()
        with open_index(world.paths) as other:
            reconcile(other, world.config, world.roots)  # deletes the row, commits
        return real_rank(*args, **kwargs)

    monkeypatch.setattr(pick_module, "rank", rank_after_a_reconcile)
    hits = recall(db, world.config, "kafka lag", world.roots, bump=False, now_ms=NOW_MS)
    assert [h.id for h in hits] == ["facts/kafka", "facts/other"]
    assert hits[0].row is not None and hits[0].body == "kafka lag on the broker\n"
    assert not db.conn.in_transaction
    monkeypatch.setattr(pick_module, "rank", real_rank)
    after = recall(db, world.config, "kafka lag", world.roots, bump=False, now_ms=NOW_MS)
    assert [h.id for h in after] == ["facts/other"]


def test_recall_inside_a_callers_transaction_leaves_it_open(world: World, db: IndexDB) -> None:
    world.write(world.global_root, "facts/kafka.md", "kafka lag")
    reconcile(db, world.config, world.roots)
    db.conn.execute("BEGIN")
    assert [h.id for h in recall(db, world.config, "kafka", world.roots, bump=False)] == [
        "facts/kafka"
    ]
    assert db.conn.in_transaction
    db.conn.execute("COMMIT")


def _and_then_or(
    db: IndexDB, terms: list[str], world: World, fetch: int, enough: int
) -> list[tuple[float, int, bool]]:
    """The and-or candidates as two ranked statements find them (the strategy before the
    rowid probe): every memory holding all terms by bm25, then the OR query's best."""
    from memoryd.index.fetch import _merged, _top
    from memoryd.index.tokenizer import fts_expression

    full = _top(db, at_least(terms, len(terms)), world.roots, {}, fetch, full=True)
    if len(full) >= enough:
        found = full
    else:
        found = _merged(full, _top(db, fts_expression(terms), world.roots, {}, fetch, full=False))
    return [(round(f.relevance, 9), f.candidate.rowid, f.full) for f in found]


def test_the_rowid_probe_gives_the_candidates_of_two_ranked_statements(
    world: World, db: IndexDB
) -> None:
    """Seeded (random.Random(21)): 300 memories of a small vocabulary, so queries of two or
    three words meet every case: none, a few or many memories holding all the words, the
    OR query's rows running past its first k, superseded memories among them."""
    import random

    rng = random.Random(21)
    common = ["redis", "deploy", "cache", "部署", "脚本"]
    rare = [f"word{i}" for i in range(40)]
    for i in range(300):
        words = rng.choices(common, k=rng.randint(0, 4)) + rng.choices(rare, k=rng.randint(1, 3))
        meta: dict[str, Any] = {"summary": " ".join(rng.sample(words, 1))}
        if i % 37 == 5:
            meta["superseded_by"] = "facts/m-000"
        world.write(world.global_root, f"facts/m-{i:03}.md", " ".join(words), **meta)
    reconcile(db, world.config, world.roots)
    vocabulary = common + rare
    cases = {"none": 0, "some": 0, "enough": 0}
    for _ in range(300):
        terms = list(query_words(" ".join(rng.sample(vocabulary, rng.randint(2, 3)))))
        for fetch, enough in ((30, 10), (3, 3)):
            got = candidates(db, terms, world.roots, {}, fetch, enough=enough)
            mine = [(round(f.relevance, 9), f.candidate.rowid, f.full) for f in got]
            assert mine == _and_then_or(db, terms, world, fetch, enough), terms
            holding = sum(full for _, _, full in mine)
            cases["none" if not holding else "enough" if holding >= enough else "some"] += 1
    assert all(count >= 20 for count in cases.values()), cases  # every case was met


def test_a_memory_holding_every_term_past_the_or_querys_first_k_is_read_by_the_and_top(
    world: World, db: IndexDB
) -> None:
    filler(world)
    for i in range(25):  # one term, said often: these outrank the two below on bm25
        world.write(world.global_root, f"facts/often-{i:02}.md", "zebra zebra zebra zebra")
        world.write(world.global_root, f"facts/also-{i:02}.md", "quokka quokka quokka quokka")
    padding = " ".join(f"pad{i}" for i in range(200))  # a long body: a low bm25 for both
    for i in range(2):
        world.write(world.global_root, f"facts/both-{i}.md", f"zebra quokka {padding}")
    reconcile(db, world.config, world.roots)
    expressions: list[str] = []
    db.conn.set_trace_callback(expressions.append)
    try:
        got = candidates(db, ["zebra", "quokka"], world.roots, {}, 3, enough=3)
    finally:
        db.conn.set_trace_callback(None)
    matches = [m for e in expressions for m in re.findall(r"MATCH '([^']*)'", e)]
    # the probe, the OR query (its first 19 rows hold neither), then the AND query's top
    assert matches == ['"zebra" AND "quokka"', '"zebra" OR "quokka"', '"zebra" AND "quokka"']
    mine = [(round(f.relevance, 9), f.candidate.rowid, f.full) for f in got]
    assert mine == _and_then_or(db, ["zebra", "quokka"], world, 3, 3)
    assert [f.candidate.id for f in got if f.full] == ["facts/both-0", "facts/both-1"]
