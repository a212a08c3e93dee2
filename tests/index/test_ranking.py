"""Ranking for long-term memory: relevance decides what is returned, age only reorders.

A memory holding every query term is never dropped, nor ranked below one holding a
strict subset of them, whatever their ages, pins and hit counts; the time decay is
bounded; stop words do not match; English word forms find each other.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, seed, settings
from hypothesis import strategies as st

from memoryd.config.sections import Config, RootConfig, SearchConfig
from memoryd.index import IndexDB, open_index, recall, reconcile
from memoryd.index.tokenizer import query_terms, tokenize
from memoryd.paths import resolve_paths
from tests.index.conftest import DAY_MS, NOW_MS, World, write_memory
from tests.index.test_recall import filler, ids, search

YEAR_MS = 365 * DAY_MS


def hits_file(root: RootConfig, counts: dict[str, int]) -> None:
    (root.path / ".state.json").write_text(json.dumps({"hits": counts}))


def test_an_old_exact_match_ranks_above_a_new_partial_one(world: World, db: IndexDB) -> None:
    filler(world)
    world.write(world.global_root, "pitfalls/old.md", "sqlite lockfile timeout on nfs",
                updated=NOW_MS - 3 * YEAR_MS)  # fmt: skip
    world.write(world.project_root, "facts/new.md", "sqlite sqlite sqlite", summary="sqlite",
                updated=NOW_MS, pinned=True)  # fmt: skip
    hits_file(world.project_root, {"facts/new": 1000})
    hits = search(db, world, "sqlite lockfile timeout")
    assert ids(hits) == ["pitfalls/old", "facts/new"]
    assert hits[0].score < hits[1].score  # the partial one scores higher, and still comes second


def test_a_pinned_weak_match_ranks_below_an_old_exact_one(world: World, db: IndexDB) -> None:
    filler(world)
    world.write(world.global_root, "facts/old.md", "grpc deadline propagation",
                updated=NOW_MS - 2 * YEAR_MS)  # fmt: skip
    world.write(world.global_root, "rules/pinned.md", "grpc everywhere", summary="grpc",
                pinned=True, updated=NOW_MS - YEAR_MS)  # fmt: skip
    hits_file(world.global_root, {"rules/pinned": 50})
    assert ids(search(db, world, "grpc deadline")) == ["facts/old", "rules/pinned"]


def test_decay_never_falls_below_the_floor(world: World, db: IndexDB) -> None:
    world.write(world.global_root, "facts/old.md", "kafka lag", updated=NOW_MS - 3 * YEAR_MS)
    world.write(world.global_root, "facts/new.md", "kafka lag", updated=NOW_MS)
    hits = search(db, world, "kafka")
    assert ids(hits) == ["facts/new", "facts/old"]
    assert hits[1].score == pytest.approx(hits[0].score * 0.65)  # the default floor
    floor = dataclasses.replace(world.config, search=SearchConfig(decay_floor=0.2))
    hits = search(db, world, "kafka", floor)
    assert hits[1].score == pytest.approx(hits[0].score * 0.2)
    curve = dataclasses.replace(world.config, search=SearchConfig(decay_floor=0))
    hits = search(db, world, "kafka", curve)  # the bare curve: 0.5 ** (1095 / 14), still there
    assert ids(hits) == ["facts/new", "facts/old"]
    assert hits[1].score == pytest.approx(hits[0].score * 0.5 ** (3 * 365 / 14))


def test_above_the_floor_the_half_life_curve_holds(world: World, db: IndexDB) -> None:
    world.write(world.global_root, "facts/old.md", "kafka lag", updated=NOW_MS - 7 * DAY_MS)
    world.write(world.global_root, "facts/new.md", "kafka lag", updated=NOW_MS)
    hits = search(db, world, "kafka")
    assert hits[1].score == pytest.approx(hits[0].score * 0.5**0.5)


def test_a_correction_written_yesterday_beats_the_note_it_corrects(
    world: World, db: IndexDB
) -> None:
    filler(world)
    world.write(world.global_root, "decisions/old.md", "deploy with helm charts from ci",
                summary="deploy with helm", updated=NOW_MS - 2 * YEAR_MS)  # fmt: skip
    world.write(world.global_root, "decisions/new.md", "deploy with helm charts from the "
                "release branch, not ci", summary="deploy with helm (corrected)",
                updated=NOW_MS - DAY_MS)  # fmt: skip
    assert ids(search(db, world, "deploy helm charts")) == ["decisions/new", "decisions/old"]


def test_stop_words_do_not_count_as_matches(world: World, db: IndexDB) -> None:
    filler(world)
    world.write(world.global_root, "facts/freeze.md", "merge freeze starts on friday")
    world.write(world.global_root, "facts/noise.md", "the cache is warm")
    world.write(world.global_root, "facts/more.md", "what is the plan when it rains")
    assert ids(search(db, world, "when is the merge freeze")) == ["facts/freeze"]
    assert query_terms("when is the merge freeze") == ["merg", "freez"]


def test_a_query_of_stop_words_only_searches_them(world: World, db: IndexDB) -> None:
    world.write(world.global_root, "facts/the.md", "the the the")
    world.write(world.global_root, "facts/other.md", "kafka lag")
    assert ids(search(db, world, "the")) == ["facts/the"]


@pytest.mark.parametrize(
    ("query", "body"),
    [
        ("commit", "two commits were committed"),
        ("committed", "one commit"),
        ("deploy", "the deployment failed"),
        ("deployments", "we deploy on fridays"),
        ("Running", "runs"),
        # irregular forms (issue 40): Snowball's suffix rules leave them apart
        ("went", "we go there every summer"),
        ("go", "she went to Lisbon"),
        ("bought", "buy the tickets early"),
        ("thinking", "what she thought"),
        ("children", "the child sleeps"),
        ("written", "write it down"),
    ],
)
def test_english_word_forms_find_each_other(
    world: World, db: IndexDB, query: str, body: str
) -> None:
    world.write(world.global_root, "facts/x.md", body)
    world.write(world.global_root, "facts/y.md", "unrelated text")
    assert ids(search(db, world, query)) == ["facts/x"]


def test_hit_reasons_and_snippets_show_the_words_as_written(world: World, db: IndexDB) -> None:
    world.write(world.global_root, "facts/x.md", "The Deployment committed two LockFiles.")
    (hit,) = search(db, world, "deploy lockfile commits")
    assert hit.terms == {"deploy": 1, "lockfile": 1, "commits": 1}
    assert hit.snippet == "The «Deployment» «committed» two «LockFiles»."


def test_a_stem_does_not_match_inside_a_longer_word(world: World, db: IndexDB) -> None:
    world.write(world.global_root, "facts/x.md", "pnpm then npm")
    (hit,) = search(db, world, "npm")
    assert hit.snippet == "pnpm then «npm»"


# -- the property ---------------------------------------------------------------------

WORDS = ["deploy", "deployed", "kafka", "lag", "redis", "timeout", "部署", "脚本", "the", "cache"]
MEMORY = st.fixed_dictionaries(
    {
        "words": st.lists(st.sampled_from(WORDS), min_size=1, max_size=8),
        "age_days": st.integers(0, 3 * 365),
        "pinned": st.booleans(),
        "hits": st.integers(0, 500),
        "project": st.booleans(),
        "summary": st.booleans(),  # the first words go to the summary (weighted 4x)
    }
)


def holds(memory: dict[str, object], terms: list[str]) -> bool:
    return set(terms) <= set(tokenize(" ".join(memory["words"])))  # type: ignore[arg-type]


@seed(15_2026_12_01)
@settings(max_examples=150, deadline=None)
@given(
    memories=st.lists(MEMORY, min_size=1, max_size=14),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
    limit=st.integers(1, 6),
)
def test_every_memory_holding_all_terms_is_returned_and_ranked_first(
    memories: list[dict[str, object]], query: list[str], limit: int
) -> None:
    """Seed and settings recorded above: 150 random corpora of up to 14 memories with ages
    over three years, pins, hit counts, both scopes, summaries."""
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch)
        roots = [
            RootConfig(path=base / "g", scope="global"),
            RootConfig(path=base / "p", scope="project"),
        ]
        config = Config(roots=tuple(roots))
        counts: dict[Path, dict[str, int]] = {r.path: {} for r in roots}
        for number, memory in enumerate(memories):
            root = roots[1] if memory["project"] else roots[0]
            words: list[str] = memory["words"]  # type: ignore[assignment]
            meta: dict[str, object] = {"updated": NOW_MS - memory["age_days"] * DAY_MS}  # type: ignore[operator]
            if memory["pinned"]:
                meta["pinned"] = True
            if memory["summary"]:
                meta["summary"] = " ".join(words[:2])
            write_memory(root.path, f"facts/m{number:02}.md", " ".join(words), **meta)
            counts[root.path][f"facts/m{number:02}"] = memory["hits"]  # type: ignore[assignment]
        for root in roots:
            root.path.mkdir(exist_ok=True)
            (root.path / ".state.json").write_text(json.dumps({"hits": counts[root.path]}))
        paths = resolve_paths({**os.environ, "MEMORYD_HOME": str(base / "home")})
        with open_index(paths) as db:
            reconcile(db, config)
            hits = recall(db, config, " ".join(query), roots, limit=limit, now_ms=NOW_MS,
                          bump=False)  # fmt: skip
    terms = query_terms(" ".join(query))
    full = {f"facts/m{n:02}" for n, m in enumerate(memories) if holds(m, terms)}
    got = ids(hits)
    if len(full) < limit:
        assert full <= set(got), (terms, got)
    leading = got[: min(len(full), limit)]
    assert set(leading) <= full, (terms, got)  # no partial match above a full one
    assert all(h in full for h in got[: len(leading)])


@pytest.mark.parametrize("written", [datetime.date(2024, 3, 5), "2024-03-05T10:00:00Z"])
def test_an_iso_date_gives_the_memory_its_age(world: World, db: IndexDB, written: object) -> None:
    world.write(world.global_root, "facts/iso.md", "kafka lag", updated=written)
    world.write(world.global_root, "facts/new.md", "kafka lag", updated=NOW_MS)
    hits = search(db, world, "kafka")
    assert ids(hits) == ["facts/new", "facts/iso"]  # not taken for brand new (the file's mtime)
    assert hits[1].score == pytest.approx(hits[0].score * 0.65)


def test_hits_never_lift_an_old_memory_above_an_equally_relevant_fresh_one(
    world: World, db: IndexDB
) -> None:
    world.write(world.global_root, "facts/old.md", "kafka lag", updated=NOW_MS - 3 * YEAR_MS)
    world.write(world.global_root, "facts/new.md", "kafka lag", updated=NOW_MS)
    hits_file(world.global_root, {"facts/old": 10**9})
    hits = search(db, world, "kafka")
    assert ids(hits) == ["facts/new", "facts/old"]  # 0.65 × 1.5 < 1: the boost is no rejuvenation
    assert hits[1].score == pytest.approx(hits[0].score * 0.65 * 1.5)


# Issue 40: ranking for questions people ask about their own conversations
# (bench/conversations.py measures each of these on public data).


def test_question_filler_is_not_evidence(world: World, db: IndexDB) -> None:
    """Auxiliaries, pronouns and contraction leftovers matched every short chat line:
    "Wow! What did you get?" outranked the line holding the answer."""
    filler(world)
    world.write(world.global_root, "facts/chat.md", "Wow! What did you get?",
                summary="Wow! What did you get?")  # fmt: skip
    world.write(world.global_root, "facts/answer.md",
                "Kate: for my birthday my sister gave me a bike, we rode it to the lake.")  # fmt: skip
    assert ids(search(db, world, "What did Kate get for her birthday?"))[0] == "facts/answer"


def test_contraction_leftovers_and_pronouns_are_stop_words() -> None:
    assert query_terms("What did she say about Kate's dog? I didn't hear him") == [
        "say", "kate", "dog", "hear",
    ]  # fmt: skip
    assert query_terms("did you") == ["did", "you"]  # nothing else: searched as they are


def test_chinese_question_words_and_particles_leave_their_bigrams_out(
    world: World, db: IndexDB
) -> None:
    assert query_terms("谁写了部署脚本") == ["部署", "署脚", "脚本"]
    assert query_terms("什么") == ["什么"]  # nothing else: searched as it is
    world.write(world.global_root, "facts/who.md", "谁写了测试")
    world.write(world.global_root, "facts/deploy.md", "部署在周五")
    assert ids(search(db, world, "谁写了部署")) == ["facts/deploy"]


def test_a_summary_repeating_the_body_does_not_outweigh_two_terms(
    world: World, db: IndexDB
) -> None:
    """Most summaries repeat their body's first words: weighed 4 to the body's 1, one
    term said twice that way outranked a memory holding two of the question's terms."""
    filler(world)
    world.write(world.global_root, "facts/repeat.md", "kafka cluster", summary="kafka cluster")
    world.write(world.global_root, "facts/two.md",
                "topic retention is seven days on the events stream")  # fmt: skip
    assert ids(search(db, world, "kafka topic retention"))[0] == "facts/two"


