from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from memoryd.errors import MemorydError
from memoryd.memory import (
    Memory,
    Problem,
    epoch_ms,
    id_for_path,
    new_memory,
    parse,
    render,
)
from memoryd.validation import validate

PLUGIN_EXAMPLE = """\
---
id: pitfalls/sqlite-cjk-tokenizer
kind: pitfall
summary: unicode61 把整段中文当一个 token,trigram 漏掉两字词。
highlight: 实测:查"部署"两种分词器都是 0 命中
created: 1791512014824
updated: 1791512014824
load_when:
  - SQLite
  - FTS5
  - 分词
pinned: true
---
正文:上下文、决策、原因、根因。
"""

TRICKY = {
    "plugin example (Chinese)": PLUGIN_EXAMPLE.encode(),
    "crlf": b"---\r\nid: a\r\nkind: fact\r\n---\r\nline one\r\nline two\r\n",
    "empty": b"",
    "frontmatter only": b"---\nid: x\n---\n",
    "frontmatter only, no final newline": b"---\nid: x\n---",
    "no frontmatter": "# 标题\n\n只有正文。\n".encode(),
    "unclosed fence": b"---\nid: x\nkind: fact\nbody without end\n",
    "tabs in yaml": b"---\nid: x\n\tkind: fact\n---\nbody\n",
    "bad anchor": b"---\nid: *nowhere\n---\nbody\n",
    "yaml list": b"---\n- a\n- b\n---\nbody\n",
    "bom": b"\xef\xbb\xbf---\nid: b\n---\nbody\n",
    "latin-1 bytes": b"---\nid: c\n---\ncaf\xe9\n",
    "unknown fields and comments": b"---\n# note\nid: u\nfoo: {a: 1}\ndate: 2024-01-02\n---\nx\n",
    "dashes in body": b"---\nid: d\n---\nabove\n---\nbelow\n",
    "fence with trailing space": b"--- \nid: e\n---\nbody\n",
}


@pytest.mark.parametrize("raw", TRICKY.values(), ids=TRICKY.keys())
def test_untouched_round_trip_is_byte_identical(raw: bytes) -> None:
    assert render(parse(raw)) == raw


def test_plugin_example_fields() -> None:
    m = parse(PLUGIN_EXAMPLE.encode())
    assert m.id == "pitfalls/sqlite-cjk-tokenizer"
    assert m.kind == "pitfall"
    assert m.load_when == ("SQLite", "FTS5", "分词")
    assert m.pinned is True
    assert m.sync is True
    assert m.created == 1791512014824
    assert m.body == "正文:上下文、决策、原因、根因。\n"
    assert m.problems == ()
    assert validate(m, "pitfalls/sqlite-cjk-tokenizer") == []


@pytest.mark.parametrize(
    ("raw", "code", "body_has"),
    [
        (TRICKY["unclosed fence"], "frontmatter.unclosed", "body without end"),
        (TRICKY["tabs in yaml"], "frontmatter.yaml", "body"),
        (TRICKY["bad anchor"], "frontmatter.yaml", "body"),
        (TRICKY["yaml list"], "frontmatter.shape", "body"),
        (TRICKY["latin-1 bytes"], "encoding", "caf\ufffd"),
    ],
)
def test_malformed_input_is_a_problem_not_an_exception(
    raw: bytes, code: str, body_has: str
) -> None:
    m = parse(raw)
    assert [p.code for p in m.problems] == [code]
    assert body_has in m.body
    assert render(m) == raw


def test_malformed_yaml_problem_names_the_line() -> None:
    m = parse(TRICKY["tabs in yaml"])
    assert m.problems[0].message == (
        "malformed YAML on line 3: YAML does not allow tabs; indent with spaces"
    )


def test_edit_keeps_unknown_fields_crlf_and_bom() -> None:
    raw = b"\xef\xbb\xbf---\r\nid: a\r\nfoo: bar\r\n---\r\nbody\r\n"
    edited = render(parse(raw).with_fields(summary="新的"))
    assert edited == "\ufeff---\r\nid: a\r\nfoo: bar\r\nsummary: 新的\r\n---\r\nbody\r\n".encode()
    again = parse(edited)
    assert again.meta == {"id": "a", "foo": "bar", "summary": "新的"}
    assert render(again) == edited


def test_removing_a_field_and_editing_the_body() -> None:
    m = parse(b"---\nid: a\npinned: true\n---\nold\n")
    out = render(m.with_fields(pinned=None).with_body("new\n"))
    assert out == b"---\nid: a\n---\nnew\n"


