"""Pending conflicts (the conflict copies on disk), CONFLICTS.md, and settling one.

A conflict is pending for as long as its copy exists, on every device (copies
are committed and pushed), so the list is read from the files, not from a
database. ``resolve --keep``: ``remote`` drops the copy, ``local`` puts the
copy's text at the path, ``both`` keeps the copy as a memory of its own.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from memoryd.config.sections import Config
from memoryd.conflicts import (
    CopyName,
    parse_copy_name,
    render_conflicts,
    strip_copy_fields,
)
from memoryd.errors import MemorydError, UsageError
from memoryd.fsutil import atomic_write, fsync_dir, write_if_changed
from memoryd.held import held
from memoryd.memory import id_for_path, parse, render
from memoryd.roots import CONFLICTS_FILE, relative_id, walk_files

KEEP = ("local", "remote", "both")


@dataclass(frozen=True)
class Conflict:
    root: Path
    copy: str  # root-relative path of the conflict copy
    name: CopyName

    @property
    def id(self) -> str:
        return id_for_path(self.copy)

    def to_json(self) -> dict[str, str | bool]:
        return {
            "id": self.id,
            "root": str(self.root),
            "path": self.name.original,
            "copy": self.copy,
            "device": self.name.device,
            "time": self.name.time,
            "path_exists": (self.root / self.name.original).exists(),
        }


def conflicts_in(root: Path) -> list[Conflict]:
    found = []
    if not root.is_dir():
        return []
    # names as strings first: a Path for each of 100k names was most of a sync cycle's CPU
    named = (w for w in walk_files(root) if ".conflict-" in posixpath.basename(w))
    for path in sorted(map(Path, named)):
        rel = relative_id(root, path)
        name = parse_copy_name(rel)
        if name is not None:
            found.append(Conflict(root, rel, name))
    return found


def all_conflicts(config: Config) -> list[Conflict]:
    return [c for root in config.roots for c in conflicts_in(root.path)]


def conflicts_may_differ(root: Path, changed: Iterable[str]) -> bool:
    """Could CONFLICTS.md be behind the copies on disk, given the root-relative paths git
    found changed (``git status``: a copy made, edited or deleted is one of them)?

    Only then does a cycle walk the root for copies: the walk read every name (100k
    memories, most of a one-edit cycle's own CPU). While CONFLICTS.md exists it is always
    walked, as before (a copy kept out of git, private to this device, is no change to
    git); without it, a copy git ignores and nobody synced is the one it misses.
    """
    if (root / CONFLICTS_FILE).exists():
        return True
    return any(p == CONFLICTS_FILE or ".conflict-" in posixpath.basename(p) for p in changed)


def write_conflicts_file(root: Path) -> bool:
    """Rewrite (or remove) the root's CONFLICTS.md; True when it changed."""
    hidden = held(root).hidden  # a copy that stays on this device is not listed for others
    data = render_conflicts([(c.copy, c.name) for c in conflicts_in(root) if c.copy not in hidden])
    file = root / CONFLICTS_FILE
    if data is None:
        if file.exists():
            file.unlink()
            fsync_dir(root)
            return True
        return False
    return write_if_changed(file, data)


def find(config: Config, conflict_id: str) -> Conflict:
    everything = all_conflicts(config)
    wanted = conflict_id.removesuffix(".md")
    matches = [c for c in everything if wanted in (c.id, c.copy)]
    if not matches:
        matches = [
            c for c in everything if wanted in (id_for_path(c.name.original), c.name.original)
        ]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise MemorydError(
            f"no sync conflict with id {conflict_id!r}",
            hint="'memoryd conflicts' lists the pending ones with their ids",
        )
    ids = ", ".join(c.id for c in matches)
    raise UsageError(
        f"{conflict_id!r} matches {len(matches)} conflicts: {ids}",
        hint="pass the id of one conflict copy",
    )


def resolve(conflict: Conflict, keep: str) -> str:
    """Settle one conflict on disk; what was done, in words."""
    root, copy = conflict.root, conflict.root / conflict.copy
    original = conflict.name.original
    if keep == "remote":
        copy.unlink()
        done = f"kept the text at {original}; removed {conflict.copy}"
    elif keep == "local":
        atomic_write(root / original, strip_copy_fields(copy.read_bytes(), original))
        copy.unlink()
        done = f"put {conflict.name.device}'s text from {conflict.copy} at {original}"
    elif keep == "both":
        target = _both_name(conflict)
        data = strip_copy_fields(copy.read_bytes(), original)
        memory = parse(data)
        if memory.id is not None and not memory.malformed:
            data = render(memory.with_fields(id=id_for_path(target)))
        atomic_write(root / target, data)
        copy.unlink()
        done = f"kept both: {original} and {target}"
    else:
        raise UsageError(f"--keep must be one of {', '.join(KEEP)}, got {keep!r}")
    fsync_dir(copy.parent)
    write_conflicts_file(root)
    return done


def resolve_all(
    roots: list[Path], keep: str
) -> tuple[list[tuple[Conflict, str]], list[tuple[Conflict, str]]]:
    """Settle every pending conflict of ``roots`` with ``keep``: (settled, left pending).

    ``local`` puts a copy's text at its path, so a path with several copies would keep
    only the last one: those are left pending (say ``both``, or settle them one by one).
    """
    settled: list[tuple[Conflict, str]] = []
    left: list[tuple[Conflict, str]] = []
    for root in roots:
        pending = sorted(conflicts_in(root), key=lambda c: c.copy)
        per_path: dict[str, int] = {}
        for c in pending:
            per_path[c.name.original] = per_path.get(c.name.original, 0) + 1
        for c in pending:
            if keep == "local" and per_path[c.name.original] > 1:
                why = (
                    f"{c.name.original} has {per_path[c.name.original]} conflict copies and "
                    "only one text fits at the path: settle them one by one, or --keep both"
                )
                left.append((c, why))
                continue
            settled.append((c, resolve(c, keep)))
    return settled, left


def _both_name(conflict: Conflict) -> str:
    folder, name = posixpath.split(conflict.name.original)
    stem, dot, ext = name.rpartition(".")
    if not dot:
        stem, ext = name, ""
    base = f"{stem}-{conflict.name.device}"
    candidate = posixpath.join(folder, f"{base}.{ext}" if ext else base)
    number = 2
    while (conflict.root / candidate).exists():
        candidate = posixpath.join(folder, f"{base}-{number}.{ext}" if ext else f"{base}-{number}")
        number += 1
    return candidate
