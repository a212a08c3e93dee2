from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import example, given
from hypothesis import strategies as st

from memoryd import frontmatter
from memoryd.frontmatter import load_simple

LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # memory.py's


def judge(text: str) -> Any:
    """What PyYAML (the loader memory.parse uses) makes of ``text``."""
    try:
        return yaml.load(text, Loader=LOADER)
    except yaml.YAMLError:
        return "error"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("id: a\nkind: fact\nupdated: 1778757443477\n", {"id": "a", "kind": "fact", "updated": 1778757443477}),
        ("load_when: [circuit, 发布]\n", {"load_when": ["circuit", "发布"]}),
        ("load_when: []\nx:\n", {"load_when": [], "x": None}),
        ("tags:\n  - a b\n  - 部署\nkind: rule\n", {"tags": ["a b", "部署"], "kind": "rule"}),
        ("tags:\n- a\n- b\n", {"tags": ["a", "b"]}),
        ("summary: use foo[0], then bar\n", {"summary": "use foo[0], then bar"}),
        ("", {}),
        ("pinned: true\nsync: no\nx: on\nstale: False\n", {"pinned": True, "sync": False, "x": True, "stale": False}),
        ("x: ~\nw: null\nz: NULL\n", {"x": None, "w": None, "z": None}),
        ("x: 'quoted'\nw: 'it''s: #1'\n", {"x": "quoted", "w": "it's: #1"}),
        ('summary: "a: b, [c] # not a comment"\n', {"summary": "a: b, [c] # not a comment"}),
        ("load_when: [\"deploy\", 'k8s: ns', 部署, true]\n", {"load_when": ["deploy", "k8s: ns", "部署", True]}),
        ("x: a # comment\n# a whole line\nw: 'b'  # another\n", {"x": "a", "w": "b"}),
        ("tags:\n  # a comment inside the list\n  - \"a b\"\n  - c # why\n", {"tags": ["a b", "c"]}),
        ("x: # nothing\nlang: C#\n", {"x": None, "lang": "C#"}),
        ('load_when: ["a, b", c, "d"]\n', {"load_when": ["a, b", "c", "d"]}),
        ('a: ["x"]\nb: []\nc:\nd: [1, true]\n', {"a": ["x"], "b": [], "c": None, "d": [1, True]}),
    ],
)  # fmt: skip
def test_reads_the_shape_memoryd_writes(text: str, expected: dict[str, Any]) -> None:
    assert load_simple(text) == expected
    assert (judge(text) or {}) == expected


@pytest.mark.parametrize(
    "text",
    [
        "x: y\n", "x: N\n", "x: 0o17\n",
        "x: 017\n", "x: 1_000\n", "x: 1:20\n", "x: 2024-01-01\n", "x: .5\n", "x: 1.5\n",
        'x: "esc\\n"\n', "x: 'open\n", 'x: "a" b\n', "x: 'a'#c\n", "x: a: b\n", "x: a\n  more\n",
        "x: &anchor a\n", "x: !!str 1\n", "x: |\n  block\n", "x: [a, [b]]\n", "x: [a,]\n",
        "x: [a: b]\n", "x: a\nx: b\n", "on: a\n", " x: a\n", "x:a\n", "x: a\r\n",
        "tags:\n  - a\n- b\n", "x: -1a\n", "x: a  b\n",
    ],
)  # fmt: skip
def test_leaves_everything_else_to_pyyaml(text: str) -> None:
    assert load_simple(text) is None


_PIECES = st.sampled_from(
    ["id", "kind", "x_1", "on", "Yes", ":", ": ", " ", "  ", "\n", "\n  ", "- ", "  - ", "[",
     "]", ", ", ",", "#", "'", '"', "a", "部署", "Ünï", "0", "12", "-3", "007", "1_0", "1e3",
     ".5", "~", "null", "true", "2024-01-01", "&", "*", "!", "|", ">", "?", "%", "@", "\t",
     "\u00a0", "\u3000", "\u0301", "x" * 3, "True", "FALSE", "off", " #", "\\", "''",
     '"a"', "'b c'", "NULL"]
)  # fmt: skip


@given(st.lists(_PIECES, max_size=30).map("".join))
@example("load_when:\n  - a\n  - b\nkind: x\n")
@example("a: [b, c]\nd:\ne: 12\n")
def test_agrees_with_pyyaml_whenever_it_answers(text: str) -> None:
    fast = load_simple(text)
    if fast is not None:
        slow = judge(text)
        assert fast == (slow if slow is not None else {})
        assert [type(v) for v in fast.values()] == [type(v) for v in (slow or {}).values()]


_VALUES = st.lists(_PIECES.filter(lambda p: p != "\n"), min_size=1, max_size=4).map("".join)
_LINES = st.one_of(
    st.tuples(st.sampled_from(["id", "kind", "Off", "x"]), _VALUES).map(lambda kv: f"{kv[0]}: {kv[1]}"),
    _VALUES.map(lambda v: f"  - {v}"),
    _VALUES.map(lambda v: f"- {v}"),
    st.sampled_from(["tags:", "load_when:", ""]),
)  # fmt: skip


