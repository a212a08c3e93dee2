"""The shortcuts recall takes for speed give what the plain code gives.

Each test holds one shortcut of the query path to the slower code it replaced: the rows
and hits built by setting their ``__dict__`` at once (every dataclass field, the same
values), the ranking loop with ``score_parts`` inlined (the same factors, the same
product), the snippet's white space collapsed by ``str.split`` (the regex's ``\\s``),
and the body folded through ``unicodedata.is_normalized`` (each character as it folds
alone), and the fetch's first k (FTS5's top k, a prefix of any larger top k).
"""

from __future__ import annotations

import dataclasses
import math
import re
import sys
from collections import namedtuple
from pathlib import Path, PurePath
from typing import Any

import pytest
from hypothesis import given, seed, settings
from hypothesis import strategies as st

from memoryd.index import IndexDB, Row, fetch, recall, reconcile
from memoryd.index.db import ROW_COLUMNS, candidate_row, file_path
from memoryd.index.fetch import Candidate, Found, candidates
from memoryd.index.ranking import cut, rank, ranked, score_parts
from memoryd.index.search import Hit
from memoryd.index.snippet import (
    WIDTH,
    _best_window,
    _fold,
    _fold_exact,
    _merge,
    _render,
    explain,
)
from memoryd.index.tokenizer import CJK_RANGES, is_cjk, normalize
from tests.index.conftest import DAY_MS, NOW_MS, World


def test_rows_and_hits_hold_every_field_as_their_classes_build_them(
    world: World, db: IndexDB
) -> None:
    world.write(world.global_root, "facts/a.md", "kafka lag 部署", summary="kafka",
                load_when=["ops", "on call"], supersedes=["facts/old"], pinned=True)  # fmt: skip
    reconcile(db, world.config, world.roots)
    [row] = db.rows()
    assert set(vars(row)) == {f.name for f in dataclasses.fields(Row)}
    assert row == Row(**{f.name: getattr(row, f.name) for f in dataclasses.fields(Row)})
    assert row.load_when == ("ops", "on call") and row.supersedes == ("facts/old",)
    assert len(ROW_COLUMNS.split(", ")) == len(dataclasses.fields(Row))
    [hit] = recall(db, world.config, "kafka", world.roots, bump=False)
    assert set(vars(hit)) == {f.name for f in dataclasses.fields(Hit)}
    assert hit == Hit(**{f.name: getattr(hit, f.name) for f in dataclasses.fields(Hit)})
    assert hit.row == row and hit.path == row.path and hit.body == row.body


_Settings = namedtuple(
    "_Settings",
    "score_floor half_life_days decay_floor project_prior global_prior recall_boost_max "
    "team_prior",
    defaults=(0.75,),
)
CANDIDATE = st.tuples(
    st.one_of(st.floats(0.01, 40), st.sampled_from([0.5, 2.0, 7.25])),  # bm25; ties too
    st.sampled_from(["global", "team", "project"]),
    st.sampled_from(["plugin", "plugin", "layered", "claude"]),
    st.booleans(),  # pinned
    st.one_of(st.none(), st.integers(NOW_MS - 4000 * DAY_MS, NOW_MS + DAY_MS)),  # created
    st.one_of(st.none(), st.integers(NOW_MS - 4000 * DAY_MS, NOW_MS + DAY_MS)),  # updated
    st.integers(0, 2**62),  # mtime_ns
    st.integers(-3, 10**6),  # hits
    st.booleans(),  # holds every term
)