def test_rewriting_malformed_frontmatter_is_refused() -> None:
    m = parse(TRICKY["tabs in yaml"])
    with pytest.raises(MemorydError, match="frontmatter is malformed"):
        render(m.with_fields(kind="fact"))


def test_new_memory_renders_frontmatter_and_body() -> None:
    m = new_memory({"id": "facts/x", "kind": "fact", "load_when": ["部署"]}, "text")
    assert render(m) == "---\nid: facts/x\nkind: fact\nload_when:\n- 部署\n---\ntext\n".encode()


def test_body_without_frontmatter_is_a_memory_without_fields() -> None:
    m = parse(b"just text\n")
    assert m.meta == {} and m.body == "just text\n" and m.problems == ()


@pytest.mark.parametrize(
    ("meta", "expected"),
    [
        (
            {"updated": 1791512014},
            "updated looks like epoch seconds (1791512014); write milliseconds (1791512014000)",
        ),
        (
            {"created": "yesterday"},
            "created 'yesterday' is not a date: write epoch milliseconds or an ISO 8601 date "
            "(2024-03-05)",
        ),
        ({"pinned": "yes"}, "pinned should be true or false, got str"),
        ({"sync": 1}, "sync should be true or false, got int"),
        ({"load_when": "SQLite"}, "load_when should be a list of strings, got str"),
        ({"summary": 3}, "summary should be a string, got int"),
        ({"summary": "two\nlines"}, "summary should be one line"),
        ({"kind": "rules"}, "kind 'rules' is the name of a folder, not a kind: write kind: rule"),
        ({"kind": "proposals"},
         "kind 'proposals' is the name of a folder, not a kind: write kind: rule-proposal"),
        ({"id": "facts/other"}, "id 'facts/other' does not match its path (expected 'facts/x')"),
    ],
)
def test_validation_messages(meta: dict[str, object], expected: str) -> None:
    problems = validate(Memory(meta=meta), expected_id="facts/x")
    assert [p.message for p in problems] == [expected]


def test_lenient_accessors_read_wrong_types_as_absent() -> None:
    m = Memory(meta={"id": 5, "created": True, "pinned": "true", "sync": False})
    assert m.id is None and m.created is None and m.pinned is False and m.sync is False


def test_id_for_path() -> None:
    assert id_for_path("pitfalls/sqlite-cjk-tokenizer.md") == "pitfalls/sqlite-cjk-tokenizer"


@given(st.binary(max_size=300))
def test_parse_never_raises_and_round_trips(raw: bytes) -> None:
    assert render(parse(raw)) == raw


@given(
    st.dictionaries(
        st.text(st.characters(categories=["L", "N"]), min_size=1, max_size=8),
        st.one_of(st.text(max_size=20), st.integers(), st.booleans()),
        max_size=5,
    ),
    st.text(max_size=80).map(lambda s: s.replace("\r", "")),
)
def test_edited_memories_parse_back_to_what_was_set(meta: dict[str, object], body: str) -> None:
    rendered = render(Memory(meta=meta, body=body))
    back = parse(rendered)
    assert (back.meta, back.body) == (meta, body)


def test_a_body_that_starts_with_a_fence_stays_body() -> None:
    m = Memory(meta={}, body="---\nnot: frontmatter\n---\n")
    back = parse(render(m))
    assert (back.meta, back.body) == ({}, m.body)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("updated: 2024-03-05", 1_709_596_800_000),
        ("updated: 2024-03-05T10:00:00Z", 1_709_632_800_000),
        ("updated: 2024-03-05T10:00:00+02:00", 1_709_625_600_000),
        ("updated: 2024-03-05 10:00:00", 1_709_632_800_000),  # no zone: UTC
        ('updated: "2024-03-05T10:00:00Z"', 1_709_632_800_000),  # quoted: a string
        ("updated: '2024-03-05'", 1_709_596_800_000),
        ("updated: 1709632800000", 1_709_632_800_000),
    ],
)
def test_iso_dates_and_date_times_are_understood(line: str, expected: int) -> None:
    memory = parse(f"---\nsummary: s\n{line}\n---\nbody\n".encode())
    assert memory.updated == expected
    assert validate(memory) == []


