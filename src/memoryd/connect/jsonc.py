"""Edit a JSON or JSONC file as text: one member or item changed, every other byte kept.

A client's config is the user's file. Loading it with :mod:`json` and dumping it again
would drop its comments (OpenCode's ``opencode.jsonc``, Gemini CLI's settings), re-indent
it and re-escape its strings. Here the text is parsed into spans (where each value, member
and item starts and ends) and an edit replaces, inserts or removes exactly one span, in the
indentation and line ending the file already uses. Each edit is checked by parsing its
result: the data must be the old data with that one change.

The parser takes JSON plus what JSONC adds: ``//`` and ``/* */`` comments and trailing
commas. A text it cannot parse raises :class:`JsoncError` with the line and column.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

Keys = tuple[str, ...]  # the keys from the top object down to one member

_WS = " \t\r\n"
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_WORDS = {"true": True, "false": False, "null": None}


class JsoncError(ValueError):
    """The text is not JSON (nor JSONC): where, and what was expected."""

    def __init__(self, text: str, offset: int, problem: str) -> None:
        self.line = text.count("\n", 0, offset) + 1
        self.column = offset - (text.rfind("\n", 0, offset) + 1) + 1
        self.problem = problem
        super().__init__(f"line {self.line} column {self.column}: {problem}")


@dataclass
class Node:
    """A value's span ``[start, end)``; an object's members or an array's items."""

    kind: str  # object, array, scalar
    start: int
    end: int
    value: Any = None  # a scalar's value
    members: list[Member] = field(default_factory=list)
    items: list[Node] = field(default_factory=list)

    def data(self) -> Any:
        if self.kind == "object":
            return {m.key: m.value.data() for m in self.members}
        if self.kind == "array":
            return [item.data() for item in self.items]
        return self.value

    def member(self, key: str) -> Member | None:
        found = [m for m in self.members if m.key == key]
        return found[-1] if found else None  # a repeated key: the last one wins, as in JS


@dataclass
class Member:
    key: str
    start: int  # the key's opening quote
    value: Node


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0

    def fail(self, problem: str) -> JsoncError:
        return JsoncError(self.text, self.i, problem)

    def skip(self) -> None:
        """Whitespace and comments."""
        text, n = self.text, len(self.text)
        while self.i < n:
            if text[self.i] in _WS:
                self.i += 1
            elif text.startswith("//", self.i):
                end = text.find("\n", self.i)
                self.i = n if end < 0 else end
            elif text.startswith("/*", self.i):
                end = text.find("*/", self.i + 2)
                if end < 0:
                    raise self.fail("a /* comment is never closed with */")
                self.i = end + 2
            else:
                return

    def document(self) -> Node:
        if self.text.startswith("\ufeff"):
            self.i = 1
        self.skip()
        if self.i == len(self.text):
            raise self.fail("the file is empty; it must hold one JSON object")
        node = self.value()
        self.skip()
        if self.i != len(self.text):
            raise self.fail("more text after the end of the JSON value")
        return node

    def value(self) -> Node:
        if self.i >= len(self.text):
            raise self.fail("the file ends where a value was expected")
        char = self.text[self.i]
        if char == "{":
            return self.obj()
        if char == "[":
            return self.array()
        start = self.i
        if char == '"':
            text = self.string()
            return Node("scalar", start, self.i, text)
        for word, constant in _WORDS.items():
            if self.text.startswith(word, self.i):
                self.i += len(word)
                return Node("scalar", start, self.i, constant)
        number = _NUMBER.match(self.text, self.i)
        if number:
            self.i = number.end()
            return Node("scalar", start, self.i, json.loads(number.group()))
        raise self.fail(f"unexpected {char!r} where a value was expected")

    def string(self) -> str:
        start = self.i
        i, text, n = self.i + 1, self.text, len(self.text)
        while i < n:
            char = text[i]
            if char == "\\":
                i += 2
                continue
            if char == '"':
                break
            if char == "\n":
                raise self.fail("a string runs past the end of its line (a missing \")")
            i += 1
        else:
            raise self.fail("a string is never closed with \"")
        try:
            value: str = json.loads(text[start : i + 1])
        except json.JSONDecodeError as exc:
            self.i = start + exc.pos
            raise self.fail(f"a bad string: {exc.msg}") from exc
        self.i = i + 1
        return value

    def obj(self) -> Node:
        node = Node("object", self.i, self.i)
        self.i += 1
        while True:
            self.skip()
            if self.text.startswith("}", self.i):
                break
            if not self.text.startswith('"', self.i):
                raise self.fail("expected a \"key\" or '}' in an object")
            start = self.i
            key = self.string()
            self.skip()
            if not self.text.startswith(":", self.i):
                raise self.fail(f"expected ':' after the key {key!r}")
            self.i += 1
            self.skip()
            node.members.append(Member(key, start, self.value()))
            self.skip()
            if self.text.startswith(",", self.i):
                self.i += 1
            elif not self.text.startswith("}", self.i):
                raise self.fail("expected ',' or '}' after a member (a missing comma?)")
        self.i += 1
        node.end = self.i
        return node

    def array(self) -> Node:
        node = Node("array", self.i, self.i)
        self.i += 1
        while True:
            self.skip()
            if self.text.startswith("]", self.i):
                break
            node.items.append(self.value())
            self.skip()
            if self.text.startswith(",", self.i):
                self.i += 1
            elif not self.text.startswith("]", self.i):
                raise self.fail("expected ',' or ']' after an item (a missing comma?)")
        self.i += 1
        node.end = self.i
        return node