@seed(21_2026_12_01)
@settings(max_examples=200, deadline=None)
@given(
    st.lists(CANDIDATE, max_size=40),
    st.sampled_from([0.0, 0.5, 14.0, 365.0]),
    st.sampled_from([0.0, 0.65, 1.0, 1.5]),
    st.integers(1, 12),
    st.sampled_from([(1.0, 0.5, 0.5), (1, 0.3, 0), (2.5, 1, 1.5)]),  # ints as YAML gives them
)
def test_ranking_multiplies_the_parts_score_parts_gives(
    rows: list[tuple],  # type: ignore[type-arg]
    half_life: float,
    decay_floor: float,
    limit: int,
    priors: tuple[float, float, float],
) -> None:
    """Seed recorded above: 200 candidate lists of every layout, pins, ages, hit counts,
    with equal relevances among them (rank's one sort must keep ties in their order, as
    the stable sort of ranked() does)."""
    conf = _Settings(0.15, half_life, decay_floor, *priors)
    found, counts = [], {}
    for n, (rel, scope, layout, pinned, created, updated, mtime, hits, full) in enumerate(rows):
        root = f"/r{n % 2}"
        counts[(root, f"m{n}")] = hits
        found.append(Found(rel, Candidate(n, root, scope, layout, f"m{n}", pinned, created,
                                          updated, mtime), full))  # fmt: skip
    lookups = {root: (lambda memory_id, root=root: counts[(root, memory_id)]) for root in ("/r0", "/r1")}
    got = rank(conf, found, lookups, NOW_MS, limit)
    parts = {f.candidate.rowid: score_parts(conf, f.relevance, f.candidate,
                                            counts[(f.candidate.root, f.candidate.id)], NOW_MS)
             for f in found}  # fmt: skip
    scored = [(math.prod(parts[f.candidate.rowid].values()), f) for f in found]
    expected = [(t, f, parts[f.candidate.rowid]) for t, f in cut(ranked(scored), 0.15, limit)]
    assert got == expected
    assert [repr(t) for t, _f, _p in got] == [repr(t) for t, _f, _p in expected]


def test_snippet_white_space_is_what_the_regex_collapsed() -> None:
    """Every code point: str.split's white space is the regex's \\s (and str.strip's)."""
    space = re.compile(r"\s+")
    for code in range(sys.maxunicode + 1):
        text = f" a{chr(code)}{chr(code)}b "
        assert " ".join(text.split()) == space.sub(" ", text).strip(), hex(code)


@given(st.text(max_size=300))
def test_rendering_collapses_white_space_as_the_regex_did(text: str) -> None:
    rendered = _render(text, [])
    assert rendered == re.sub(r"\s+", " ", rendered).strip()


def test_every_character_folds_as_it_does_alone_through_the_nfkc_check() -> None:
    """_fold_exact's NFKC shortcut, on every code point: the folded character is what
    normalizing the character alone gives, and "exact" only when that is one character
    and what normalize gives."""
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        if 0xD800 <= code <= 0xDFFF:
            continue  # surrogates: no text holds them alone
        text = f"部{char}x"
        folded, origin, exact = _fold_exact(text)
        alone = char.lower() if char.isascii() else normalize(char)
        assert folded == f"部{alone}x", hex(code)
        assert list(origin) == [0] + [1] * len(alone) + [2], hex(code)
        assert exact == (len(alone) == 1 and folded == normalize(text)), hex(code)
        assert _fold(text) == (folded, origin)


def test_an_already_normalized_text_folds_by_its_case_folding() -> None:
    text = "Deploy 部署脚本 ΣΑΣ İstanbul ß straße"  # NFKC already; ß and İ fold to two
    folded, origin, exact = _fold_exact(text)
    assert folded == "".join(c.lower() if c.isascii() else normalize(c) for c in text)
    assert not exact and len(origin) == len(folded)
    folded, origin, exact = _fold_exact("Deploy 部署脚本 ΣΑΣ")
    assert (folded, exact, origin) == ("deploy 部署脚本 σασ", True, range(15))


def test_the_fetch_returns_the_same_rows_whatever_its_first_k(
    world: World, db: IndexDB, monkeypatch: pytest.MonkeyPatch
) -> None:
    """FTS5's top k is a prefix of its top k' > k, ties (equal bm25) in rowid order: so
    the margin of rows read beyond ``fetch`` (fetch.MARGIN) changes how many rows are
    looked up, never which come back or their order."""
    for n in range(70):  # equal texts: equal bm25, a tie the sort must keep in rowid order
        meta = {"superseded_by": "facts/new"} if n % 7 == 3 else {}
        world.write(world.global_root, f"facts/t{n:02}.md", "zeta omega", **meta)
    world.write(world.global_root, "facts/new.md", "successor")
    for n in range(20):
        world.write(world.global_root, f"facts/w{n:02}.md", "zeta " + "filler " * n)
    reconcile(db, world.config, world.roots)
    expected = _spec_top(db, '"zeta"', 30)
    got = {}
    for margin in (0, 1, 5, 16, 60, 500):
        monkeypatch.setattr(fetch, "MARGIN", margin)
        got[margin] = [(f.relevance, f.candidate.id) for f in
                       candidates(db, ["zeta"], world.roots, {}, 30)]  # fmt: skip
        assert got[margin] == expected, margin


