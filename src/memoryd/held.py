"""The files of a root that stay on this device although git would see them.

Quarantined files (a secret, conflict markers), files over the size cap and
ignored files moved aside by a fast-forward never reach a commit; the compiled
files (index.md, ROOT.md, CONFLICTS.md) must not mention them either, or each
device compiles different bytes, every pull rewrites them, and the names and
summaries of held-back files travel after all. Sync writes the list, once per
cycle, to ``<git dir>/memoryd-held.json``; the compiler reads it (a few stats and
one small file, no git process).

Top-level, not in ``sync/``: sync writes the list and the compiler reads it; a leaf
both import keeps ``compile/`` and ``sync/`` out of a loop.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from memoryd.fsutil import write_if_changed

FILE = "memoryd-held.json"


def git_dir_of(root: Path) -> Path | None:
    """The git dir of the repository holding ``root`` (no git process), or None."""
    for folder in (root, *root.parents):
        dot = folder / ".git"
        if dot.is_dir():
            return dot
        if dot.is_file():
            with contextlib.suppress(OSError, ValueError):
                said = dot.read_text(encoding="utf-8").strip()
                if said.startswith("gitdir:"):
                    return (folder / said[len("gitdir:") :].strip()).resolve()
            return None
    return None


@dataclass(frozen=True)
class Held:
    """``root``'s held-back files: ``hidden`` are in no commit; ``committed`` are tracked
    files whose local text is held back, with the text of their last commit (what the
    other devices have, so what the compiled files must show)."""

    hidden: frozenset[str] = frozenset()
    committed: Mapping[str, bytes] = field(default_factory=dict)


def held(root: Path) -> Held:
    """``root``'s held-back files (none outside a repository)."""
    git_dir = git_dir_of(root)
    if git_dir is None:
        return Held()
    try:
        data = json.loads((git_dir / FILE).read_text(encoding="utf-8"))
        mine = data.get(os.fsdecode(root), {})
        paths = [p for p in mine.get("paths", []) if isinstance(p, str)]
        texts = {
            k: v.encode("utf-8", "surrogateescape")
            for k, v in mine.get("committed", {}).items()
            if isinstance(k, str) and isinstance(v, str)
        }
    except (OSError, ValueError, AttributeError):
        return Held()
    return Held(frozenset(p for p in paths if p not in texts), texts)


def hold(git_dir: Path, root: Path, paths: Collection[str], committed: Mapping[str, bytes]) -> bool:
    """Record ``root``'s held-back files; True when the record changed."""
    file = git_dir / FILE
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            data = {}
    except (OSError, ValueError):
        data = {}
    key = os.fsdecode(root)
    wanted = {
        "paths": sorted(set(paths)),
        "committed": {
            k: committed[k].decode("utf-8", "surrogateescape") for k in sorted(committed)
        },
    }
    if data.get(key, {"paths": [], "committed": {}}) == wanted:
        return False
    if wanted["paths"]:
        data[key] = wanted
    else:
        data.pop(key, None)
    text = json.dumps(data, indent=1, sort_keys=True) + "\n"  # ASCII: \udce9 survives
    write_if_changed(file, text.encode("ascii"))
    return True