def test_seconds_are_still_reported_and_nonsense_is_not_a_date() -> None:
    seconds = parse(b"---\ncreated: 1709632800\n---\n")
    assert [p.message for p in validate(seconds)] == [
        "created looks like epoch seconds (1709632800); write milliseconds (1709632800000)"
    ]
    assert parse(b"---\ncreated: next tuesday\n---\n").created is None
    impossible = parse(b"---\ncreated: 2024-13-45\n---\nbody\n")  # YAML's date, not a date
    assert impossible.created is None and impossible.body == "body\n"
    assert impossible.meta == {"created": "2024-13-45"} and not impossible.malformed
    assert [p.message for p in validate(impossible)] == [
        "created '2024-13-45' is not a date: write epoch milliseconds or an ISO 8601 date "
        "(2024-03-05)"
    ]


def test_a_date_that_does_not_exist_costs_only_its_own_field() -> None:
    """Hand-written: a comment, a flow list, yes for true, and February the 30th. The date
    stays the text it is; the id, kind, summary, load_when and pin are all read."""
    text = (
        "---\n# written by hand\nid: facts/hand\nkind: fact   # a fact\n"
        'summary: "Kafka 消费延迟: check lag first"\nload_when: [kafka, "消费者 lag"]\n'
        "pinned: yes\ncreated: 2023-02-30\nupdated: 2024-03-05 10:00:00\n---\nbody\n"
    )
    memory = parse(text.encode())
    assert memory.meta == {
        "id": "facts/hand", "kind": "fact", "summary": "Kafka 消费延迟: check lag first",
        "load_when": ["kafka", "消费者 lag"], "pinned": True, "created": "2023-02-30",
        "updated": dt.datetime(2024, 3, 5, 10, 0),
    }  # fmt: skip
    assert (memory.created, memory.problems) == (None, ())
    assert memory.updated == int(dt.datetime(2024, 3, 5, 10, tzinfo=dt.UTC).timestamp() * 1000)
    assert [(p.code, p.message) for p in validate(memory)] == [
        ("field.created", "created '2023-02-30' is not a date: write epoch milliseconds or an "
         "ISO 8601 date (2024-03-05)"),
    ]  # fmt: skip
    assert render(memory) == text.encode()  # untouched: byte for byte


_SPLIT_PIECES = st.sampled_from(
    ["---", "...", "\n", "\r", "\r\n", "\u2028", "\x85", "\x0c", "a: b", "x", " ", "--- ", "-- ",
     "\n---\n", "\n...", "\n---", "k: [1, 2]", "# c", "部署"]
)  # fmt: skip


@given(st.lists(_SPLIT_PIECES, max_size=14).map("".join), st.booleans())
def test_the_split_without_a_line_list_agrees_with_splitlines(text: str, fenced: bool) -> None:
    """A file whose only line break is "\\n" is split with str.find; any text splits as a
    line-by-line reading with str.splitlines() (which also breaks at \\r, \\x85, \\u2028...)."""
    from memoryd.memory import _split, _split_lines

    text = "---\n" + text if fenced else text
    assert _split(text) == _split_lines(text)


def test_line_breaks_other_than_newline_in_the_body_alone_keep_the_split_by_find(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Only the frontmatter and its closing fence are searched for \\r, \\f, \\x85, \\u2028...;
    a body holding them is still split with str.find, and a file without a first "---"
    line is no frontmatter at once, without a look at its text."""
    from memoryd import memory

    def refused(text: str) -> None:
        raise AssertionError("split line by line")

    monkeypatch.setattr(memory, "_split_lines", refused)
    text = "---\nkind: fact\n---\npage\x0cbreak\r\nline\u2028sep\x85\n"
    assert memory._split(text) == ({"kind": "fact"}, "page\x0cbreak\r\nline\u2028sep\x85\n", [])
    assert memory._split("# notes\r\nbody\x85\n") == ({}, "# notes\r\nbody\x85\n", [])
    monkeypatch.undo()
    assert memory._split("---\r\nkind: fact\r\n---\r\nbody\r\n")[:2] == ({"kind": "fact"}, "body\r\n")


@pytest.mark.parametrize(
    "raw",
    [
        b"---\nid: a\nload_when: [x, y]\n---\nbody\n",
        b"\xef\xbb\xbf---\r\nkind: fact\r\n---\r\nbody\r\n",
        b"---\nx: [\n---\nbroken\n",
        b"no frontmatter \xff\n",
    ],
)
def test_a_parse_for_the_index_reads_the_same_and_keeps_no_source(raw: bytes) -> None:
    """The index never renders what it reads: it keeps neither the bytes nor the copy of
    the frontmatter that render compares against, and reads everything else the same."""
    kept, lean = parse(raw), parse(raw, keep_source=False)
    assert lean == kept and lean.source is None and kept.source is not None
    assert (lean.meta, lean.body, lean.problems) == (kept.meta, kept.body, kept.problems)


class _Text(str):
    """A str subclass: validate takes it as a string, as isinstance does."""


class _Items(list):  # type: ignore[type-arg]
    """A list subclass, as a caller's own mapping might hold."""


_FIELD_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 10**13), st.floats(allow_nan=False),
    st.sampled_from(["a", "a\nb", " a \n", "2024-03-05", "next tuesday", _Text("t"), ""]),
    st.lists(st.one_of(st.text(max_size=3), st.integers(), st.none()), max_size=3),
    st.lists(st.text(max_size=3), max_size=3).map(_Items),
    st.sampled_from([1700000000, 1700000000000, True, 0, [], {"k": 1}]),
)  # fmt: skip
_FIELDS = ("id", "kind", "summary", "highlight", "superseded_by", "created", "updated",
           "pinned", "sync", "load_when", "supersedes", "other")  # fmt: skip


