"""Memory layouts other than the plugin's: where their roots are and what a path means.

Two foreign trees are served next to the plugin layout:

- ``layered``: MiMo Code's memory tree, ``<data>/memory/<scope>/<scope_id>/<key>.md``
  with scope ``global``, ``projects`` or ``sessions``; the type comes from the path.
- ``claude``: Claude Code's auto memory, ``~/.claude/projects/<slug>/memory/<name>.md``;
  the type comes from the frontmatter (``type:``, or ``type:`` under ``metadata:``).

Everything here is pure: functions of a root-relative POSIX path, parsed frontmatter
and an environment mapping. The index, the guard and the sync engine call it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memoryd.errors import ConfigError

if TYPE_CHECKING:
    from memoryd.config.sections import Config

MIMOCODE_HOME_ENV = "MIMOCODE_HOME"
CLAUDE_CONFIG_ENV = "CLAUDE_CONFIG_DIR"
LAYERED_SCOPES = ("global", "projects", "sessions")
CLAUDE_TYPES = ("user", "feedback", "project", "reference")
CLAUDE_SCOPE = "cc"
FREE = "free"
# Scopes of the layered tree that travel between devices (stale-risk rule: durable
# knowledge syncs, current-task state such as checkpoints and task progress does not).
LAYERED_SYNC_SCOPES = frozenset({"global", "projects"})

_TASK_KEY_RE = re.compile(r"^tasks/[^/]+/(progress|notes)$")


@dataclass(frozen=True)
class Identity:
    """What a file in a foreign layout is: its id, type, scope and scope id."""

    id: str
    type: str
    scope: str
    scope_id: str


# -- roots -------------------------------------------------------------------------


def mimocode_data_dir(env: Mapping[str, str]) -> Path:
    """MiMo Code's data folder: ``$MIMOCODE_HOME/data``, else ``<XDG data>/mimocode``."""
    home = env.get(MIMOCODE_HOME_ENV, "")
    if home:
        if not Path(home).is_absolute():
            raise ConfigError(
                f"{MIMOCODE_HOME_ENV} must be an absolute path, got {home!r}",
                hint=f"export {MIMOCODE_HOME_ENV}=$PWD/{home} or unset it",
            )
        return Path(home) / "data"
    xdg = env.get("XDG_DATA_HOME", "")
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "mimocode"
    return _user_home(env) / ".local" / "share" / "mimocode"


def layered_root(env: Mapping[str, str]) -> Path:
    """The layered memory tree: ``<data>/memory``."""
    return mimocode_data_dir(env) / "memory"


def configured_root(config: Config, env: Mapping[str, str]) -> Path:
    """The registered layered root, else the one MiMo Code would use now."""
    for root in config.roots:
        if root.layout == "layered":
            return root.path
    return layered_root(env)


def claude_projects_dir(env: Mapping[str, str]) -> Path:
    """Claude Code's per-project folders: ``$CLAUDE_CONFIG_DIR/projects``, else ``~/.claude``'s."""
    configured = env.get(CLAUDE_CONFIG_ENV, "")
    base = Path(configured) if configured and Path(configured).is_absolute() else None
    return (base or _user_home(env) / ".claude") / "projects"


def _user_home(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or str(Path.home()))


# -- the layered tree --------------------------------------------------------------


def layered_parts(relative: str) -> tuple[str, str, str] | None:
    """``(scope, scope_id, key)`` of a layered path, or None when it has no valid scope.

    ``global/MEMORY.md`` (the global memory) has an empty scope id; every other file
    sits at ``<scope>/<scope_id>/<key>.md`` where the key may hold folders
    (``tasks/T3/progress``).
    """
    parts = relative.split("/")
    if len(parts) < 2 or parts[0] not in LAYERED_SCOPES or not parts[-1].endswith(".md"):
        return None
    if len(parts) == 2:
        return (parts[0], "", parts[1][:-3]) if parts[0] == "global" else None
    key = "/".join(parts[2:])[:-3]
    return parts[0], parts[1], key