def _spec_top(db: IndexDB, expression: str, fetch: int) -> list[tuple[float, str]]:
    """Every match that recall may return, by bm25 then rowid: the first ``fetch``."""
    sql = (
        "SELECT -bm25(memories_fts, 3.0, 4.0, 4.0, 1.0), m.id, m.rowid FROM memories_fts "
        "JOIN memories AS m ON m.rowid = memories_fts.rowid WHERE memories_fts MATCH ? "
        "AND m.superseded_by IS NULL AND m.path NOT GLOB '*ROOT.md' "
        "AND m.path NOT GLOB '*index.md'"
    )
    rows = sorted(db.conn.execute(sql, (expression,)), key=lambda r: (-r[0], r[2]))
    return [(rel, memory_id) for rel, memory_id, _rowid in rows[:fetch]]


def test_a_cjk_character_is_one_of_the_cjk_ranges() -> None:
    """is_cjk on every code point against the regex class (is_cjk bisects the ranges. edges)."""
    cjk = re.compile(f"[{CJK_RANGES}]")
    differ = [hex(c) for c in range(sys.maxunicode + 1) if is_cjk(chr(c)) != bool(cjk.match(chr(c)))]
    assert differ == []


_PART = st.sampled_from(["", ".", "..", "a", "部署", "x.md", "b c", " ", "\udcff"])


@given(st.lists(_PART, max_size=6), st.booleans())
def test_a_file_path_is_what_path_makes_of_it(parts: list[str], absolute: bool) -> None:
    """file_path (a remembered folder joined with the name) against Path, on every
    shape: relative, absolute, "//", empty parts, "." and ".." as the name."""
    text = ("/" if absolute else "") + "/".join(parts)
    made = file_path(text)
    assert made == Path(text) and str(made) == str(Path(text)) and type(made) is type(Path(text))


@pytest.mark.skipif(not hasattr(PurePath, "_parse_args"), reason="Python 3.11's pathlib parser")
def test_a_file_in_a_known_folder_is_made_without_parsing_its_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """file_path adds the name to the remembered folder's Path as one more part: pathlib's
    parser (``_parse_args``, which ``Path(text)`` and ``folder / name`` both run) never runs."""
    expected = Path("/srv/memories/部署/b.md")
    file_path("/srv/memories/部署/a.md")  # the folder is remembered
    parsed: list[object] = []
    parse = PurePath._parse_args.__func__  # type: ignore[attr-defined]

    def counted(cls: type, args: object) -> object:
        parsed.append(args)
        return parse(cls, args)

    monkeypatch.setattr(PurePath, "_parse_args", classmethod(counted))
    made = file_path("/srv/memories/部署/b.md")
    assert parsed == []
    assert made == expected and str(made) == str(expected) and made.parts == expected.parts
    assert made.parent == expected.parent and made.name == "b.md" and type(made) is type(expected)


def test_the_fetch_looks_up_no_row_past_the_last_it_needs(world: World, db: IndexDB) -> None:
    """FTS5's top k holds fetch + MARGIN rows, but the rows are stepped (and looked up in
    memories) only up to the fetch-th that passes the filters: a refused row (here a
    superseded one) costs one more, and the rest of the top k are never looked up but
    for one (the sqlite3 module steps a row ahead of the one it hands over)."""
    for n in range(60):
        meta = {"superseded_by": "facts/new"} if n in (1, 4) else {}
        world.write(world.global_root, f"facts/z{n:02}.md", "zeta omega", **meta)
    world.write(world.global_root, "facts/new.md", "successor")
    reconcile(db, world.config, world.roots)
    looked_up: list[int] = []

    def seen_row(rowid: int) -> int:
        looked_up.append(rowid)
        return 1

    db.conn.create_function("seen_row", 1, seen_row)

    class Counted:  # a Visible whose condition records every row it is asked about
        def sql(self) -> tuple[str, list[object]]:
            return "seen_row(memories.rowid)", []

    found = candidates(db, ["zeta"], world.roots, {}, 5, visible=Counted())
    ids = ["facts/z00", "facts/z02", "facts/z03", "facts/z05", "facts/z06"]
    assert [f.candidate.id for f in found] == ids
    rowid = dict(db.conn.execute("SELECT id, rowid FROM memories"))
    # equal texts, equal bm25: the top k in rowid order, z00 to z06 needed, z07 stepped to
    assert looked_up == [rowid[f"facts/z{n:02}"] for n in range(8)]
    assert fetch.MARGIN + 5 > 8  # FTS5's top k held more rows than were looked up