def parse(text: str) -> Node:
    """The text's spans; :class:`JsoncError` when it is not JSON or JSONC."""
    return _Parser(text).document()


def loads(text: str) -> Any:
    return parse(text).data()


# --- editing -------------------------------------------------------------------------


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _unit(text: str) -> str:
    """The file's indentation step: the first indented line's leading whitespace."""
    found = re.search(r"\n([ \t]+)\S", text)
    return found.group(1) if found else "  "


def _line_indent(text: str, offset: int) -> str:
    start = text.rfind("\n", 0, offset) + 1
    found = re.match(r"[ \t]*", text[start:offset])
    return found.group() if found else ""


def _render(value: Any, indent: str, unit: str, nl: str) -> str:
    return json.dumps(value, indent=unit, ensure_ascii=False).replace("\n", nl + indent)


def _container(root: Node, path: Keys) -> tuple[Node, int]:
    """The deepest object along ``path`` and how many keys of it exist."""
    node = root
    for depth, key in enumerate(path):
        member = node.member(key) if node.kind == "object" else None
        if member is None:
            return node, depth
        node = member.value
    return node, len(path)


def _find(root: Node, path: Keys) -> Node | None:
    node, found = _container(root, path)
    return node if found == len(path) else None


def _checked(new: str, expect: Any) -> str:
    if parse(new).data() != expect:  # a bug here must never reach the user's file
        raise AssertionError("a JSONC edit changed more than it meant to")
    return new


def _nested(path: Keys, value: Any) -> Any:
    for key in reversed(path):
        value = {key: value}
    return value


def _insert(text: str, node: Node, entry: str, compact_entry: str) -> str:
    """Add one member (or item) text at the end of the object (or array) ``node``."""
    nl, close = _newline(text), node.end - 1
    children = node.members or node.items
    multiline = "\n" in text[node.start : node.end]
    if not children:
        if not multiline:
            return text[: node.start + 1] + compact_entry + text[close:]
        inner = _line_indent(text, node.start) + _unit(text)
        head = text[: node.start + 1] + nl + inner + entry
        return head + nl + _line_indent(text, close) + text[close:]
    last = children[-1]
    last_end = last.value.end if isinstance(last, Member) else last.end
    after = _Parser(text)
    after.i = last_end
    after.skip()
    comma = text.startswith(",", after.i)
    pos = close
    while pos > last_end and text[pos - 1] in " \t\r\n":
        pos -= 1
    if not multiline:
        sep = "" if comma else ","
        return text[:last_end] + sep + text[last_end:pos] + " " + compact_entry + text[pos:]
    first = children[0]
    first_start = first.start
    inner = _line_indent(text, first_start)
    added = nl + inner + entry
    if comma:
        return text[:pos] + added + text[pos:]
    return text[:last_end] + "," + text[last_end:pos] + added + text[pos:]


