"""Memory roots on disk: creating one, finding a project's, walking its files."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from memoryd import rootfs
from memoryd.errors import PathError
from memoryd.fsutil import atomic_write, private_dirs
from memoryd.rootfs import SKIP_DIRS, STATE_FILE, is_memory_name

CATEGORIES = ("rules", "preferences", "decisions", "pitfalls", "facts")
ROOT_FILE = "ROOT.md"
INDEX_FILE = "index.md"
CONFLICTS_FILE = "CONFLICTS.md"  # written by sync: the conflict copies waiting to be merged
# Editor swap/backup/lock files and our own temp files: never memories.
_TEMP_RE = re.compile(
    r"(^\.#)|(^#.*#$)|(~$)|(\.sw[a-p]$)|(^4913$)|(\.tmp$)|(\.kate-swp$)|(^\.memoryd-tmp-)"
    r"|(\.bak$)|(\.orig$)|(^\.~lock\.)|(\.crswap$)|(^\.goutputstream-)",
)

GOAL_HEADING = "## Current goal"
GOAL_PLACEHOLDER = (
    "(Write here what you are working toward now. memoryd never rewrites this section.)"
)
ROOT_TEMPLATE = f"""\
# Memory

{GOAL_HEADING}

{GOAL_PLACEHOLDER}
"""


def goal_lines(lines: list[str]) -> list[str]:
    """ROOT.md's "Current goal" section as written (empty when absent or not filled in):
    the lines after its heading up to the next heading or compiled block, without the
    template's placeholder and the blank lines around the text."""
    stripped = [line.strip() for line in lines]
    if GOAL_HEADING not in stripped:
        return []
    body: list[str] = []
    for line in lines[stripped.index(GOAL_HEADING) + 1 :]:
        if line.startswith(("# ", "## ", "<!--")):
            break
        if line.strip() != GOAL_PLACEHOLDER:
            body.append(line.rstrip())
    while body and not body[-1].strip():
        body.pop()
    while body and not body[0].strip():
        body.pop(0)
    return body


@dataclass(frozen=True)
class InitResult:
    """What initialising a root created."""

    root: Path
    created: tuple[str, ...]  # root-relative paths that did not exist before


# _TEMP_RE as plain string tests (a regex search costs ~5 µs a name: half of a no-change
# reconcile of 10k files). tests/test_roots.py checks that both always agree.
_TEMP_PREFIXES = (".#", ".memoryd-tmp-", ".~lock.", ".goutputstream-")
_TEMP_SUFFIXES = (
    "~",
    ".tmp",
    ".kate-swp",
    ".bak",
    ".orig",
    ".crswap",
    *(f".sw{c}" for c in "abcdefghijklmnop"),
)


def is_temp_name(name: str) -> bool:
    """Editor temp, swap, lock and backup files (and memoryd's own temp files)."""
    if "\n" in name:  # '$' and '.' treat a newline specially: let the regex decide
        return bool(_TEMP_RE.search(name))
    return (
        name.startswith(_TEMP_PREFIXES)
        or name.endswith(_TEMP_SUFFIXES)
        or name == "4913"
        or (len(name) >= 2 and name[0] == "#" and name[-1] == "#")
    )


def init_root(root: Path) -> InitResult:
    """Create a plugin-layout root; running it again changes nothing."""
    created: list[str] = []
    if root.exists() and not root.is_dir():
        raise PathError(f"{root} exists and is not a folder", hint="move it aside and run again")
    if not root.exists():
        private_dirs(root)
        created.append(".")
    for name in CATEGORIES:
        folder = root / name
        if not folder.exists():
            private_dirs(folder)
            created.append(name + "/")
    root_md = root / ROOT_FILE
    if not root_md.exists():
        atomic_write(root_md, ROOT_TEMPLATE.encode("utf-8"))
        created.append(ROOT_FILE)
    if ensure_gitignored(root, STATE_FILE):
        created.append(".gitignore")
    return InitResult(root, tuple(created))


