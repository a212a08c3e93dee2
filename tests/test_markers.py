from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memoryd.compile.markers import (
    DamagedMarkers,
    begin_line,
    block_lines,
    end_line,
    extract,
    fill,
    newline_of,
    splice,
    strip,
)


def block(name: str, *body: str) -> str:
    return "\n".join([begin_line(name, "(note)"), *body, end_line(name)]) + "\n"


NEW = {"a": block("a", "## new a"), "b": block("b", "- new b (`b`)")}  # as compile writes


def test_blocks_are_appended_to_a_file_without_markers() -> None:
    assert splice("# Title\n\nmine\n", NEW) == "# Title\n\nmine\n\n" + NEW["a"] + "\n" + NEW["b"]


def test_a_file_without_final_newline_gets_one_before_the_blocks() -> None:
    assert splice("mine", {"a": NEW["a"]}) == "mine\n\n" + NEW["a"]


def test_an_empty_file_becomes_the_blocks() -> None:
    assert splice("", {"a": NEW["a"]}) == NEW["a"]


def test_blocks_are_replaced_whole_and_human_text_survives() -> None:
    text = (
        "before  \n\n"
        "<!-- memoryd:begin b -->\n- old b (`b`)\n\n| more | old b |\n<!-- memoryd:end b -->\n"
        "between\t\n"
        "<!-- memoryd:begin a (anything) -->\n<!-- memoryd:end a -->\n"
        "after\n\n\n"
    )
    assert splice(text, NEW) == (
        "before  \n\n" + NEW["b"] + "between\t\n" + NEW["a"] + "after\n\n\n"
    )


def test_a_line_typed_inside_a_block_is_moved_below_it_not_dropped() -> None:
    """An iron rule added by hand to the rules block was deleted by the next compile (the
    daemon's, seconds later), with nothing said: the block is regenerated whole."""
    text = (
        "# Memory\n"
        "<!-- memoryd:begin a -->\n## Iron rules\n\n_No iron rules yet._\n"
        "- never deploy on a Friday\n  the release train waits\n| x | y |\n- stale (`r/x`)\n"
        "<!-- memoryd:end a -->\n"
        "after\n"
    )
    out = splice(text, {"a": NEW["a"]})
    assert out == (
        "# Memory\n" + NEW["a"] + "- never deploy on a Friday\n  the release train waits\nafter\n"
    )
    assert splice(out, {"a": NEW["a"]}) == out


def test_a_typed_line_in_a_block_that_ends_the_file_keeps_its_own_ending() -> None:
    text = "<!-- memoryd:begin a -->\r\nmine\r\n<!-- memoryd:end a -->"
    assert splice(text, {"a": NEW["a"]}) == NEW["a"].replace("\n", "\r\n") + "mine\r\n"


def test_a_missing_block_is_appended_after_the_others() -> None:
    text = "x\n<!-- memoryd:begin a -->\n## old\n<!-- memoryd:end a -->\ny\n"
    assert splice(text, NEW) == "x\n" + NEW["a"] + "y\n\n" + NEW["b"]


def test_blocks_of_other_names_are_left_alone() -> None:
    text = "<!-- memoryd:begin future -->\nkeep me\n<!-- memoryd:end future -->\n"
    assert splice(text, {"a": NEW["a"]}) == text + "\n" + NEW["a"]


def test_crlf_files_keep_crlf() -> None:
    text = "x\r\n<!-- memoryd:begin a -->\r\n_old_\r\n<!-- memoryd:end a -->\r\ny\r\n"
    out = splice(text, {"a": NEW["a"]})
    assert out == "x\r\n" + NEW["a"].replace("\n", "\r\n") + "y\r\n"


