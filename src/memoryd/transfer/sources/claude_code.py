"""Claude Code's auto memory: ``~/.claude/projects/<slug>/memory/``, and CLAUDE.md.

The folder holds ``MEMORY.md`` (the index Claude Code loads into every session: one
``- [Title](topic.md) — hook`` line per topic file, and sometimes a note written inline)
and the topic files, each with ``name``/``description`` and ``type`` (user, feedback,
project, reference; newer versions put it under ``metadata:`` with ``modified``, the
time it was written, which the memory keeps) in its frontmatter. Every
topic file is a memory; an inline bullet of MEMORY.md that links to no topic file is one
too. A file memoryd exported carries its memoryd kind, id and times under ``metadata:``,
so a round trip keeps them. A CLAUDE.md given as PATH is read section by section (``##``).
PATH may also be ``~/.claude/projects`` itself: every project folder's memory is read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memoryd.transfer import kinds
from memoryd.transfer.candidate import (
    Candidate,
    Reading,
    digest,
    entry,
    mtime_ms,
    read_markdown,
    read_text,
    sections,
    source_tag,
    summary_of,
    when,
)

NAME = "claude-code"
WHAT = "Claude Code memory folder (~/.claude/projects/<project>/memory) or CLAUDE.md"
INDEX = "MEMORY.md"
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+\.md)\)")
_BULLET = re.compile(r"^\s*[-*+]\s+(.*\S)\s*$")


def default_path(env: Mapping[str, str], cwd: Path) -> Path | None:
    """This project's folder: named after its main checkout, as Claude Code names it."""
    from memoryd.layouts import claude_projects_dir
    from memoryd.layouts.visible import claude_slug
    from memoryd.roots import canonical_toplevel

    top = canonical_toplevel(cwd) or cwd
    return claude_projects_dir(env) / claude_slug(top) / "memory"


def read(path: Path, env: Mapping[str, str]) -> Reading:
    reading = Reading()
    if path.is_file():
        _read_claude_md(path, env, reading)
    elif (path / INDEX).exists() or any(path.glob("*.md")):
        _read_folder(path, env, reading)
    else:  # ~/.claude/projects: every project's memory folder
        for folder in sorted(path.glob("*/memory")):
            _read_folder(folder, env, reading)
    return reading


def _read_folder(folder: Path, env: Mapping[str, str], reading: Reading) -> None:
    index = folder / INDEX
    if index.exists():
        text = read_text(index, reading)
        if text is not None:
            _read_index(index, text, env, reading)
    for path in sorted(folder.glob("*.md")):
        if path.name != INDEX:
            _read_topic(path, env, reading)


def _read_index(index: Path, text: str, env: Mapping[str, str], reading: Reading) -> None:
    """The bullets of MEMORY.md that are notes of their own (not links to a topic file)."""
    stamp = mtime_ms(index)
    for line in text.splitlines():
        match = _BULLET.match(line)
        if match is None or _LINK.search(line):
            continue
        note = match.group(1)
        summary = summary_of(note)
        body = note if summary != note else ""
        source = source_tag(NAME, index, env, digest(note))
        reading.candidates.append(entry(kinds.PREFERENCE, summary, body, stamp, source))


def _read_topic(path: Path, env: Mapping[str, str], reading: Reading) -> None:
    parsed = read_markdown(path, reading)
    if parsed is None:
        return
    meta, body = parsed
    found = meta.get("metadata")
    nested: dict[Any, Any] = found if isinstance(found, dict) else {}
    ours: dict[str, Any] = {k[len("memoryd_") :]: v for k, v in nested.items()
                            if isinstance(k, str) and k.startswith("memoryd_")}  # fmt: skip
    described = _text(meta.get("description")) or _text(meta.get("name"))
    summary = described or summary_of(body) or path.stem
    kind = _text(ours.get("kind")) or kinds.CLAUDE_CODE.get(_claude_type(meta, nested), "fact")
    stamp = when(nested.get("modified")) or mtime_ms(path)  # Claude Code stamps what it writes
    load_when = ours.get("load_when")
    reading.candidates.append(
        Candidate(
            kind=kinds.imported_kind(kind, summary), summary=summary, body=body,
            created=when(ours.get("created")) or stamp, updated=when(ours.get("updated")) or stamp,
            load_when=tuple(w for w in load_when if isinstance(w, str))
            if isinstance(load_when, list) else (),
            pinned=ours.get("pinned") is True,
            name=_text(ours.get("id")).rsplit("/", 1)[-1] or path.stem,
            source=_text(ours.get("source")) or source_tag(NAME, path, env),
        )
    )  # fmt: skip


def _claude_type(meta: Mapping[Any, Any], nested: Mapping[Any, Any]) -> str:
    value = meta.get("type", nested.get("type"))
    return value.strip().lower() if isinstance(value, str) else ""


def _text(value: Any) -> str:
    return " ".join(value.split()) if isinstance(value, str) else ""


def _read_claude_md(path: Path, env: Mapping[str, str], reading: Reading) -> None:
    """A CLAUDE.md: each ``##`` section is a candidate (the user picks with ``--only``)."""
    text = read_text(path, reading)
    if text is None:
        return
    stamp = mtime_ms(path)
    for heading, body in sections(text):
        if body.strip() and heading:
            source = source_tag(NAME, path, env, digest(heading))
            reading.candidates.append(
                entry(kinds.PREFERENCE, summary_of(heading), body, stamp, source, name=heading)
            )
