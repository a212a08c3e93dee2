"""Removing a memory: what `memoryd forget` and `memory_forget` do.

The id goes through the path guard before any file is touched. The file is
deleted (git history keeps it where the root is synced), links that pointed at
it (``supersedes`` and ``superseded_by`` in other memories) are cleared so none
dangles, and the index and compiled files are brought up to date. A memory it had
superseded is current again once its ``superseded_by`` is cleared, so recall returns it:
forget names it, since an outdated memory came back without a word otherwise.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memoryd import locate
from memoryd.agent import upkeep
from memoryd.app import App
from memoryd.config.sections import RootConfig
from memoryd.errors import Refused
from memoryd.frontmatter_edit import edit_fields
from memoryd.fsutil import atomic_write, fsync_dir
from memoryd.memory import Memory

RULE = "rule"


@dataclass(frozen=True)
class Forgotten:
    id: str
    path: Path
    root: Path
    unlinked: tuple[str, ...]  # ids of memories whose links to it were cleared
    # ids of memories whose frontmatter does not parse but names it: left as they are
    left: tuple[str, ...] = ()
    linked_from: tuple[str, ...] = ()  # ids of memories whose text links to its file
    current_again: tuple[str, ...] = ()  # ids of memories it superseded: recall returns them
    warnings: tuple[str, ...] = ()  # forgotten, but ROOT.md could not be compiled: why, the fix

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "path": str(self.path), "root": str(self.root),
            "unlinked": list(self.unlinked), "left": list(self.left),
            "linked_from": list(self.linked_from), "current_again": list(self.current_again),
        }  # fmt: skip


def forget(app: App, raw_id: str, scope: str | None = None, agent: bool = False) -> Forgotten:
    roots = locate.active_roots(app.config, app.cwd)
    found = locate.find(roots, raw_id, scope)
    if agent and found.memory.kind == RULE:
        raise Refused(
            f"refusing to forget {found.id!r}: it is an iron rule, and only a person removes those",
            hint=f"ask the user to run 'memoryd forget {found.id}'",
        )
    os.unlink(found.path)
    fsync_dir(found.path.parent)
    changed = [found.path]
    memories = locate.all_memories(found.root)  # parsed once: relinked, then searched for links
    again = superseded(memories, found.id)  # current again once relink clears their link
    relinked = relink_in(memories, found.id, None)
    changed += relinked
    warnings = tuple(upkeep.refresh_written(app, found.root, changed))
    unlinked = tuple(locate.path_id(found.root, path) for path in relinked)
    left, texts = leftover_links(memories, found.id, found.path)
    return Forgotten(
        found.id, found.path, found.root.path, unlinked,
        tuple(locate.path_id(found.root, path) for path in left),
        tuple(locate.path_id(found.root, path) for path in texts),
        tuple(locate.path_id(found.root, path) for path in again), warnings,
    )  # fmt: skip


def superseded(memories: list[tuple[Path, Memory]], new: str) -> list[Path]:
    """The memories that ``new`` superseded and relink can edit: with ``new`` gone they are
    current again (nothing else supersedes them: ``superseded_by`` holds one id)."""
    return [p for p, memory in memories if memory.superseded_by == new and not memory.malformed]


# A Markdown link or image's target: [text](target "title") or [text](<a target> "title").
_MD_LINK = re.compile(r"\]\(\s*(?:<([^>\n]+)>|([^)\s]+))(?:\s+[^)]*)?\)")


def leftover_links(
    memories: list[tuple[Path, Memory]], old: str, gone: Path
) -> tuple[list[Path], list[Path]]:
    """What still points at the forgotten memory ``old`` (at ``gone``) after relink, among
    the root's ``memories`` as they were before it (relink edits neither): the
    memories whose frontmatter does not parse but names it (relink cannot edit what it
    cannot read), and those whose text links to its file (``[see](../facts/a.md)``; a
    body is the person's, never edited). Both were left to dangle without a word."""
    word = re.compile(rf"(?<![\w/.-]){re.escape(old)}(?![\w/.-])")
    unparsed: list[Path] = []
    texts: list[Path] = []
    for path, memory in memories:
        if memory.malformed:
            head = path.read_bytes().decode("utf-8", "replace").split("\n---", 1)[0]
            if word.search(head):
                unparsed.append(path)
        if ".md" in memory.body and any(
            _leads_to(path, bracketed or bare, gone)
            for bracketed, bare in _MD_LINK.findall(memory.body)
        ):
            texts.append(path)
    return unparsed, texts


def _leads_to(source: Path, target: str, gone: Path) -> bool:
    """Does the relative link ``target`` in ``source`` name the file ``gone``?"""
    from urllib.parse import unquote, urlsplit

    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not parts.path.endswith(".md"):
        return False
    return os.path.normpath(source.parent / unquote(parts.path)) == os.path.normpath(gone)


def relink(root: RootConfig, old: str, new: str | None) -> list[Path]:
    """Point every link to ``old`` in ``root`` at ``new`` (None: remove it); the files written.

    Only the link lines change: the rest of each file is the user's, kept byte for byte.
    """
    return relink_in(locate.all_memories(root), old, new)


def relink_in(memories: list[tuple[Path, Memory]], old: str, new: str | None) -> list[Path]:
    """:func:`relink` over a root's memories already parsed (``locate.all_memories``)."""
    written = []
    for path, memory in memories:
        changes = link_changes(memory, old, new)
        if changes is not None:
            atomic_write(path, edit_fields(memory, changes))
            written.append(path)
    return written


def retarget(memory: Memory, old: str, new: str | None) -> Memory | None:
    """``memory`` with its links to ``old`` pointing at ``new`` (None: removed); None if none."""
    changes = link_changes(memory, old, new)
    return None if changes is None else memory.with_fields(**changes)


def link_changes(memory: Memory, old: str, new: str | None) -> dict[str, Any] | None:
    """The link fields of ``memory`` that must change for ``old`` to become ``new``."""
    changes: dict[str, Any] = {}
    if memory.superseded_by == old:
        changes["superseded_by"] = new
    raw = memory.meta.get("supersedes")
    if raw == old:
        changes["supersedes"] = new
    elif isinstance(raw, list) and old in raw:
        rest = [new if item == old else item for item in raw]
        changes["supersedes"] = [item for item in rest if item is not None] or None
    if not changes or memory.malformed:
        return None
    return changes