def test_a_summary_that_is_the_whole_body_is_not_counted_twice(
    world: World, db: IndexDB
) -> None:
    """A one-sentence memory whose summary is its whole text counted every word twice, a
    question's filler too: it scores as the same memory without a summary, while a summary
    that is only the body's first sentence still counts."""
    filler(world)
    body = "the staging deploy waits for the nightly kafka backup"
    world.write(world.global_root, "facts/twice.md", body, summary=body, updated=NOW_MS)
    world.write(world.global_root, "facts/once.md", body, updated=NOW_MS)
    world.write(world.global_root, "facts/lead.md", f"{body}. It takes an hour.",
                summary=body, updated=NOW_MS)  # fmt: skip
    world.write(world.global_root, "facts/plain.md", f"{body}. It takes an hour.",
                updated=NOW_MS)  # fmt: skip
    hits = {h.id: h.score for h in search(db, world, "kafka backup")}
    assert hits["facts/twice"] == pytest.approx(hits["facts/once"])
    assert hits["facts/lead"] > hits["facts/plain"]


def test_a_chinese_sentence_searches_its_characters_too(world: World, db: IndexDB) -> None:
    """A sentence's bigrams mostly straddle two words (我今 天早); a memory telling the same
    thing in other words (吵架 for 争吵) shared none of them and was never found."""
    question = "为什么爸爸妈妈总是争吵呢？我只想和他们一起出去玩。"
    terms = query_terms(question)
    assert "争吵" in terms and {"吵", "争", "玩"} <= set(terms)
    assert not {"我", "们", "什", "么"} & set(terms)  # too common alone: no character terms
    assert query_terms("部署脚本") == ["部署", "署脚", "脚本"]  # a few keywords: bigrams only
    for i in range(8):
        world.write(world.global_root, f"facts/other-{i}.md", f"周末去公园跑步第{i}次")
    world.write(world.global_root, "facts/quarrel.md", "父母昨晚在厨房吵架")
    assert ids(search(db, world, question))[0] == "facts/quarrel"


