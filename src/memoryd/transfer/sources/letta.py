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
    Reading,
    entry,
    markdown_files,
    mtime_ms,
    read_markdown,
    source_tag,
    summary_of,
)

NAME = "letta"
WHAT = "Letta MemFS folder (~/.letta/agents/<agent-id>/memory)"
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
    parsed = read_markdown(path, reading)
    if parsed is None:
        return
    meta, body = parsed
    described = meta.get("description")
    label = rel.with_suffix("").as_posix()
    summary = summary_of(described) if isinstance(described, str) else ""
    summary = summary or summary_of(body) or label
    kind = kinds.PREFERENCE if rel.stem in _PREFERENCES else kinds.FACT
    source = source_tag(NAME, path, env)
    reading.candidates.append(
        entry(
            kind, summary, body, mtime_ms(path), source, pinned=core, name=label.replace("/", "-")
        )
    )
