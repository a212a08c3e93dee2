"""JSON and JSONC edited as text: the one change made, every other byte kept."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memoryd.connect import jsonc

keys = st.text(st.characters(codec="utf-8"), max_size=8)
scalars = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=10)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
    max_leaves=8,
)
documents = st.dictionaries(keys, values, max_size=5)
styles = st.sampled_from([None, 2, 4, "\t"])


def dumped(data: Any, indent: int | str | None) -> str:
    return json.dumps(data, indent=indent, ensure_ascii=False) + "\n"


@settings(max_examples=150, deadline=None)
@given(documents, styles, st.lists(keys, min_size=1, max_size=3), values)
def test_setting_a_member_changes_that_member_alone(
    data: dict[str, Any], indent: int | str | None, path: list[str], value: Any
) -> None:
    text = dumped(data, indent)
    expect = json.loads(text)
    cursor = expect
    for depth, key in enumerate(path[:-1]):
        if key in cursor and not isinstance(cursor[key], dict):  # a setting in the way
            with pytest.raises(jsonc.JsoncError) as caught:
                jsonc.set_member(text, tuple(path), value)
            where = ".".join(path[: depth + 1])
            assert caught.value.problem == f"{where} is not an object ({{...}})"
            return
        cursor = cursor.setdefault(key, {})
    cursor[path[-1]] = value
    new = jsonc.set_member(text, tuple(path), value)
    assert json.loads(new) == expect  # strict JSON still: a JSON file stays JSON
    assert list(json.loads(new)) == list(expect)  # the user's keys keep their order
    assert jsonc.set_member(new, tuple(path), value) == new  # idempotent


@settings(max_examples=150, deadline=None)
@given(documents, styles, keys, values)
def test_a_member_added_then_removed_leaves_the_very_bytes(
    data: dict[str, Any], indent: int | str | None, key: str, value: Any
) -> None:
    text = dumped({k: v for k, v in data.items() if k != key}, indent)
    added = jsonc.set_member(text, (key,), value)
    assert jsonc.remove_member(added, (key,)) == text


@settings(max_examples=100, deadline=None)
@given(st.lists(values, max_size=4), styles, values)
def test_an_item_appended_then_removed_leaves_the_very_bytes(
    items: list[Any], indent: int | str | None, value: Any
) -> None:
    text = dumped({"list": items}, indent)
    added = jsonc.append_item(text, ("list",), value)
    assert json.loads(added)["list"] == [*items, value]
    assert jsonc.remove_item(added, ("list",), len(items)) == text


JSONC = """\
// OpenCode, my way
{
  "$schema": "https://opencode.ai/config.json",
  /* the model I pay for */
  "model": "anthropic/claude-sonnet", // keep
  "mcp": {
    "other": { "type": "local", "command": ["other"] }, // trailing comma next
  },
}
"""


def test_comments_and_trailing_commas_survive_an_edit() -> None:
    new = jsonc.set_member(JSONC, ("mcp", "memoryd"), {"type": "local", "command": ["m", "mcp"]})
    assert new == JSONC.replace(
        '// trailing comma next\n  },',
        '// trailing comma next\n    "memoryd": {\n      "type": "local",\n      "command": [\n'
        '        "m",\n        "mcp"\n      ]\n    }\n  },',
    )
    assert jsonc.remove_member(new, ("mcp", "memoryd")).count("//") == JSONC.count("//")


def test_crlf_files_keep_crlf() -> None:
    text = '{\r\n  "a": 1\r\n}\r\n'
    new = jsonc.set_member(text, ("b",), {"c": 2})
    assert new == '{\r\n  "a": 1,\r\n  "b": {\r\n    "c": 2\r\n  }\r\n}\r\n'


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ('{\n  "a": 1\n  "b": 2\n}\n', 3, "expected ',' or '}' after a member (a missing comma?)"),
        ('{\n  "a": [1,\n}\n', 3, "unexpected '}' where a value was expected"),
        ('{\n  "a": "open\n}\n', 2, 'a string runs past the end of its line (a missing ")'),
        ("{\n  /* note\n}\n", 2, "a /* comment is never closed with */"),
        ('{"a": 1}\n{"b": 2}\n', 2, "more text after the end of the JSON value"),
        ("", 1, "the file is empty; it must hold one JSON object"),
    ],
)
def test_a_text_that_does_not_parse_is_refused_with_its_line(
    text: str, line: int, problem: str
) -> None:
    with pytest.raises(jsonc.JsoncError) as caught:
        jsonc.parse(text)
    assert (caught.value.line, caught.value.problem) == (line, problem)