def test_a_chinese_sentence_weighs_its_words_above_its_characters(
    world: World, db: IndexDB
) -> None:
    """A sentence's characters are a fallback: at a bigram's weight, a memory matching
    several of them scattered in other words (争取 总结 玩具) beat one holding two of the
    sentence's words (爸爸, 出去)."""
    question = "为什么爸爸妈妈总是争吵呢？我只想和他们一起出去玩。"
    for i in range(8):
        world.write(world.global_root, f"facts/other-{i}.md", f"周末去公园跑步第{i}次")
    world.write(world.global_root, "facts/words.md", "爸爸说出门")
    world.write(world.global_root, "facts/chars.md", "争取总结玩具妈")
    assert ids(search(db, world, question))[0] == "facts/words"


def test_the_floor_keeps_a_tail_that_holds_as_many_terms_as_the_top(
    world: World, db: IndexDB
) -> None:
    """Memories that each hold one of two words are equals whatever their bm25: the 15%
    relative floor cut the tail of such lists (here: a word in most memories, whose idf
    FTS5 takes as nearly 0), and with it the answer in tenth place."""
    filler(world)
    world.write(world.global_root, "facts/kafka.md", "kafka", summary="kafka")
    for i in range(25):
        world.write(world.global_root, f"facts/lag-{i:02}.md", f"consumer group {i} lag")
    hits = search(db, world, "kafka lag")
    assert ids(hits)[0] == "facts/kafka"
    assert len(hits) == 10  # the limit, not the floor