def layered_type(key: str) -> str:
    """The type of a layered file from its key (the path below ``<scope>/<scope_id>/``).

    ``MEMORY``/``memory-*`` (any case) is memory, ``checkpoint``/``checkpoint-*``
    is checkpoint, ``tasks/<id>/progress`` is progress, ``tasks/<id>/notes`` is
    notes, and everything else (the session's own ``notes``, too) is free.
    """
    lowered = key.lower()
    if lowered == "memory" or lowered.startswith("memory-"):
        return "memory"
    if key == "checkpoint" or key.startswith("checkpoint-"):
        return "checkpoint"
    match = _TASK_KEY_RE.match(key)
    if match:
        return match.group(1)
    return FREE


def layered_entry(relative: str) -> Identity | None:
    """The entry of a file in the layered tree (None: not part of the tree's shape)."""
    parts = layered_parts(relative)
    if parts is None:
        return None
    scope, scope_id, key = parts
    return Identity(id=relative[:-3], type=layered_type(key), scope=scope, scope_id=scope_id)


# -- Claude Code's memory folders --------------------------------------------------


def claude_parts(relative: str) -> tuple[str, str] | None:
    """``(slug, name)`` for ``<slug>/memory/<name>.md`` (None for any other path)."""
    parts = relative.split("/")
    if len(parts) != 3 or parts[1] != "memory" or not parts[2].endswith(".md"):
        return None
    return parts[0], parts[2][:-3]


def claude_type(meta: Mapping[Any, Any]) -> str:
    """``type:`` from the frontmatter, or ``type:`` under ``metadata:``; else free."""
    value = meta.get("type")
    nested = meta.get("metadata")
    if value is None and isinstance(nested, Mapping):
        value = nested.get("type")
    if isinstance(value, str) and value.strip().lower() in CLAUDE_TYPES:
        return value.strip().lower()
    return FREE


def claude_entry(relative: str, meta: Mapping[Any, Any]) -> Identity | None:
    """The entry of a Claude Code memory file (None outside ``*/memory/*.md``)."""
    parts = claude_parts(relative)
    if parts is None:
        return None
    slug, _name = parts
    return Identity(id=relative[:-3], type=claude_type(meta), scope=CLAUDE_SCOPE, scope_id=slug)


def entry_for(layout: str, relative: str, meta: Mapping[Any, Any]) -> Identity | None:
    """The entry for a file of a foreign layout; None for plugin roots or foreign shapes."""
    if layout == "layered":
        return layered_entry(relative)
    if layout == "claude":
        return claude_entry(relative, meta)
    return None


def every_file_belongs(layout: str) -> bool:
    """Whether :func:`belongs` holds for every path (a reconcile then asks it of none)."""
    return layout not in ("layered", "claude")


def belongs(layout: str, relative: str) -> bool:
    """Whether a root-relative path is a memory of this layout at all."""
    if layout == "layered":
        return layered_parts(relative) is not None
    if layout == "claude":
        return claude_parts(relative) is not None
    return True


# -- sync policy ---------------------------------------------------------------------


def syncable(layout: str, relative: str) -> bool:
    """Whether a file of a root may travel through git (the root's own policy aside).

    Layered: ``global/`` and ``projects/`` sync; ``sessions/`` (checkpoints, notes,
    task progress: current-task state) stays on this machine. Claude: only the
    ``<slug>/memory/*.md`` files, never the transcripts beside them. Plugin: every file
    (per-file ``sync: false`` is the frontmatter's business, not the path's).
    """
    if layout == "layered":
        first = relative.split("/", 1)[0]
        return first in LAYERED_SYNC_SCOPES or relative in (".gitignore",)
    if layout == "claude":
        return claude_parts(relative) is not None or relative == ".gitignore"
    return True


def gitignore_lines(layout: str, folders: tuple[str, ...] = ("*",)) -> tuple[str, ...]:
    """``.gitignore`` lines that keep a layout's local-only files out of commits.

    For ``claude``, only ``<folder>/memory/*.md`` of the given project folders (every
    folder with ``*``) is let through: never transcripts, todos or other projects.
    """
    if layout == "layered":
        return ("/sessions/",)
    if layout != "claude":
        return ()
    lines = ["/*", "!/.gitignore"]
    for folder in folders:
        lines += [f"!/{folder}/", f"/{folder}/*", f"!/{folder}/memory/", f"/{folder}/memory/*"]
        lines.append(f"!/{folder}/memory/*.md")
    return tuple(lines)