def _render_as_it_was(text: str, spans: list[tuple[int, int]], marks: tuple[str, str]) -> str:
    """_render before its shortcuts: the window around the spans, every span in it
    marked, white space collapsed by the regex."""
    size = len(text)
    begin = max(0, min(_best_window(spans) if spans else 0, size - WIDTH))
    end = min(size, begin + WIDTH)
    out = ["…"] if begin > 0 else []
    cursor = begin
    for start, stop in spans:
        if stop <= begin or start >= end:
            continue
        left, right = max(start, begin), min(stop, end)
        out += [text[cursor:left], marks[0], text[left:right], marks[1]]
        cursor = right
    out.append(text[cursor:end])
    if end < size:
        out.append("…")
    return re.sub(r"\s+", " ", "".join(out)).strip()


@seed(21_2026_12_01)
@settings(max_examples=300, deadline=None)
@given(st.data())
def test_a_snippet_is_what_rendering_made_of_it_before(data: st.DataObject) -> None:
    """Seed recorded above: texts around and past WIDTH, with and without spans (the
    shortcut for none), spans anywhere (merged, as explain gives them)."""
    size = data.draw(st.sampled_from([0, 3, WIDTH - 1, WIDTH, WIDTH + 1, 400]) | st.integers(0, 500))
    text = data.draw(st.text(st.sampled_from("ab 部\n\t\u3000…«"), min_size=size, max_size=size))
    cuts = sorted(set(data.draw(st.lists(st.integers(0, len(text)), max_size=12))))
    spans = _merge([(a, b) for a, b in zip(cuts[::2], cuts[1::2], strict=False) if a < b])
    marks = data.draw(st.sampled_from([("«", "»"), ("<<", ">>")]))
    assert _render(text, spans, marks) == _render_as_it_was(text, spans, marks)


def test_a_candidate_holds_its_whole_row_and_recall_reads_it_once(
    world: World, db: IndexDB
) -> None:
    """A fetch candidate is its whole row (candidate_row gives the Row db.rows() reads,
    every field of every type, for rows of every shape: pinned, dates, lists, problems,
    kinds, both scopes, 70 of them too), so recall of one term runs one statement (the FTS5
    query joined to memories' rows) and no second one for the kept rows, nor a transaction
    around it; of two, the AND and OR statements in one read transaction."""
    world.write(world.global_root, "facts/a.md", "kafka lag 部署", summary="kafka",
                load_when=["ops", "on call"], supersedes=["facts/old"], pinned=True,
                created="2024-01-02", updated="2025-03-04", kind="fact")  # fmt: skip
    world.write(world.project_root, "rules/b.md", "kafka rule", kind="rule", summary="规则")
    world.write(world.global_root, "facts/bad.md", "kafka", pinned="maybe")  # a problem
    for n in range(70):
        world.write(world.global_root, f"facts/m{n:02}.md", f"kafka {n}", summary=f"s{n}")
    reconcile(db, world.config, world.roots)
    found = candidates(db, ["kafka"], world.roots, {}, 100)
    kept = [f.candidate for f in found]
    assert len(kept) == 73
    by_path = {row.path: row for row in db.rows()}
    whole: dict[int, Row] = {}
    for c in kept:
        assert c.path is not None  # a fetched candidate holds its whole row
        whole[c.rowid] = by_path[Path(c.path)]
    for c in kept:
        got = candidate_row(c)
        assert got == whole[c.rowid]
        assert vars(got) == vars(whole[c.rowid])
        assert [type(v) for v in vars(got).values()] == [
            type(v) for v in vars(whole[c.rowid]).values()
        ]
    assert any(r.problems for r in whole.values()) and any(r.pinned for r in whole.values())
    statements: list[str] = []
    db.conn.set_trace_callback(statements.append)
    [hit] = recall(db, world.config, "部署", world.roots, bump=False)
    db.conn.set_trace_callback(None)
    assert hit.row == next(row for row in whole.values() if row.id == "facts/a")
    ours = [s for s in statements if not s.startswith("--")]  # "--": FTS5's own reads
    assert len(ours) == 1 and "memories.body" in ours[0] and "MATCH" in ours[0]
    statements.clear()  # two terms: the AND query, the OR query, in one read transaction
    db.conn.set_trace_callback(statements.append)
    [hit] = recall(db, world.config, "部署 lag", world.roots, bump=False)
    db.conn.set_trace_callback(None)
    ours = [s for s in statements if not s.startswith("--")]
    assert [s.split(" ")[0] for s in ours] == ["BEGIN", "SELECT", "SELECT", "COMMIT"]
    assert hit.row == next(row for row in whole.values() if row.id == "facts/a")