def _specified_problems(meta: dict[str, object], expected_id: str | None) -> list[str]:
    """The field problems a memory has, by the rules written plainly, field by field."""
    out = []
    for name in ("id", "kind", "summary", "highlight", "superseded_by"):
        if name in meta and not isinstance(meta[name], str):
            out.append(f"field.{name}")
    summary = meta.get("summary")
    if isinstance(summary, str) and "\n" in summary.strip():
        out.append("field.summary")
    for name in ("created", "updated"):
        value = meta.get(name, ...)
        if value is ...:
            continue
        if isinstance(value, int) and not isinstance(value, bool):
            wrong = 0 < value < 100_000_000_000  # epoch seconds
        else:
            wrong = epoch_ms(value) is None  # an ISO date reads, anything else does not
        if wrong:
            out.append(f"field.{name}")
    out += [f"field.{n}" for n in ("pinned", "sync") if n in meta and not isinstance(meta[n], bool)]
    for name in ("load_when", "supersedes"):
        value = meta.get(name, ...)
        strings = isinstance(value, list) and all(isinstance(v, str) for v in value)
        if value is not ... and not strings and not (name == "supersedes" and isinstance(value, str)):
            out.append(f"field.{name}")
    own = meta.get("id")
    if expected_id is not None and isinstance(own, str) and own != expected_id:
        out.append("field.id")
    return out


@given(st.dictionaries(st.sampled_from(_FIELDS), _FIELD_VALUES, max_size=8), st.sampled_from([None, "a", "b"]))
@example({"load_when": [1, "a"], "supersedes": _Items(["a"]), "pinned": 0}, None)
@example({"created": True, "updated": 1700000000, "summary": 5, "id": "b"}, "a")
@example({"supersedes": "a", "load_when": "a", "sync": None, "kind": _Text("k")}, None)
def test_validate_reports_each_field_as_specified(meta: dict[str, object], expected_id: str | None) -> None:
    """validate looks each field up once and passes a value of the usual type at once; a
    value of any other type (a bool for a date, an int subclass, a list with a number in
    it, a list subclass) gets the same problem as ever, in the same order."""
    memory = Memory(meta=dict(meta))
    assert [p.code for p in validate(memory, expected_id=expected_id)] == _specified_problems(
        meta, expected_id
    )


def test_a_key_written_twice_is_a_problem_naming_its_lines() -> None:
    """PyYAML keeps the last of two keys without a word: the first summary was hidden."""
    memory = parse(b"---\nkind: fact\nsummary: first\n# later:\nsummary: second\n---\nbody\n")
    assert memory.summary == "second" and not memory.malformed
    assert memory.problems == (
        Problem(
            "duplicate.summary",
            "'summary' is written 2 times (lines 3 and 5): YAML keeps only the last",
        ),
    )
    crlf = parse(b"---\r\npinned: true\r\nkind: fact\r\npinned: false\r\n---\r\n")
    assert [p.code for p in crlf.problems] == ["duplicate.pinned"]
    assert parse(b"---\nkind: fact\nnested:\n  kind: x\n---\n").problems == ()


@pytest.mark.parametrize(
    ("text", "body"),
    [
        ("--- \nkind: fact\n---\nbody\n", "body\n"),
        ("---\nkind: fact\n---  \nbody\n---\nrule below\n", "body\n---\nrule below\n"),
        ("---\t\nkind: fact\n...\t\nbody\n", "body\n"),
        ("--- \r\nkind: fact\r\n--- \r\nbody\r\n", "body\r\n"),
        ("---\nkind: fact\n--- ", ""),
    ],
)
def test_a_fence_may_end_in_spaces_and_tabs(text: str, body: str) -> None:
    memory = parse(text.encode())
    assert (memory.meta, memory.body, memory.problems) == ({"kind": "fact"}, body, ())
    assert render(memory) == text.encode()
    edited = parse(render(memory.with_fields(summary="s")))
    assert (edited.meta, edited.body) == ({"kind": "fact", "summary": "s"}, body)