def test_the_floor_still_cuts_a_weak_match_of_fewer_terms(world: World, db: IndexDB) -> None:
    filler(world)
    world.write(world.global_root, "facts/kafka.md", "kafka consumer", summary="kafka consumer")
    world.write(world.global_root, "facts/lag.md",
                " ".join(["the group was behind by an hour"] * 60) + " lag")  # fmt: skip
    assert ids(search(db, world, "kafka consumer lag")) == ["facts/kafka"]


def _ms(day: str) -> int:
    return int(datetime.datetime.fromisoformat(day).replace(tzinfo=datetime.UTC).timestamp() * 1000)


@pytest.mark.parametrize(
    "query",
    ["what did we ship on 7 May 2023", "what shipped on May 7, 2023", "shipped 2023-05-07",
     "release shipped 07.05.2023", "2023年5月7日 发布 shipped", "shipped in May 2023"],
)  # fmt: skip
def test_a_date_in_the_query_prefers_memories_of_that_date(
    world: World, db: IndexDB, query: str
) -> None:
    filler(world)
    world.write(world.global_root, "facts/may.md", "we shipped the release",
                created=_ms("2023-05-07"), updated=_ms("2023-05-07"))  # fmt: skip
    world.write(world.global_root, "facts/later.md", "we shipped the release",
                created=_ms("2023-09-01"), updated=_ms("2023-09-01"))  # fmt: skip
    hits = search(db, world, query)
    assert ids(hits) == ["facts/may", "facts/later"]
    assert hits[0].parts["date"] == 1.5
    assert "date" not in hits[1].parts


def test_a_date_never_lifts_a_partial_match_above_a_full_one(world: World, db: IndexDB) -> None:
    filler(world)
    world.write(world.global_root, "facts/dated.md", "the release",
                created=_ms("2023-05-07"), updated=_ms("2023-05-07"))  # fmt: skip
    world.write(world.global_root, "facts/full.md", "the release shipped late",
                created=_ms("2020-01-01"), updated=_ms("2020-01-01"))  # fmt: skip
    assert ids(search(db, world, "release shipped 7 May 2023")) == ["facts/full", "facts/dated"]
