"""A Cline (or Roo Code) memory bank: the ``memory-bank/`` folder of a project.

Cline's custom instructions keep six core files (projectbrief, productContext,
activeContext, systemPatterns, techContext, progress) and any further ``*.md`` the agent
adds. Each file is split at its ``##`` headings and each section is one memory, summarised
as "<file's title>: <heading>"; systemPatterns holds decisions, the rest facts. Text
before a file's first ``##`` is a memory of its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from memoryd.transfer import kinds
from memoryd.transfer.candidate import (
    Reading,
    digest,
    entry,
    markdown_files,
    mtime_ms,
    read_text,
    sections,
    source_tag,
    summary_of,
)

NAME = "cline"
WHAT = "Cline memory bank folder (memory-bank/)"
CORE = (
    "projectbrief", "productContext", "activeContext", "systemPatterns", "techContext",
    "progress",
)  # fmt: skip


def default_path(env: Mapping[str, str], cwd: Path) -> Path | None:
    from memoryd.roots import git_toplevel

    return (git_toplevel(cwd) or cwd) / "memory-bank"


def read(path: Path, env: Mapping[str, str]) -> Reading:
    reading = Reading()
    files = [path] if path.is_file() else markdown_files(path)
    order = {name: i for i, name in enumerate(CORE)}
    for file in sorted(files, key=lambda f: (order.get(f.stem, len(CORE)), f.as_posix())):
        _read_file(file, env, reading)
    return reading


def _read_file(path: Path, env: Mapping[str, str], reading: Reading) -> None:
    text = read_text(path, reading)
    if text is None:
        return
    stamp = mtime_ms(path)
    title = path.stem
    first, _, rest = text.lstrip("\n").partition("\n")
    if first.startswith("# "):  # the file's own title
        title, text = first[2:].strip(), rest
    kind = kinds.CLINE.get(path.stem, kinds.FACT)
    for heading, body in sections(text):
        if not body.strip():
            continue
        summary = summary_of(f"{title}: {heading}" if heading else f"{title}: {summary_of(body)}")
        part = heading or "overview"
        source = source_tag(NAME, path, env, digest(part))
        reading.candidates.append(
            entry(kind, summary, body, stamp, source, name=f"{path.stem}-{part}")
        )