def test_a_body_that_starts_with_a_spaced_fence_stays_body() -> None:
    m = Memory(meta={}, body="--- \nnot: frontmatter\n---\n")
    back = parse(render(m))
    assert (back.meta, back.body) == ({}, m.body)


def test_only_a_field_spelled_another_way_is_a_spelling_problem() -> None:
    memory = parse(b"---\nSUMMARY: s\nLoadWhen: [x]\nTags: a, b\nowner: me\nsync: true\n---\n")
    assert [(p.code, p.message) for p in validate(memory)] == [
        ("spelling.SUMMARY", "'SUMMARY:' is not read: memoryd reads 'summary:'"),
        ("spelling.LoadWhen", "'LoadWhen:' is not read: memoryd reads 'load_when:'"),
    ]
    assert validate(parse(b"---\nkind: my-Kind\n---\n")) == []  # a kind of one's own


@pytest.mark.parametrize("raw", ["---\r\nkind: fact\r\n---\r\nb\r\n".encode("utf-16"),
                                 b"\xfe\xff" + "---\nkind: fact\n---\nb\n".encode("utf-16-be")])
def test_utf16_with_its_byte_order_mark_is_read_and_never_rewritten(raw: bytes) -> None:
    memory = parse(raw)
    assert memory.meta == {"kind": "fact"} and memory.body.strip() == "b"
    assert [p.code for p in memory.problems] == ["encoding"]
    assert render(memory) == raw  # untouched: byte for byte
    with pytest.raises(MemorydError) as refused:
        render(memory.with_fields(summary="s"))
    assert refused.value.hint == "save it as UTF-8 first (iconv -f UTF-16 -t UTF-8)"


@pytest.mark.parametrize(
    ("line", "why", "fixed"),
    [
        ("summary: fix: do X", "holds ': ' without quotes, which YAML reads as another key",
         'summary: "fix: do X"'),
        ("summary: `make` is slow", "starts with '`', which YAML reserves unquoted",
         'summary: "`make` is slow"'),
        ("summary: @ana said so", "starts with '@', which YAML reserves unquoted",
         'summary: "@ana said so"'),
        ("summary: [wip] fix it", "starts with '[', which YAML reserves unquoted",
         'summary: "[wip] fix it"'),
        ("summary: *star", "starts with '*', which YAML reserves unquoted", 'summary: "*star"'),
        ("summary: !important", "starts with '!', which YAML reserves unquoted",
         'summary: "!important"'),
        (r"summary: see: C:\temp", "holds ': ' without quotes, which YAML reads as another key",
         r"summary: 'see: C:\temp'"),
        ("summary: say \"hi\": it's", "holds ': ' without quotes, which YAML reads as another key",
         "summary: 'say \"hi\": it''s'"),
    ],
)  # fmt: skip
def test_a_hand_written_value_yaml_refuses_gets_the_quoted_line_that_fixes_it(
    line: str, why: str, fixed: str
) -> None:
    """PyYAML said 'found character that cannot start any token' or 'did not find expected
    key'; the line to write instead is given, and it reads back as the text that was meant."""
    m = parse(f"---\nkind: fact\n{line}  # mine\n---\nbody\n".encode())
    assert [p.message for p in m.problems] == [
        f"malformed YAML on line 3: the value of 'summary' {why}; put it in quotes: {fixed}"
    ]
    assert parse(f"---\n{fixed}\n---\n".encode()).summary == line.removeprefix("summary: ")


@pytest.mark.parametrize(
    "yaml_lines",
    ["load_when:\n\t- deploy", "load_when:\n  -\tdeploy", "\tkind: fact", "meta:\n  a: 1\n\tb: 2"],
)
def test_a_tab_where_yaml_wants_spaces_is_said_so(yaml_lines: str) -> None:
    """Also after a list's dash, where the C loader's words name no character."""
    m = parse(f"---\nsummary: s\n{yaml_lines}\n---\nbody\n".encode())
    line = 3 + yaml_lines.count("\n")
    assert [p.message for p in m.problems] == [
        f"malformed YAML on line {line}: YAML does not allow tabs; indent with spaces"
    ]