def set_member(text: str, path: Keys, value: Any) -> str:
    """``text`` with the member at ``path`` set to ``value`` (objects made on the way)."""
    root = parse(text)
    node, found = _container(root, path)
    if found < len(path) and node.kind != "object":
        where = ".".join(path[:found]) if found else "the file"
        raise JsoncError(text, node.start, f"{where} is not an object ({{...}})")
    expect = root.data()
    cursor = expect
    for key in path[:-1]:
        cursor = cursor.setdefault(key, {})
    cursor[path[-1]] = value
    unit, nl = _unit(text), _newline(text)
    if found == len(path):
        if node.data() == value:
            return text
        rendered = _render(value, _line_indent(text, node.start), unit, nl)
        return _checked(text[: node.start] + rendered + text[node.end :], expect)
    key, rest = path[found], _nested(path[found + 1 :], value)
    children = node.members
    inner = (
        _line_indent(text, children[0].start) if children
        else _line_indent(text, node.start) + unit
    )  # fmt: skip
    entry = json.dumps(key, ensure_ascii=False) + ": " + _render(rest, inner, unit, nl)
    compact = json.dumps(key, ensure_ascii=False) + ": " + json.dumps(rest, ensure_ascii=False)
    return _checked(_insert(text, node, entry, compact), expect)


def append_item(text: str, path: Keys, value: Any) -> str:
    """``text`` with ``value`` added at the end of the array at ``path`` (made if missing)."""
    root = parse(text)
    node = _find(root, path)
    if node is None:
        return set_member(text, path, [value])
    if node.kind != "array":
        raise JsoncError(text, node.start, f"{'.'.join(path)} is not an array")
    expect = root.data()
    cursor = expect
    for key in path:
        cursor = cursor[key]
    cursor.append(value)
    unit, nl = _unit(text), _newline(text)
    inner = (
        _line_indent(text, node.items[0].start) if node.items
        else _line_indent(text, node.start) + unit
    )  # fmt: skip
    entry = _render(value, inner, unit, nl)
    return _checked(_insert(text, node, entry, json.dumps(value, ensure_ascii=False)), expect)


def replace_item(text: str, path: Keys, index: int, value: Any) -> str:
    root = parse(text)
    node = _find(root, path)
    assert node is not None and node.kind == "array"
    item = node.items[index]
    expect = root.data()
    cursor = expect
    for key in path:
        cursor = cursor[key]
    cursor[index] = value
    rendered = _render(value, _line_indent(text, item.start), _unit(text), _newline(text))
    return _checked(text[: item.start] + rendered + text[item.end :], expect)


def _cut(text: str, node: Node, index: int, start: int, end: int) -> str:
    """Remove child ``index`` of ``node`` (its text is ``[start, end)``) and one comma."""
    children: list[Any] = list(node.members or node.items)
    if len(children) == 1:  # the only one: the container is left empty
        return text[: node.start + 1] + text[node.end - 1 :]
    if index < len(children) - 1:  # up to the next one: the child, its comma, the gap
        return text[:start] + text[children[index + 1].start :]
    prev = children[index - 1]
    scan = _Parser(text)
    scan.i = prev.value.end if isinstance(prev, Member) else prev.end
    scan.skip()
    comma = scan.i  # the comma between the previous child and this last one
    gap = start
    while gap > comma + 1 and text[gap - 1] in _WS:
        gap -= 1
    scan.i = end
    scan.skip()
    stop = scan.i + 1 if text.startswith(",", scan.i) else end  # its own trailing comma
    return text[:comma] + text[comma + 1 : gap] + text[stop:]


def remove_member(text: str, path: Keys) -> str:
    """``text`` without the member at ``path`` (unchanged when there is none)."""
    root = parse(text)
    parent = _find(root, path[:-1])
    if parent is None or parent.kind != "object":
        return text
    member = parent.member(path[-1])
    if member is None:
        return text
    expect = root.data()
    cursor = expect
    for key in path[:-1]:
        cursor = cursor[key]
    del cursor[path[-1]]
    index = parent.members.index(member)
    new = _cut(text, parent, index, member.start, member.value.end)
    return _checked(new, expect)


def remove_item(text: str, path: Keys, index: int) -> str:
    root = parse(text)
    node = _find(root, path)
    assert node is not None and node.kind == "array"
    expect = root.data()
    cursor = expect
    for key in path:
        cursor = cursor[key]
    del cursor[index]
    item = node.items[index]
    return _checked(_cut(text, node, index, item.start, item.end), expect)
