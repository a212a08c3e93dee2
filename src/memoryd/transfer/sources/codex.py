"""Codex's memories: ``~/.codex/memories/`` (``$CODEX_HOME/memories``).

Codex's consolidation agent writes ``MEMORY.md``, the handbook, as blocks: newer
versions one ``# Task Group: <name>`` section per workspace or topic (``scope:``,
``applies_to: cwd=...``, then ``## Task N`` with ``### keywords`` and ``### learnings``),
older ones a YAML header per block (``rollout_summary_files``, ``description``,
``keywords``) between ``---`` lines followed by bullets. Each block is one memory, its
keywords the memory's load_when, the latest ``updated_at`` it cites its time.
``memory_summary.md`` holds "## User Profile" (a preference) and "## General Tips" (one
memory per bullet); its "## What's in Memory" is an index of the handbook and is skipped.
``raw_memories.md`` and ``rollout_summaries/`` are Codex's working inputs, not memories.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memoryd.transfer import kinds
from memoryd.transfer.candidate import (
    FIX_FILE,
    Reading,
    Unreadable,
    digest,
    entry,
    mtime_ms,
    read_text,
    sections,
    source_tag,
    summary_of,
    when,
)

NAME = "codex"
WHAT = "Codex memories folder (~/.codex/memories)"
HANDBOOK, SUMMARY = "MEMORY.md", "memory_summary.md"
_GROUP = "# Task Group:"
_UPDATED = re.compile(r"updated_at[=:]\s*`?([0-9TZ:.+-]{10,})")
_KEYWORDS = re.compile(r"^#{2,4}\s*keywords\s*$", re.IGNORECASE)


def default_path(env: Mapping[str, str], cwd: Path) -> Path | None:
    base = env.get("CODEX_HOME") or str(Path(env.get("HOME") or Path.home()) / ".codex")
    return Path(base) / "memories"


def read(path: Path, env: Mapping[str, str]) -> Reading:
    reading = Reading()
    folder = path if path.is_dir() else path.parent
    handbook, summary = folder / HANDBOOK, folder / SUMMARY
    if path.is_file() and path.name not in (HANDBOOK, SUMMARY):
        handbook = path
    if handbook.exists():
        _read_handbook(handbook, env, reading)
    if summary.exists() and (path.is_dir() or path == summary):
        _read_summary(summary, env, reading)
    return reading


def _read_handbook(path: Path, env: Mapping[str, str], reading: Reading) -> None:
    text = read_text(path, reading)
    if text is None:
        return
    stamp = mtime_ms(path)
    blocks = _groups(text) if _GROUP in text else _headed_blocks(text, path, reading)
    for title, body, keywords in blocks:
        summary = summary_of(title) or summary_of(body)
        if not summary:
            continue
        updated = max((when(s) or 0 for s in _UPDATED.findall(body)), default=0) or stamp
        source = source_tag(NAME, path, env, digest(title or body))
        reading.candidates.append(
            entry(kinds.FACT, summary, body, updated, source, load_when=keywords, name=title)
        )


def _groups(text: str) -> list[tuple[str, str, tuple[str, ...]]]:
    """``# Task Group:`` sections: (name, text, keywords)."""
    out = []
    for head, body in sections(text, level=1):
        if not head.startswith(_GROUP[2:]):
            continue
        out.append((head[len(_GROUP) - 2 :].strip(), body, _keywords_under_heading(body)))
    return out


def _keywords_under_heading(body: str) -> tuple[str, ...]:
    words: list[str] = []
    lines = body.splitlines()
    for i, line in enumerate(lines):
        if _KEYWORDS.match(line.strip()):
            for following in lines[i + 1 :]:
                if following.strip().startswith("#"):
                    break
                words += _split_keywords(following)
    return tuple(dict.fromkeys(words))


def _split_keywords(text: str) -> list[str]:
    return [w.strip(" `-*") for w in text.split(",") if w.strip(" `-*")]


def _headed_blocks(
    text: str, path: Path, reading: Reading
) -> list[tuple[str, str, tuple[str, ...]]]:
    """The older schema: ``---`` YAML header, then bullets, block after block."""
    import yaml

    parts = re.split(r"^---[ \t]*$", text, flags=re.MULTILINE)
    out = []
    if len(parts) < 3:  # no header at all: the whole handbook is one memory
        return [("", text.strip(), ())] if text.strip() else []
    for i in range(1, len(parts) - 1, 2):
        try:
            header: Any = yaml.safe_load(parts[i].removeprefix("\n")) or {}
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" on line {mark.line + 1} of its header" if mark is not None else ""
            why = getattr(exc, "problem", None) or "malformed YAML"
            reading.unreadable.append(
                Unreadable(
                    str(path), f"block {i // 2 + 1} has malformed YAML{where}: {why}", FIX_FILE
                )
            )
            continue
        header = header if isinstance(header, dict) else {}
        body = parts[i + 1].strip("\n")
        files = header.get("rollout_summary_files")
        cited = "\n".join(map(str, files)) if isinstance(files, list) else ""
        keywords = header.get("keywords")
        words = (
            _split_keywords(keywords)
            if isinstance(keywords, str)
            else ([str(k) for k in keywords] if isinstance(keywords, list) else [])
        )
        title = str(header.get("description") or "")
        full = body + (f"\n\nRollout summaries:\n{cited}" if cited else "")
        out.append((title, full, tuple(words)))
    return out


def _read_summary(path: Path, env: Mapping[str, str], reading: Reading) -> None:
    text = read_text(path, reading)
    if text is None:
        return
    stamp = mtime_ms(path)
    for heading, body in sections(text):
        lowered = heading.lower()
        if not body.strip() or not heading or lowered.startswith("what's in memory"):
            continue
        if lowered.startswith("general tips"):
            items = [line.lstrip("-*+ ").strip() for line in body.splitlines()
                     if line.lstrip().startswith(("-", "*", "+"))]  # fmt: skip
            for item in items:
                summary = summary_of(item)
                source = source_tag(NAME, path, env, digest(item))
                tip = item if item != summary else ""
                reading.candidates.append(entry(kinds.FACT, summary, tip, stamp, source))
            continue
        kind = kinds.PREFERENCE if lowered.startswith("user profile") else kinds.FACT
        source = source_tag(NAME, path, env, digest(heading))
        reading.candidates.append(
            entry(kind, f"Codex: {heading}", body, stamp, source, name=heading)
        )
