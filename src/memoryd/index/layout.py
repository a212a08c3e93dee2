"""What a file is in its root's layout: its id, type and scope id.

The one place the index asks about layouts. The plugin layout (the OpenCode
memory plugin's tree) has no type or scope id, and a file's id is its
frontmatter ``id`` or else its root-relative path without ``.md``. The layered
and claude layouts take id, type and scope id from :mod:`memoryd.layouts`.
"""

from __future__ import annotations

from dataclasses import dataclass

from memoryd import layouts
from memoryd.config.sections import RootConfig
from memoryd.memory import Memory, id_for_path


@dataclass(frozen=True)
class Identity:
    """What a root's layout says a file is: its id, and its type and scope if any."""

    id: str
    type: str | None = None
    scope_id: str | None = None


def identify(root: RootConfig, relative: str, memory: Memory) -> Identity:
    """The identity of the file at ``relative`` (root-relative POSIX path) in ``root``."""
    entry = layouts.entry_for(root.layout, relative, memory.meta)
    if entry is not None:
        return Identity(id=entry.id, type=entry.type, scope_id=entry.scope_id)
    if is_copy(relative):  # another version's bytes
        return Identity(id=id_for_path(relative))
    return Identity(id=memory.id or id_for_path(relative))


def is_copy(relative: str) -> bool:
    """Whether ``relative`` names a sync conflict copy (another version's exact bytes)."""
    if ".conflict-" not in relative:
        return False
    from memoryd.conflicts import is_conflict_copy  # only for such a name

    return is_conflict_copy(relative)


def expected_id(root: RootConfig, relative: str) -> str | None:
    """The id a memory at ``relative`` must carry, if any: a plugin root's path id. None
    for a conflict copy: it keeps the other version's bytes, ``id:`` line and all, until
    ``resolve`` uses them, so its id is no problem of its own (the conflict is)."""
    if root.layout != "plugin" or is_copy(relative):
        return None
    return id_for_path(relative)


def summary(root: RootConfig, memory: Memory) -> str | None:
    """What a memory says it is, in one line. The plugin layout's ``summary:``; a Claude
    Code memory's ``description:`` (else its ``name:``); a layered file's first heading,
    else its first line (those files have no frontmatter summary)."""
    if root.layout == "plugin":
        return memory.summary
    if root.layout == "claude":
        for key in ("description", "name"):
            text = memory.text(key)
            if text and text.strip():
                return " ".join(text.split())
    return memory.summary or _first_line(memory.body)


def _first_line(body: str) -> str | None:
    lines = [line.strip() for line in body.splitlines() if line.strip()]
    heading = next((line for line in lines if line.startswith("#")), None)
    line = heading.lstrip("#").strip() if heading else (lines[0] if lines else "")
    return line[:200] or None


def member(root: RootConfig, relative: str) -> bool:
    """Whether the file at ``relative`` is a memory of ``root``'s layout at all."""
    return layouts.belongs(root.layout, relative)
