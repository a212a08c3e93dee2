"""What a file is in its root's layout: its id, type and scope id.

The one place that knows layouts. The plugin layout (the OpenCode memory
plugin's tree) has no type or scope id, and a file's id is its frontmatter
``id`` or else its root-relative path without ``.md``.
"""

from __future__ import annotations

from dataclasses import dataclass

from memoryd.config import RootConfig
from memoryd.memory import Memory, id_for_path


@dataclass(frozen=True)
class Identity:
    id: str
    type: str | None = None
    scope_id: str | None = None


def identify(root: RootConfig, relative: str, memory: Memory) -> Identity:
    """The identity of the file at ``relative`` (root-relative POSIX path) in ``root``."""
    return Identity(id=memory.id or id_for_path(relative))
