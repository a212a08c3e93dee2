"""Changing a few frontmatter fields of a file people wrote, one line at a time.

A memory's frontmatter is the user's text: comments, flow lists, quoting, key order,
unknown fields and CRLF line ends are theirs. Re-serialising the whole mapping (what
:func:`memoryd.memory.render` does for a new memory) would lose all of that, so an
edit of an existing file (``remember --supersedes`` setting ``superseded_by:``,
``forget`` clearing a link, ``accept`` turning a proposal into a rule) replaces,
inserts or removes only the lines of the fields it changes and leaves every other
byte alone. The edited text is parsed again and must give exactly the intended
mapping; when the frontmatter's shape does not allow a line edit (no frontmatter at
all, a value spread over lines in a way that is not a plain block list) the memory is
rendered whole instead, which is what it was before.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memoryd.frontmatter import pyyaml_load
from memoryd.memory import BOM, CLOSING, Memory, is_fence, parse, render

_KEY_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)[ \t]*:(?:[ \t]|$)")
_ITEM_LINE = re.compile(r"([ \t]*)-[ \t]+")


@dataclass
class _Field:
    key: str
    start: int  # index in the line list of its `key:` line
    end: int  # one past its last line (continuations, block items)


def edit_fields(memory: Memory, changes: Mapping[str, Any]) -> bytes:
    """The file bytes of ``memory`` with ``changes`` applied (``None`` removes a field).

    Only the changed fields' lines differ from the file as it was read; everything
    else is kept byte for byte.
    """
    wanted = memory.with_fields(**changes)
    src = memory.source
    if src is None or memory.malformed:
        return render(wanted)
    edited = _edit(src.raw, changes, set(src.meta))
    if edited is not None and _means(edited, wanted):
        return edited
    return render(wanted)


def _means(data: bytes, wanted: Memory) -> bool:
    again = parse(data)
    return again.meta == wanted.meta and again.body == wanted.body and not again.malformed


def _edit(raw: bytes, changes: Mapping[str, Any], present: set[Any]) -> bytes | None:
    bom = raw.startswith(BOM)
    # A byte that is not UTF-8 (a Latin-1 "café") comes back as the same byte: the
    # replacement character parse() read it as is never written into the user's file.
    text = raw[len(BOM) if bom else 0 :].decode("utf-8", "surrogateescape")
    lines = text.splitlines(keepends=True)
    if not lines or not is_fence(lines[0]) or not lines[0].endswith("\n"):
        return None
    close = next((n for n, line in enumerate(lines[1:], 1) if is_fence(line, CLOSING)), None)
    if close is None:
        return None
    newline = "\r\n" if lines[0].endswith("\r\n") else "\n"
    front = lines[1:close]
    for key, value in changes.items():
        if key in present and key not in _fields(front):
            return None  # written in a way this editor does not find ("quoted": ...)
        result = _apply(front, key, value, newline)
        if result is None:
            return None
        front = result
    out = "".join([lines[0], *front, *lines[close:]])
    data = out.encode("utf-8", "surrogateescape")
    return BOM + data if bom else data


def _fields(front: list[str]) -> dict[str, _Field]:
    """Top-level keys and the lines each one spans (a repeated key: its first place)."""
    found: dict[str, _Field] = {}
    current: _Field | None = None
    for number, line in enumerate(front):
        match = _KEY_LINE.match(line)
        if match:
            current = _Field(match.group(1), number, number + 1)
            found.setdefault(current.key, current)
            continue
        body = line.strip()
        if not body or body.startswith("#"):
            continue  # a comment belongs to no field: it stays where it is
        if current is not None and line[:1] in (" ", "\t", "-"):
            current.end = number + 1  # a continuation or a block item of the current key
        else:
            current = None  # something this editor does not understand: leave it be
    return found


def _apply(front: list[str], key: str, value: Any, newline: str) -> list[str] | None:
    fields = _fields(front)
    spot = fields.get(key)
    if value is None:
        if spot is None:
            return front
        return front[: spot.start] + front[spot.end :]
    if spot is None:
        line = _one_line(key, value, newline)
        return None if line is None else [*front, line]
    if isinstance(value, list) and spot.end - spot.start > 1:
        items = _block_items(front, spot, value, newline)
        if items is not None:
            return items
    line = _one_line(key, value, newline)
    if line is None:
        return None
    ending = _ending(front[spot.end - 1], newline)
    if spot.end - spot.start == 1:
        line = line[: -len(newline)] + ending
    return [*front[: spot.start], line, *front[spot.end :]]


def _block_items(
    front: list[str], spot: _Field, value: list[Any], newline: str
) -> list[str] | None:
    """A block list with items removed or replaced: only those items' lines change."""
    after_colon = front[spot.start].split(":", 1)[1].strip()
    if after_colon and not after_colon.startswith("#"):
        return None
    rows = front[spot.start + 1 : spot.end]
    items: list[tuple[int, Any]] = []
    for number, line in enumerate(rows):
        if not line.strip() or line.strip().startswith("#"):
            continue
        match = _ITEM_LINE.match(line)
        if match is None:
            return None
        parsed = _item_value(line[match.end() :])
        if parsed is _NOTHING:
            return None
        items.append((number, parsed))
    old = [v for _, v in items]
    kept = list(rows)
    if len(old) == len(value):
        for (number, before), after in zip(items, value, strict=True):
            if before != after:
                prefix = _ITEM_LINE.match(rows[number])
                assert prefix is not None
                text = _scalar_text(after)
                if text is None:
                    return None
                kept[number] = prefix.group(0) + text + _ending(rows[number], newline)
    else:
        drop = _dropped(old, value)
        if drop is None:
            return None
        for position in sorted(drop, reverse=True):
            del kept[items[position][0]]
    return front[: spot.start + 1] + kept + front[spot.end :]


_NOTHING = object()


def _item_value(text: str) -> Any:
    import yaml

    try:
        return pyyaml_load(text)  # as memory.parse read the item (a bad date stays text)
    except yaml.YAMLError:
        return _NOTHING


def _dropped(old: list[Any], new: list[Any]) -> list[int] | None:
    """Positions of ``old`` to delete so that it becomes ``new`` (None: not a deletion)."""
    drop: list[int] = []
    at = 0
    for position, item in enumerate(old):
        if at < len(new) and new[at] == item:
            at += 1
        else:
            drop.append(position)
    return drop if at == len(new) else None


def _ending(line: str, newline: str) -> str:
    if line.endswith("\r\n"):
        return "\r\n"
    return "\n" if line.endswith("\n") else newline


def _one_line(key: str, value: Any, newline: str) -> str | None:
    """``key: value`` as one YAML line (a list in flow style), or None when it needs more."""
    import yaml

    flow = isinstance(value, list)
    dumped = yaml.safe_dump(
        {key: value}, default_flow_style=flow, allow_unicode=True, width=1_000_000
    )
    if flow:
        dumped = dumped.strip()
        if not (dumped.startswith("{") and dumped.endswith("}")):
            return None
        dumped = dumped[1:-1] + "\n"
    if dumped.count("\n") != 1:
        return None
    return dumped[:-1] + newline


def _scalar_text(value: Any) -> str | None:
    line = _one_line("k", value, "\n")
    return None if line is None else line[len("k: ") : -1]
