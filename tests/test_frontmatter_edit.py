"""Editing a hand-written frontmatter changes only the lines of the fields it changes."""

from __future__ import annotations

import difflib

import pytest
from hypothesis import example, given, seed
from hypothesis import strategies as st

from memoryd.errors import MemorydError
from memoryd.frontmatter_edit import edit_fields
from memoryd.memory import parse

WORDS = st.sampled_from(["deploy", "部署", "kamal", "ci", "arm64", "测试", "notes", "x1"])
KEYS = st.sampled_from(["owner", "tags", "team", "extra", "ticket", "area", "load_when", "note"])
COMMENTS = st.sampled_from(["# why: see the 2024 outage", "# 备注", "#", "  # indented comment"])


@st.composite
def entry(draw: st.DrawFn, key: str) -> list[str]:
    """The lines of one field, in one of the styles people write."""
    style = draw(st.sampled_from(["plain", "quoted", "int", "flow", "map", "block", "nested"]))
    words = draw(st.lists(WORDS, min_size=1, max_size=3))
    tail = draw(st.sampled_from(["", "  # trailing"]))
    if style == "plain":
        return [f"{key}: {words[0]}{tail}"]
    if style == "quoted":
        return [f'{key}: "{" ".join(words)}: yes"{tail}']
    if style == "int":
        return [f"{key}: {draw(st.integers(0, 10**13))}{tail}"]
    if style == "flow":
        return [f"{key}: [{', '.join(words)}]{tail}"]
    if style == "map":
        return [f"{key}: {{a: {words[0]}, b: 2}}{tail}"]
    indent = draw(st.sampled_from(["", "  ", "    "]))
    if style == "block":
        return [f"{key}:{tail}", *(f"{indent}- {w}" for w in words)]
    return [f"{key}:", *(f"  k{n}: {w}" for n, w in enumerate(words))]


@st.composite
def memory_file(draw: st.DrawFn) -> tuple[bytes, bool]:
    """A memory with a hand-written frontmatter; whether it already has superseded_by."""
    keys = draw(st.lists(KEYS, unique=True, max_size=5))
    groups = [["id: facts/old"], ["summary: Deploy with Capistrano"]]
    for key in keys:
        comment = [draw(COMMENTS)] if draw(st.booleans()) else []
        groups.append(comment + draw(entry(key)))
    linked = draw(st.booleans())
    if linked:
        at = draw(st.integers(0, len(groups)))
        groups.insert(at, ["superseded_by: facts/older" + draw(st.sampled_from(["", "  # x"]))])
    lines = [line for group in groups for line in group]
    if draw(st.booleans()):
        lines.append(draw(COMMENTS))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    body = draw(st.sampled_from(["Body text.\n", "", "正文\n\n- a list\n", "---\nnot a fence\n"]))
    text = newline.join(["---", *lines, "---", ""]) + body.replace("\n", newline)
    return text.encode("utf-8"), linked