def test_a_block_ending_the_file_without_newline_keeps_that() -> None:
    text = "x\n<!-- memoryd:begin a -->\n_old_\n<!-- memoryd:end a -->"
    assert splice(text, {"a": NEW["a"]}) == "x\n" + NEW["a"].rstrip("\n")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x\n<!-- memoryd:begin a -->\ny\n", "line 2: block 'a' begins but never ends"),
        ("<!-- memoryd:end a -->\n", "line 1: end of block 'a' without its begin"),
        (
            "<!-- memoryd:begin a -->\n<!-- memoryd:begin b -->\n<!-- memoryd:end b -->\n",
            "line 2: block 'b' begins inside block 'a' (begun on line 1, never ended)",
        ),
        (
            "<!-- memoryd:begin a -->\n<!-- memoryd:end b -->\n",
            "line 2: end of block 'b' without its begin",
        ),
        (
            "<!-- memoryd:begin a -->\n<!-- memoryd:end a -->\n"
            "<!-- memoryd:begin a -->\n<!-- memoryd:end a -->\n",
            "line 3: block 'a' appears twice",
        ),
    ],
)
def test_damaged_markers_are_refused_with_the_line(text: str, message: str) -> None:
    with pytest.raises(DamagedMarkers) as caught:
        splice(text, NEW)
    assert str(caught.value) == message
    assert extract(text) == {}


def test_extract_returns_the_inner_text() -> None:
    text = "x\n" + NEW["a"] + "y\n"
    assert extract(text) == {"a": "## new a\n"}


_human = st.text(st.characters(blacklist_categories=["Cs"]), max_size=40).filter(
    lambda t: "memoryd:" not in t
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_human, min_size=3, max_size=3), st.booleans())
def test_human_text_around_blocks_survives_any_content(parts: list[str], crlf: bool) -> None:
    nl = "\r\n" if crlf else "\n"
    head, mid, tail = (p.replace("\r", "").replace("\n", nl) + nl for p in parts)
    old_a = f"<!-- memoryd:begin a -->{nl}- x (`x`){nl}<!-- memoryd:end a -->{nl}"
    old_b = f"<!-- memoryd:begin b -->{nl}<!-- memoryd:end b -->{nl}"
    text = head + old_a + mid + old_b + tail
    out = splice(text, NEW)
    want = head + NEW["a"].replace("\n", nl) + mid + NEW["b"].replace("\n", nl) + tail
    if newline_of(text) == nl:  # the first line decides the style
        assert out == want
    assert splice(out, NEW) == out


@settings(max_examples=200, deadline=None)
@given(_human)
def test_appending_is_idempotent(text: str) -> None:
    once = splice(text, NEW)
    assert once.startswith(text)
    assert splice(once, NEW) == once


HUMAN = st.lists(
    st.sampled_from(["# Memory", "人写的一行", "", "  indented", "<!-- a comment -->", "- item"]),
    max_size=4,
)


@settings(max_examples=200, derandomize=True)
@given(
    st.lists(
        st.tuples(HUMAN, st.lists(st.sampled_from(["- r", "规则", ""]), max_size=3)), max_size=3
    ),
    HUMAN,
    st.sampled_from(["\n", "\r\n"]),
)
def test_fill_puts_back_exactly_what_strip_took_out(
    parts: list[tuple[list[str], list[str]]], tail: list[str], newline: str
) -> None:
    lines: list[str] = []
    for number, (human, body) in enumerate(parts):
        lines += [*human, begin_line(f"b{number}", "(generated)"), *body, end_line(f"b{number}")]
    text = newline.join([*lines, *tail]) + newline
    stripped, bodies = strip(text)
    assert set(bodies) == {f"b{n}" for n in range(len(parts))}
    assert extract(stripped) == dict.fromkeys(bodies, "")
    assert fill(stripped, bodies) == text


@pytest.mark.parametrize(
    "damaged",
    [
        "<!-- memoryd:begin rules -->\nno end\n",
        "<!-- memoryd:end rules -->\n",
        "<!-- memoryd:begin a -->\n<!-- memoryd:begin b -->\n<!-- memoryd:end b -->\n"
        "<!-- memoryd:end a -->\n",
    ],
    ids=["no end", "no begin", "nested"],
)
def test_strip_and_fill_leave_damaged_markers_as_human_text(damaged: str) -> None:
    assert strip(damaged) == (damaged, {})
    assert fill(damaged, {"a": "x\n", "rules": "y\n"}) == damaged


def test_block_lines_are_the_lines_between_the_markers() -> None:
    lines = ["top", begin_line("rules", "(g)"), "- one", "- two", end_line("rules"), "end"]
    assert block_lines(lines) == {"rules": ["- one", "- two"]}
    with pytest.raises(DamagedMarkers, match="line 1: block 'rules' begins but never ends"):
        block_lines(lines[1:3])
