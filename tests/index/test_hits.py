"""``.state.json``: written as ``json.dumps(indent=1, sort_keys=True)`` writes it, however fast;
hits appended to it one line each, folded in now and then; the earlier format read and upgraded."""

from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, seed, settings
from hypothesis import strategies as st

from memoryd.index import hits
from memoryd.index.hits import bump_hits, fold, hit_lookup, read_hits, render

ids = st.text(min_size=1, max_size=12)  # any text: quotes, backslashes, controls, CJK, surrogates
counts = st.integers(min_value=-(2**70), max_value=2**70)
json_values = st.recursive(
    st.none() | st.booleans() | counts | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
states = st.one_of(
    st.fixed_dictionaries({"hits": st.dictionaries(ids, counts, max_size=30)}),
    st.fixed_dictionaries({"hits": st.dictionaries(ids, counts | json_values, max_size=6)}),
    st.dictionaries(st.text(max_size=6), json_values, max_size=4),
    st.fixed_dictionaries(
        {"hits": st.dictionaries(ids, counts, max_size=5)},
        optional={"seen": json_values, "a": counts},
    ),
)


@seed(20261201)
@settings(max_examples=400, deadline=None)
@given(states)
def test_a_state_is_written_as_json_dumps_writes_it(state: dict[str, Any]) -> None:
    assert render(state) == json.dumps(state, ensure_ascii=False, indent=1, sort_keys=True) + "\n"


def test_counts_are_written_one_per_line_and_read_back(tmp_path: Any) -> None:
    state = {"hits": {"pitfalls/部署": 3, 'facts/"quoted"': 1, "a\\b": 12}}
    text = render(state)
    assert text == (
        '{\n "hits": {\n  "a\\\\b": 12,\n  "facts/\\"quoted\\"": 1,\n  "pitfalls/部署": 3\n }\n}\n'
    )
    (tmp_path / ".state.json").write_text(text, encoding="utf-8")
    assert read_hits(tmp_path) == state["hits"]


def test_a_state_file_of_the_earlier_format_is_read_then_upgraded(tmp_path: Path) -> None:
    """The earlier format (the JSON object alone, rewritten by every recall) is read as it
    is; a recall appends to it without rewriting it, and a fold writes the object again
    with every count and every other key."""
    file = tmp_path / ".state.json"
    old = '{\n "hits": {\n  "facts/a": 3,\n  "pitfalls/部署": 1\n },\n "seen": [1, 2]\n}\n'
    file.write_text(old, encoding="utf-8")
    inode = file.stat().st_ino
    bump_hits(tmp_path, ["pitfalls/部署", "facts/new"])
    data = file.read_bytes()
    assert data == old.encode() + b'"pitfalls/\\u90e8\\u7f72"\n"facts/new"\n'
    assert file.stat().st_ino == inode  # appended, not replaced
    assert read_hits(tmp_path) == {"facts/a": 3, "pitfalls/部署": 2, "facts/new": 1}
    fold(str(file))
    assert json.loads(file.read_text(encoding="utf-8")) == {
        "hits": {"facts/a": 3, "pitfalls/部署": 2, "facts/new": 1},
        "seen": [1, 2],
    }


def test_a_lookup_reads_on_from_where_it_stopped_and_again_after_a_fold(tmp_path: Path) -> None:
    bump_hits(tmp_path, ["a", "a", "b"])
    assert hit_lookup(tmp_path)("a") == 2
    bump_hits(tmp_path, ["a"])  # as another process would
    lookup = hit_lookup(tmp_path)
    assert (lookup("a"), lookup("b"), lookup("c")) == (3, 1, 0)
    fold(str(tmp_path / ".state.json"))
    bump_hits(tmp_path, ["c"])
    lookup = hit_lookup(tmp_path)
    assert (lookup("a"), lookup("b"), lookup("c")) == (3, 1, 1)


def test_a_line_torn_by_a_crash_loses_that_hit_only(tmp_path: Path) -> None:
    file = tmp_path / ".state.json"
    file.write_text('{"hits": {"a": 5}}\n"b"\n"a', encoding="utf-8")  # the last line cut off
    assert read_hits(tmp_path) == {"a": 5, "b": 1}  # a line still being written: not yet
    bump_hits(tmp_path, ["a"])  # appended after the torn line: that line no longer parses
    assert read_hits(tmp_path) == {"a": 5, "b": 1}
    bump_hits(tmp_path, ["a"])
    assert read_hits(tmp_path) == {"a": 6, "b": 1}


@seed(39)
@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(ids, max_size=4) | st.just(["FOLD"]), max_size=25))
def test_appended_and_folded_hits_add_up(batches: list[list[str]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        expected: Counter[str] = Counter()
        kept = hit_lookup(tmp)  # a reader that reads on, like the daemon's
        for batch in batches:
            if batch == ["FOLD"]:
                fold(os.path.join(tmp, ".state.json"))
                continue
            bump_hits(tmp, batch)
            expected.update(batch)
            kept = hit_lookup(tmp)
        assert read_hits(tmp) == dict(expected)
        assert all(kept(memory_id) == n for memory_id, n in expected.items())


def test_the_file_folds_itself_as_it_grows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hits, "FOLD_BYTES", 64)
    for n in range(40):
        bump_hits(tmp_path, [f"facts/m{n % 7}"])
    assert (tmp_path / ".state.json").stat().st_size < 200  # folded: the object, few lines
    assert read_hits(tmp_path) == {f"facts/m{k}": 6 if k < 5 else 5 for k in range(7)}


@seed(3939)
@settings(max_examples=300, deadline=None)
@given(st.none() | states, st.lists(ids, max_size=8), st.lists(ids, max_size=4))
def test_a_reader_that_asks_once_counts_as_the_whole_parse(
    state: dict[str, Any] | None, appended: list[str], others: list[str]
) -> None:
    """hit_reader (the lean recall's: a binary search of the sorted lines, not a parse of
    every count) gives every id, present or not, the count hit_lookup's parse gives it:
    for a file of any state, hits appended to it or to no file at all (None)."""
    with tempfile.TemporaryDirectory() as tmp:
        if state is not None:
            text = render(state)
            Path(tmp, ".state.json").write_text(text, encoding="utf-8", errors="surrogatepass")
        bump_hits(tmp, appended)
        hits._SEEN.clear()
        whole = hit_lookup(tmp)
        once = hits.hit_reader(tmp)
        asked = [*appended, *others, *((state or {}).get("hits") or {})]
        assert [once(i) for i in asked] == [whole(i) for i in asked]


def test_a_reader_that_asks_once_does_not_parse_every_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At 100k memories parsing every count cost the lean recall more than its query: the
    reader of one recall finds the ids it is asked for and decodes no JSON."""
    (tmp_path / ".state.json").write_text(
        render({"hits": {f"facts/m{n:05d}": n for n in range(5000)}}), encoding="utf-8"
    )
    bump_hits(tmp_path, ["facts/m00007", "facts/new"])

    def refused(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("parsed as JSON")

    monkeypatch.setattr(json, "loads", refused)
    monkeypatch.setattr(json.JSONDecoder, "raw_decode", refused)
    lookup = hits.hit_reader(tmp_path, strict=True)
    assert [lookup(i) for i in ("facts/m00007", "facts/m04999", "facts/new", "facts/x")] == [
        8, 4999, 1, 0,
    ]
