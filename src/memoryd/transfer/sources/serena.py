"""Serena's memories: ``.serena/memories/*.md`` of a project and ``~/.serena/memories/global``.

Serena writes a memory as ``<name>.md`` (a ``topic/name`` in a subfolder), plain Markdown
or, in newer versions, with its own frontmatter (``serena_frontmatter_version: 1`` and a
``type``, values as JSON strings). The file name, ``_`` read as spaces, is the memory's
name; the first line of the text (or the frontmatter's ``description``) its summary. The
global folder's memories are named ``global/<name>``. Without PATH both the project's
folder and the global one are read.
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

NAME = "serena"
WHAT = "Serena memories folder (.serena/memories)"


def global_folder(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or Path.home()) / ".serena" / "memories" / "global"


def default_path(env: Mapping[str, str], cwd: Path) -> Path | None:
    from memoryd.roots import git_toplevel

    return (git_toplevel(cwd) or cwd) / ".serena" / "memories"


def read(path: Path, env: Mapping[str, str]) -> Reading:
    reading = Reading()
    folders = [path]
    if path.parts[-2:] == (".serena", "memories") and global_folder(env).is_dir():
        folders.append(global_folder(env))
    for folder in folders:
        is_global = folder.name == "global" and folder.parent.name == "memories"
        for file in markdown_files(folder):
            _read_one(file, folder, is_global, env, reading)
    return reading


def _read_one(
    path: Path, folder: Path, is_global: bool, env: Mapping[str, str], reading: Reading
) -> None:
    parsed = read_markdown(path, reading)
    if parsed is None:
        return
    meta, body = parsed
    name = path.relative_to(folder).with_suffix("").as_posix()
    if is_global:
        name = f"global/{name}"
    described = meta.get("description")
    title = name.rsplit("/", 1)[-1].replace("_", " ").replace("-", " ")
    summary = summary_of(described if isinstance(described, str) else body) or title
    source = source_tag(NAME, path, env)
    stamp, named = mtime_ms(path), name.replace("/", "-")
    reading.candidates.append(
        entry(kinds.FACT, summary, body, stamp, source, name=named, load_when=(title,))
    )