def ensure_gitignored(root: Path, pattern: str) -> bool:
    """Make sure ``pattern`` is a line of ``root/.gitignore``; True when written."""
    file = root / ".gitignore"
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    lines = text.splitlines()
    if pattern in (line.strip() for line in lines) or f"/{pattern}" in lines:
        return False
    if text and not text.endswith("\n"):
        text += "\n"
    atomic_write(file, (text + pattern + "\n").encode("utf-8"))
    return True


def git_toplevel(start: Path) -> Path | None:
    """The work tree that contains ``start`` (found by walking up to a ``.git``)."""
    return _path(rootfs.git_toplevel(str(start)))


def main_git_dir(top: Path) -> Path:
    """The common git dir of the work tree ``top`` (see :func:`memoryd.rootfs.main_git_dir`)."""
    return Path(rootfs.main_git_dir(str(top)))


def canonical_toplevel(start: Path) -> Path | None:
    """The project's main work tree (see :func:`memoryd.rootfs.canonical_toplevel`)."""
    return _path(rootfs.canonical_toplevel(str(start)))


def project_root_for(start: Path, memory_roots: Iterable[Path] = ()) -> Path | None:
    """``<main work tree>/.memory`` for ``start``, whether or not it exists yet.

    None outside git, and None when the repository is itself (inside) one of
    ``memory_roots``: a global root is a git repository, not a project.
    """
    return _path(rootfs.project_root_for(str(start), [str(r) for r in memory_roots]))


def _path(found: str | None) -> Path | None:
    return None if found is None else Path(found)


def walk_root(root: Path) -> list[Path]:
    """Every memory file under ``root``, sorted, never leaving the root.

    Skips VCS and hidden folders, editor temp files, linked folders, and linked
    files whose target resolves outside the root. Unreadable folders are logged and skipped (the
    caller decides what "unknown" means for the files it had there).
    """
    return sorted(Path(p) for p in walk_files(root))


def walk_files(root: Path, skipped: list[str] | None = None) -> list[str]:
    """:func:`walk_root` as plain path strings in string order (cheaper at 100k files;
    see :func:`memoryd.rootfs.walk_files`)."""
    return rootfs.walk_files(str(root), skipped)


def visible(folders: tuple[str, ...]) -> bool:
    """Would a walk enter folders of these names (no VCS, dependency or hidden folder)?"""
    return not any(name in SKIP_DIRS or name.startswith(".") for name in folders)


def listed_by_name(root: Path, path: Path) -> bool:
    """Would :func:`walk_root` list a file at ``path``, judged by names alone?

    The watcher's question: an event's file may be gone already, so nothing is stat'ed.
    """
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        return False
    return bool(parts) and visible(parts[:-1]) and is_memory_name(parts[-1])


def walks_into(root: Path, folder: Path) -> bool:
    """Would :func:`walk_root` descend into ``folder`` (names, and no linked folder on the way)?"""
    current = root
    for part in folder.relative_to(root).parts:
        current = current / part
        if part in SKIP_DIRS or part.startswith(".") or current.is_symlink():
            return False
    return True


def listed(root: Path, path: Path) -> bool:
    """Would :func:`walk_root` list ``path``? The one definition the walk, the compile
    listing, the index's reconcile and the watcher share (this one looks at the disk)."""
    if not listed_by_name(root, path) or not walks_into(root, path.parent):
        return False
    if path.is_symlink():
        return (
            path.is_file()  # False for a dangling link, a loop and a FIFO, as for the walk
            and rootfs.inside(str(path), str(root.resolve()))
        )
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)  # not a folder, a FIFO, a device
    except (OSError, ValueError):
        return False


def relative_id(root: Path, path: Path) -> str:
    """Root-relative POSIX path of a file."""
    return path.relative_to(root).as_posix()
