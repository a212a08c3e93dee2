"""Compiled blocks inside a human file: find them by their marker comments, splice new ones in.

A block is a begin marker line, generated lines, and an end marker line::

    <!-- memoryd:begin rules (generated ...) -->
    ...
    <!-- memoryd:end rules -->

Everything outside the blocks is human text and comes back byte for byte; a line typed
inside a block that no compile writes is moved just below it, not dropped. Markers that
do not pair up (a begin without an end, an end without a begin, a block inside a block,
the same block twice) raise :class:`DamagedMarkers`; the caller leaves the file alone.

:func:`find_blocks` is the one parser: compile splices with it, inspect and the agent
tools read blocks with it (:func:`root_blocks`, the one reader of a root's ROOT.md
blocks), and sync strips and fills blocks around a line merge with it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)
_BEGIN = re.compile(r"<!-- memoryd:begin ([A-Za-z0-9_-]+)(?: [^\n]*?)? -->")
_END = re.compile(r"<!-- memoryd:end ([A-Za-z0-9_-]+) -->")


class DamagedMarkers(ValueError):
    """The marker comments of a file do not pair up; the message says where."""


@dataclass(frozen=True)
class Span:
    """A generated block's begin and end lines in a file."""

    name: str
    start: int  # index of the begin line
    end: int  # index of the end line (inclusive)


def begin_line(name: str, note: str = "") -> str:
    return f"<!-- memoryd:begin {name}{' ' + note if note else ''} -->"


def end_line(name: str) -> str:
    return f"<!-- memoryd:end {name} -->"


def find_blocks(lines: list[str]) -> dict[str, Span]:
    """The blocks in ``lines`` by name, or DamagedMarkers naming the 1-based line."""
    spans: dict[str, Span] = {}
    open_name: str | None = None
    open_at = 0
    for number, line in enumerate(lines):
        text = line.strip()
        begin, end = _BEGIN.fullmatch(text), _END.fullmatch(text)
        if begin:
            name = begin.group(1)
            if open_name is not None:
                raise DamagedMarkers(
                    f"line {number + 1}: block {name!r} begins inside block {open_name!r} "
                    f"(begun on line {open_at + 1}, never ended)"
                )
            if name in spans:
                raise DamagedMarkers(f"line {number + 1}: block {name!r} appears twice")
            open_name, open_at = name, number
        elif end:
            name = end.group(1)
            if open_name != name:
                raise DamagedMarkers(f"line {number + 1}: end of block {name!r} without its begin")
            spans[name] = Span(name, open_at, number)
            open_name = None
    if open_name is not None:
        raise DamagedMarkers(f"line {open_at + 1}: block {open_name!r} begins but never ends")
    return spans


def newline_of(text: str) -> str:
    first = text.find("\n")
    if first < 0:  # no line feed yet: a trailing lone CR becomes CRLF once we append
        return "\r\n" if text.endswith("\r") else "\n"
    return "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"


def splice(text: str, blocks: Mapping[str, str]) -> str:
    """Replace each named block of ``text`` whole; append the ones it lacks, in order.

    ``blocks`` maps a name to the block's full text (markers included, "\\n" line ends,
    ending with a newline). The file's own newline style is kept.
    """
    newline = newline_of(text)
    lines = text.splitlines(keepends=True)
    spans = find_blocks(lines)
    fresh = {name: block.replace("\n", newline) for name, block in blocks.items()}
    out: list[str] = []
    position = 0
    for span in sorted(spans.values(), key=lambda s: s.start):
        out.extend(lines[position : span.start])
        if span.name in fresh:
            hand = [line for line in lines[span.start + 1 : span.end] if _hand_written(line)]
            if hand:  # kept, just below the block: a person's line is never dropped
                out += [fresh[span.name], *hand]
            else:
                out.append(_keep_last_newline(fresh[span.name], lines[span.end], newline))
        else:  # a block of a name we do not compile: somebody else's, leave it
            out.extend(lines[span.start : span.end + 1])
        position = span.end + 1
    out.extend(lines[position:])
    result = "".join(out)
    for name, block in fresh.items():
        if name not in spans:
            result = _append(result, block, newline)
    return result


def _hand_written(line: str) -> bool:
    """A line inside a compiled block that no compile writes: not blank, a heading, a table
    row, an ``_italic note_`` or a ``- summary (`id`)`` item. Somebody typed it there (an
    iron rule added to the rules block by hand), and the regenerated block would drop it."""
    text = line.strip()
    return not (
        not text
        or text.startswith("## ")
        or (text.startswith("|") and text.endswith("|"))
        or (text.startswith("_") and text.endswith("_"))
        or (text.startswith("- ") and text.endswith("`)"))
    )


def _keep_last_newline(block: str, old_end: str, newline: str) -> str:
    """A block that ended the file without a final newline keeps ending that way."""
    if old_end.endswith(("\n", "\r")):
        return block
    return block[: -len(newline)] if block.endswith(newline) else block


def _append(text: str, block: str, newline: str) -> str:
    if not text:
        return block
    if not text.endswith("\n"):
        text += newline
    return text + newline + block


def block_lines(lines: list[str]) -> dict[str, list[str]]:
    """Each block's lines between its markers, by name (DamagedMarkers as find_blocks)."""
    return {name: lines[s.start + 1 : s.end] for name, s in find_blocks(lines).items()}


def root_blocks(root: Path) -> dict[str, list[str]]:
    """The compiled blocks of the ROOT.md in the root folder ``root``: name → the lines
    between its markers; none when the file is missing or unreadable, or its markers are
    damaged (logged: inspect reports damaged markers on its own)."""
    from memoryd.roots import ROOT_FILE

    try:
        lines = (root / ROOT_FILE).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        log.debug("no ROOT.md blocks for %s: %s", root, exc)
        return {}
    try:
        return block_lines(lines)
    except DamagedMarkers as exc:
        log.warning("%s: damaged markers, outline left out: %s", root / ROOT_FILE, exc)
        return {}


def extract(text: str) -> dict[str, str]:
    """The inner text of every block (markers excluded); empty when markers are damaged."""
    try:
        found = block_lines(text.splitlines(keepends=True))
    except DamagedMarkers:
        return {}
    return {name: "".join(lines) for name, lines in found.items()}


def strip(text: str) -> tuple[str, dict[str, str]]:
    """``text`` with every block emptied (markers kept), and the blocks' bodies by name.

    Damaged markers: the whole text is human text (nothing stripped).
    """
    lines = text.splitlines(keepends=True)
    try:
        spans = find_blocks(lines)
    except DamagedMarkers:
        return text, {}
    inner = {i for s in spans.values() for i in range(s.start + 1, s.end)}
    kept = "".join(line for i, line in enumerate(lines) if i not in inner)
    return kept, {name: "".join(lines[s.start + 1 : s.end]) for name, s in spans.items()}


def fill(text: str, bodies: Mapping[str, str]) -> str:
    """Put the bodies back into the blocks of a :func:`strip`-ped text (the inverse of strip).

    A block without a body stays as it is; damaged markers leave the text unchanged.
    """
    lines = text.splitlines(keepends=True)
    try:
        spans = find_blocks(lines)
    except DamagedMarkers:
        return text
    after = {s.start: bodies.get(name, "") for name, s in spans.items()}
    return "".join(line + after.get(i, "") for i, line in enumerate(lines))