@given(st.lists(_LINES, max_size=8).map("\n".join))
def test_agrees_with_pyyaml_on_lines_shaped_like_frontmatter(text: str) -> None:
    test_agrees_with_pyyaml_whenever_it_answers.hypothesis.inner_test(text)  # type: ignore[attr-defined]


_ITEMS = st.lists(
    st.sampled_from(["a", "b c", "部署", "1", "007", "true", "", " ", ",", '"', "'", "#", "[", "]"]),
    max_size=4,
).map("".join)


@given(st.lists(_ITEMS.map(lambda v: f'"{v}"') | _ITEMS, max_size=5), st.sampled_from([",", ", ", " , "]))
def test_flow_lists_agree_with_pyyaml(items: list[str], comma: str) -> None:
    """A flow list is first cut at every comma and, where that leaves a part that is no
    value (a quoted item held a comma), split again minding the quotes."""
    test_agrees_with_pyyaml_whenever_it_answers.hypothesis.inner_test(  # type: ignore[attr-defined]
        f"load_when: [{comma.join(items)}]\nkind: x\n"
    )


def test_a_value_that_starts_with_a_letter_is_never_tried_as_an_integer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A decimal integer starts with a digit or "-": a word (most values) skips the integer
    pattern, and only a short value is lowered to look for yes/no/null."""

    class Refused:
        def match(self, text: str) -> None:
            raise AssertionError(f"tried {text!r} as an integer")

    monkeypatch.setattr(frontmatter, "_INT_RE", Refused())
    text = "kind: fact\nload_when: [deploy, 部署]\nsummary: Deploy with pnpm\nx: No\n"
    assert load_simple(text) == {
        "kind": "fact", "load_when": ["deploy", "部署"], "summary": "Deploy with pnpm", "x": False
    }  # fmt: skip


# Values in the shapes the flat reader takes (and a few beside them), to build whole lines.
_FLAT_VALUES = st.sampled_from(
    ['"a b"', '"部署: x, [y]"', '""', '"a # b"', '"esc\\n"', '"a"b"', "fact", "a b", "a  b",
     "a: b", "a:", "部署", "Ünï", "12", "0", "007", "-3", "1778757443477", "1" * 19, "true",
     "No", "NULL", "nuLL", "y", "~", "[a, \"b c\", 部署]", '["x"]', "[]", "[ ]", "[a,]",
     "[a, [b]]", "[a, 'b']", "[1, true]", "[on, y]", "[a  b]", "['q']", "'q'", "C#", "a#b",
     "", " ", "\u00a0x", "x\u3000y", "[\"a, b\"]"]
)  # fmt: skip
_FLAT_LINES = st.tuples(
    st.sampled_from(["id", "kind", "summary", "load_when", "x_1", "On", "a-b", "k"]),
    st.sampled_from([": ", ":  ", ":", " : "]),
    _FLAT_VALUES,
    st.sampled_from(["", " ", "  # why", " #x", "#x", " # 'q'"]),
).map("".join)


@given(st.lists(_FLAT_LINES | st.sampled_from(["", "# c", "- a", "  - b", "tags:"]), max_size=8))
@example(["id: a", 'summary: "部署 x"', "updated: 1778757443477", "load_when: [k8s, \"b\"]"])
@example(["pinned: false  # hand-written files say so", "kind: fact", ""])
def test_the_flat_reader_reads_what_the_line_reader_reads(lines: list[str]) -> None:
    """The commonest frontmatter is read in one loop; whatever it answers, the line by line
    reader (held to PyYAML above) answers the same, types included, and it leaves every
    other text to that reader."""
    text = "".join(f"{line}\n" for line in lines)
    flat = frontmatter.load_flat(text)
    if flat is not None:
        slow = frontmatter.load_lines(text)
        assert slow is not None
        assert flat == slow
        assert [type(v) for v in flat.values()] == [type(v) for v in slow.values()]
        assert flat == (judge(text) or {})
    assert load_simple(text) == frontmatter.load_lines(text)


@pytest.mark.parametrize(
    ("text", "flat"),
    [
        ('id: a/b-1\nkind: fact\nsummary: "部署 x"\nupdated: 17\nload_when: [k8s, "b c"]\n', True),
        ("pinned: false  # hand-written files say so\nsummary: Deploy with pnpm\n\n", True),
        ('summary: "a # b"\n', False),  # a quoted value with a "#": the line reader's
        ("lang: C#\n", False),
        ("tags:\n  - a\n", False),
        ("x: 'q'\n", False),
        ("load_when: []\n", False),
        ("x: \u00a0y\n", False),
    ],
)  # fmt: skip
def test_the_flat_reader_takes_the_commonest_shapes_and_leaves_the_rest(
    text: str, flat: bool
) -> None:
    assert (frontmatter.load_flat(text) is not None) is flat
    read = load_simple(text)
    assert read == frontmatter.load_lines(text)
    assert read is None or read == (judge(text) or {})  # None: PyYAML reads it (\u00a0)
