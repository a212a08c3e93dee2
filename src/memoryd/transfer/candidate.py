"""The neutral shape every source reader produces, and the small helpers they share.

A reader turns a source's files into candidates and problems: it never writes, never
decides ids and never checks for secrets or duplicates (the import's gate does, once,
for every source alike). A file it cannot parse is one :class:`Unreadable` naming the
file and the fix, and the rest of the source is still read.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memoryd.memory import MIN_EPOCH_MS, epoch_ms
from memoryd.transfer.kinds import imported_kind

SUMMARY_MAX = 160  # a summary longer than this is cut at a word and its text kept in the body
FIX_FILE = "fix or remove the file, then import again (nothing was written for it)"


@dataclass(frozen=True)
class Candidate:
    """One memory as a source holds it, in memoryd's terms.

    ``source`` says where it came from (``claude-mem:~/.claude-mem/claude-mem.db#obs-12``)
    and is written as the memory's ``source:`` field; an import finds the memories it
    wrote before by it. ``id`` is set only by sources that carry memoryd ids (jsonl).
    ``project`` is the project a multi-project source filed it under (claude-mem).
    ``extra`` holds further frontmatter fields to keep (jsonl: ``highlight``, ``cites``...).
    ``body`` is the text without the newline a file ends with (the file gets it back).
    """

    kind: str
    summary: str
    body: str = ""
    source: str | None = None
    id: str | None = None
    created: int | None = None
    updated: int | None = None
    load_when: tuple[str, ...] = ()
    pinned: bool = False
    supersedes: str | None = None
    name: str | None = None  # the source's own name for it: the file name the id is made of
    project: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Unreadable:
    """A source file the reader could not parse: one line naming it, and the fix."""

    path: str
    problem: str
    fix: str

    def line(self) -> str:
        return f"{self.path}: {self.problem}; {self.fix}"


@dataclass
class Reading:
    """What a reader found: the candidates, in the source's order, and the unreadable files."""

    candidates: list[Candidate] = field(default_factory=list)
    unreadable: list[Unreadable] = field(default_factory=list)


def entry(
    kind: str, summary: str, body: str, stamp: int | None, source: str, **more: Any
) -> Candidate:
    """A candidate of ``kind`` as the import takes it (a rule-like one as a proposal, see
    :func:`memoryd.transfer.kinds.imported_kind`), created and updated at ``stamp``."""
    return Candidate(
        kind=imported_kind(kind, summary), summary=summary, body=body, created=stamp,
        updated=stamp, source=source, **more,
    )  # fmt: skip


def shown(path: Path, env: Mapping[str, str]) -> str:
    """``path`` as a ``source:`` names it: under the home folder as ``~/...``, so the same
    source imported on two machines says the same thing."""
    home = env.get("HOME", "")
    text = str(path)
    if home and (text == home or text.startswith(home.rstrip("/") + "/")):
        return "~" + text[len(home.rstrip("/")) :]
    return text


def source_tag(source: str, path: Path, env: Mapping[str, str], fragment: str = "") -> str:
    """``<source>:<path>[#<fragment>]``: where one candidate came from."""
    tag = f"{source}:{shown(path, env)}"
    return f"{tag}#{fragment}" if fragment else tag


def digest(text: str) -> str:
    """A short stable fragment for a piece of text that has no name of its own."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:10]


def one_line(text: str) -> str:
    """``text`` on one line, spaces collapsed."""
    return " ".join(text.split())


def summary_of(text: str, limit: int = SUMMARY_MAX) -> str:
    """A summary from free text: its first non-empty line without Markdown's heading or list
    marks, cut at a word within ``limit`` characters (with an ellipsis)."""
    for raw in text.splitlines():
        line = one_line(re.sub(r"^\s*(#+|[-*+]|\d+[.)])\s+", "", raw)).strip("*_ ")
        if line:
            break
    else:
        return ""
    if len(line) <= limit:
        return line
    cut = line[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip() + "…"


def when(value: Any) -> int | None:
    """Epoch milliseconds from what sources write: epoch ms or seconds, ISO 8601 text."""
    if isinstance(value, float) and not isinstance(value, bool):
        value = int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value.strip())
    if isinstance(value, str) and value.strip().endswith("Z"):
        value = value.strip()[:-1] + "+00:00"
    stamp = epoch_ms(value)
    if stamp is None or stamp <= 0:
        return None
    return stamp * 1000 if stamp < MIN_EPOCH_MS else stamp


def mtime_ms(path: Path) -> int | None:
    """A file's modification time in epoch milliseconds (None when it cannot be read)."""
    try:
        return os.stat(path).st_mtime_ns // 1_000_000
    except OSError:
        return None


def read_text(path: Path, reading: Reading, fix: str = FIX_FILE) -> str | None:
    """``path`` as UTF-8 text, or None with the file recorded as unreadable."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        reading.unreadable.append(Unreadable(str(path), exc.strerror or str(exc), fix))
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        reading.unreadable.append(
            Unreadable(
                str(path), f"not UTF-8 text (byte 0x{data[exc.start]:02x} at {exc.start})",
                "convert it to UTF-8 (e.g. iconv -f latin1 -t utf-8) and import again",
            )
        )  # fmt: skip
        return None


def front_and_body(text: str, path: Path, reading: Reading) -> tuple[dict[Any, Any], str] | None:
    """The frontmatter mapping and body of a Markdown file, read as memoryd reads memories;
    None (and the file recorded) when its frontmatter does not parse."""
    from memoryd.memory import parse

    memory = parse(text.encode("utf-8"))
    broken = [p.message for p in memory.problems if p.code.startswith("frontmatter")]
    if broken:
        reading.unreadable.append(
            Unreadable(
                str(path), broken[0],
                "fix the YAML between its '---' lines (or remove them) and import again",
            )
        )  # fmt: skip
        return None
    return dict(memory.meta), memory.body.removesuffix("\n")  # a body has no final newline


def read_markdown(path: Path, reading: Reading) -> tuple[dict[Any, Any], str] | None:
    """A Markdown file's frontmatter and body, or None with the file recorded as unreadable."""
    text = read_text(path, reading)
    return None if text is None else front_and_body(text, path, reading)


def markdown_files(folder: Path, skip: tuple[str, ...] = ()) -> list[Path]:
    """Every ``*.md`` under ``folder`` (sorted; hidden folders and ``skip``'s names left out)."""
    found = []
    for dirpath, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in skip)
        found += [Path(dirpath, f) for f in sorted(files) if f.endswith(".md")]
    return found


def sections(text: str, level: int = 2) -> list[tuple[str, str]]:
    """``text`` cut at its headings of ``level`` (``##``): (heading, text below it). The text
    before the first heading comes first with an empty heading. Fenced code is not cut."""
    mark = "#" * level + " "
    out: list[tuple[str, list[str]]] = [("", [])]
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        if not fenced and line.startswith(mark):
            out.append((line[len(mark) :].strip(), []))
        else:
            out[-1][1].append(line)
    return [(head, "\n".join(lines).strip("\n")) for head, lines in out]
