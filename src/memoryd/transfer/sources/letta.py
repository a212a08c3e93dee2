"""A Letta agent's MemFS: ``~/.letta/agents/<agent-id>/memory/``, a git repository of
Markdown files with a ``description`` in their frontmatter.

Files under ``system/`` are loaded into the agent's prompt on every turn: they come in
pinned. The rest (``reference/...``) are memories recalled when relevant. MemFS v2 keeps
the core files at the top with a ``MEMORY.md`` index there, which is the index of the
others, not a memory. ``skills/`` holds procedures (SKILL.md and scripts), not memories,
and ``.git`` is the repository. Without PATH every agent's memory folder is read.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from memoryd.transfer import kinds
from memoryd.transfer.candidate import (
    Candidate,
    Reading,
    front_and_body,
    markdown_files,
    mtime_ms,
    read_text,
    source_tag,
    summary_of,
)

NAME = "letta"
WHAT = "Letta MemFS folder (~/.letta/agents/<agent-id>/memory)"
FIX = "fix or remove the file, then import again (nothing was written for it)"
SYSTEM, INDEX = "system", "MEMORY.md"
_PREFERENCES = ("human", "persona", "preferences", "user")


def default_path(env: Mapping[str, str], cwd: Path) -> Path | None:
    return Path(env.get("HOME") or Path.home()) / ".letta" / "agents"


def read(path: Path, env: Mapping[str, str]) -> Reading:
    reading = Reading()
    folders = [path] if path.name != "agents" else sorted(path.glob("*/memory"))
    for folder in folders:
        v2 = (folder / INDEX).exists()  # MemFS v2: the top-level files are the core ones
        for file in markdown_files(folder, skip=("skills",)):
            rel = file.relative_to(folder)
            if rel.as_posix() != INDEX:
                core = rel.parts[0] == SYSTEM or (v2 and len(rel.parts) == 1)
                _read_one(file, rel, core, env, reading)
    return reading


def _read_one(path: Path, rel: Path, core: bool, env: Mapping[str, str], reading: Reading) -> None:
    text = read_text(path, reading, FIX)
    if text is None:
        return
    parsed = front_and_body(text, path, reading)
    if parsed is None:
        return
    meta, body = parsed
    described = meta.get("description")
    label = rel.with_suffix("").as_posix()
    summary = summary_of(described) if isinstance(described, str) else ""
    summary = summary or summary_of(body) or label
    kind = kinds.PREFERENCE if rel.stem in _PREFERENCES else kinds.FACT
    stamp = mtime_ms(path)
    reading.candidates.append(
        Candidate(
            kind=kinds.imported_kind(kind, summary), summary=summary, body=body, pinned=core,
            created=stamp, updated=stamp, name=label.replace("/", "-"),
            source=source_tag(NAME, path, env),
        )
    )  # fmt: skip