def changed_lines(before: bytes, after: bytes) -> list[tuple[str, int, int]]:
    """The diff's non-equal operations as (tag, old line count, new line count)."""
    a = before.decode("utf-8").splitlines(keepends=True)
    b = after.decode("utf-8").splitlines(keepends=True)
    ops = difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes()
    return [(tag, i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in ops if tag != "equal"]


@seed(19)
@given(memory_file())
@example((b"---\r\nid: facts/old\r\n# keep me\r\ntags: [a, b]\r\n---\r\nbody\r\n", False))
def test_setting_superseded_by_changes_exactly_one_line(case: tuple[bytes, bool]) -> None:
    raw, linked = case
    memory = parse(raw)
    assert not memory.problems
    out = edit_fields(memory, {"superseded_by": "facts/new"})
    assert changed_lines(raw, out) == [("replace", 1, 1) if linked else ("insert", 0, 1)]
    again = parse(out)
    assert again.meta == {**memory.meta, "superseded_by": "facts/new"}
    assert again.body == memory.body
    newline = b"\r\n" if raw.startswith(b"---\r\n") else b"\n"
    assert b"superseded_by: facts/new" + newline in out


@seed(1919)
@given(memory_file())
def test_clearing_superseded_by_removes_exactly_its_line(case: tuple[bytes, bool]) -> None:
    raw, linked = case
    memory = parse(raw)
    out = edit_fields(memory, {"superseded_by": None})
    assert changed_lines(raw, out) == ([("delete", 1, 0)] if linked else [])
    expected = {k: v for k, v in memory.meta.items() if k != "superseded_by"}
    assert parse(out).meta == expected


def test_one_item_of_a_block_list_is_dropped_or_replaced_in_place() -> None:
    raw = (
        b"---\nid: facts/new\nsupersedes:\n  - facts/a  # the first try\n  - facts/b\n"
        b"owner: ops   # \xe8\xbf\x90\xe7\xbb\xb4\n---\nbody\n"
    )
    memory = parse(raw)
    dropped = edit_fields(memory, {"supersedes": ["facts/b"]})
    assert dropped == raw.replace(b"  - facts/a  # the first try\n", b"")
    moved = edit_fields(memory, {"supersedes": ["facts/a", "rules/b"]})
    assert moved == raw.replace(b"  - facts/b\n", b"  - rules/b\n")
    flow = parse(b"---\nsupersedes: [facts/a, facts/b]  # both\nid: x\n---\n")
    assert edit_fields(flow, {"supersedes": ["facts/b"]}) == (
        b"---\nsupersedes: [facts/b]\nid: x\n---\n"
    )


def test_several_fields_of_an_accepted_proposal_change_in_place() -> None:
    raw = (
        b"---\n# written by the agent, reviewed on Monday\nid: proposals/lint\n"
        b"kind: rule-proposal   # accept me\nload_when: [lint, ci]\nupdated: 1700000000000\n"
        b"---\nAlways run the linter.\n"
    )
    out = edit_fields(parse(raw), {"kind": "rule", "id": "rules/lint", "updated": 1800000000000})
    assert out == (
        b"---\n# written by the agent, reviewed on Monday\nid: rules/lint\nkind: rule\n"
        b"load_when: [lint, ci]\nupdated: 1800000000000\n---\nAlways run the linter.\n"
    )


def test_a_file_without_frontmatter_gets_one() -> None:
    out = edit_fields(parse(b"just a body\n"), {"superseded_by": "facts/new"})
    assert out == b"---\nsuperseded_by: facts/new\n---\njust a body\n"


def test_a_key_written_in_a_form_the_editor_does_not_read_is_never_duplicated() -> None:
    raw = b'---\n"superseded_by": facts/old\nid: x\n---\n'
    out = edit_fields(parse(raw), {"superseded_by": "facts/new"})
    assert out == b"---\nsuperseded_by: facts/new\nid: x\n---\n"


def test_bytes_that_are_not_utf8_are_kept_as_they_are() -> None:
    raw = b"---\nkind: fact\nsummary: caf\xe9\n---\nna\xefve\n"
    edited = edit_fields(parse(raw), {"superseded_by": "facts/new"})
    assert edited == b"---\nkind: fact\nsummary: caf\xe9\nsuperseded_by: facts/new\n---\nna\xefve\n"


def test_a_file_that_is_not_utf8_is_never_rewritten_whole() -> None:
    """A shape the line editor leaves alone (a key in quotes) would be rendered from the
    text read with replacement characters: refused instead."""
    memory = parse(b'---\n"supersedes": [facts/old]\nsummary: caf\xe9\n---\n')
    with pytest.raises(MemorydError) as caught:
        edit_fields(memory, {"supersedes": None})
    assert str(caught.value) == (
        "cannot rewrite a memory that is not valid UTF-8: its other bytes would be lost\n"
        "  hint: save the file as UTF-8 first (e.g. iconv -f latin1 -t utf-8)"
    )


def test_fences_with_trailing_blanks_are_kept_as_written() -> None:
    raw = b"--- \nkind: fact\nsummary: old\n---\t\nbody\n"
    out = edit_fields(parse(raw), {"superseded_by": "facts/new"})
    assert out == b"--- \nkind: fact\nsummary: old\nsuperseded_by: facts/new\n---\t\nbody\n"
