"""The files of a root that stay on this device although git would see them.

Quarantined files (a secret, conflict markers), files over the size cap and
ignored files moved aside by a fast-forward never reach a commit; the compiled
files (index.md, ROOT.md, CONFLICTS.md) must not mention them either, or each
device compiles different bytes, every pull rewrites them, and the names and
summaries of held-back files travel after all. Sync writes the list, once per
cycle, to ``<git dir>/memoryd-held.json``; the compiler reads it (a few stats and
one small file, no git process).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Collection
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


def held(root: Path) -> frozenset[str]:
    """Root-relative paths of ``root``'s held-back files (empty outside a repository)."""
    git_dir = git_dir_of(root)
    if git_dir is None:
        return frozenset()
    try:
        data = json.loads((git_dir / FILE).read_text(encoding="utf-8"))
        paths = data.get(os.fsdecode(root), [])
    except (OSError, ValueError, AttributeError):
        return frozenset()
    return frozenset(p for p in paths if isinstance(p, str))


def hold(git_dir: Path, root: Path, paths: Collection[str]) -> bool:
    """Record ``paths`` as ``root``'s held-back files; True when the list changed."""
    file = git_dir / FILE
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            data = {}
    except (OSError, ValueError):
        data = {}
    key = os.fsdecode(root)
    wanted = sorted(set(paths))
    if data.get(key, []) == wanted:
        return False
    if wanted:
        data[key] = wanted
    else:
        data.pop(key, None)
    text = json.dumps(data, indent=1, sort_keys=True) + "\n"  # ASCII: \udce9 survives
    write_if_changed(file, text.encode("ascii"))
    return True
