"""``.state.json`` is written as ``json.dumps(indent=1, sort_keys=True)`` writes it, however fast."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, seed, settings
from hypothesis import strategies as st

from memoryd.index.hits import read_hits, render

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