def test_a_hits_reasons_are_worked_out_once_when_first_read(
    world: World, db: IndexDB, monkeypatch: pytest.MonkeyPatch
) -> None:
    """recall leaves a hit's matched terms and snippet to its first reader, once: the same
    ones explain gives the row, in the markers recall was asked for."""
    from memoryd.index import search
    from memoryd.index.snippet import explain

    world.write(world.global_root, "facts/a.md", "Run the Deployment from the bastion.")
    world.write(world.global_root, "facts/b.md", "deploy twice, deploy often")
    reconcile(db, world.config, world.roots)
    explained: list[str] = []

    def counting(forms: dict[str, str], row: Row, marks: tuple[str, str]) -> object:
        explained.append(row.id)
        return explain(forms, row, marks)

    monkeypatch.setattr(search, "explain", counting)
    hits = recall(db, world.config, "deploy", world.roots, bump=False, markers="layered")
    assert [h.id for h in hits] == ["facts/b", "facts/a"] and explained == []
    assert hits[1].snippet == "Run the <<Deployment>> from the bastion."
    assert hits[1].terms == {"deploy": 1} and hits[1].to_json()["snippet"] == hits[1].snippet
    assert explained == ["facts/a"]


def test_what_callers_read_of_a_hit_is_its_rows_without_making_the_row(
    world: World, db: IndexDB
) -> None:
    from memoryd.config.sections import SearchConfig

    config = dataclasses.replace(world.config, search=SearchConfig(max_file_bytes=400))
    world.write(world.global_root, "facts/plain.md", "kafka lag on the broker", summary="kafka",
                load_when=["on call", "kafka"])  # fmt: skip
    world.write(world.global_root, "facts/big.md", "kafka " * 100, summary="kafka, at length")
    broken = world.global_root.path / "facts" / "broken.md"
    broken.write_text("---\nsummary: kafka: broken\n---\nkafka here too\n")
    reconcile(db, config, world.roots)
    hits = recall(db, config, "kafka", world.roots, bump=False)
    assert sorted(hit.id for hit in hits) == ["facts/big", "facts/broken", "facts/plain"]
    for hit in hits:
        shown = (hit.layout, hit.oversized, hit.problems, hit.load_when, hit.terms, hit.snippet)
        data = hit.to_json()
        assert "row" not in vars(hit)  # read from the fetch's row, no Row made
        assert data.get("oversized", False) == hit.oversized and "layout" not in data
        assert hit.row is not None
        row = hit.row
        reasons = explain(hit.forms, row, hit.marks)
        assert shown == (row.layout, row.oversized, row.problems, row.load_when, *reasons)
    by_id = {hit.id: hit for hit in hits}
    assert by_id["facts/big"].oversized and not by_id["facts/plain"].oversized
    assert by_id["facts/broken"].problems and not by_id["facts/plain"].problems


def test_hit_counts_are_read_only_for_the_roots_that_hold_a_candidate(
    world: World, db: IndexDB, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memoryd.index import hits as hits_module
    from memoryd.index.hits import bump_hits

    world.write(world.global_root, "facts/a.md", "kafka lag", summary="kafka")
    world.write(world.project_root, "facts/b.md", "redis eviction", summary="redis")
    reconcile(db, world.config, world.roots)
    bump_hits(world.global_root.path, ["facts/a"])
    read: list[str] = []
    lookup = hits_module.hit_lookup

    def counted(root: str) -> Any:
        read.append(str(root))
        return lookup(root)

    monkeypatch.setattr(hits_module, "hit_lookup", counted)
    [hit] = recall(db, world.config, "kafka", world.roots, bump=False)
    assert read == [str(world.global_root.path)]
    assert hit.parts["hits"] == 1 + 0.5 * 1 / (1 + 3)  # the count was read: one hit, boosted
    assert recall(db, world.config, "nothing-matches-this", world.roots, bump=False) == []
    assert read == [str(world.global_root.path)]  # no candidate: no root's counts read
