"""A root on disk as plain strings: its file names, the walk, the project a folder is in.

The light half of :mod:`memoryd.roots`, which builds on it with ``pathlib``: the lean
``memoryd recall`` (:mod:`memoryd.lean_recall`) walks roots and finds the project root
here without importing pathlib, logging or dataclasses, which together cost it more
than its own work. Paths are ``str``; a resolved path is ``os.path.realpath``'s, which
is what ``Path.resolve()`` returns.
"""

from __future__ import annotations

import os

from memoryd.homedirs import clean

TYPE_CHECKING = False
if TYPE_CHECKING:
    import logging
    from collections.abc import Callable, Iterable, Sequence
    from typing import Protocol, TypeVar

    class Listed(Protocol):
        @property
        def scope(self) -> str: ...

    R = TypeVar("R", bound=Listed)

PROJECT_DIRNAME = ".memory"
STATE_FILE = ".state.json"
SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__"})


def is_memory_name(name: str) -> bool:
    """A Markdown file that is not hidden and not an editor's temp file.

    Every temp prefix starts with "." and no temp suffix ends in "md", so a name ending in
    ".md" that is not hidden is never a temp name: the walk asks two string tests a file,
    not twenty (tests/test_roots.py checks this against :func:`memoryd.roots.is_temp_name`).
    """
    return name.endswith(".md") and not name.startswith(".")


def walk_files(
    root: str, skipped: list[str] | None = None, unlisted: list[str] | None = None
) -> list[str]:
    """Every memory file under ``root`` as path strings in string order, never leaving it.

    Skips VCS and hidden folders, editor temp files, linked folders, linked files whose
    target resolves outside the root or to nothing (a dangling link, a loop: stat would
    raise ELOOP for that one, and every command walks), and what is named like a memory
    but is no regular file (a FIFO, whose open waits for a writer: every reader would
    hang). ``skipped``: collects those memory-named links and special files (for
    inspect, which says what each is). A folder that cannot be listed is skipped and
    logged, or put in ``unlisted`` when that is given (the caller decides what
    "unknown" means for its files).
    """
    real_root = os.path.realpath(root)
    found: list[str] = []
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError as exc:
            if unlisted is not None:
                unlisted.append(folder)
            else:
                _log().warning("cannot list %s: %s", folder, exc)
            continue
        for entry in entries:
            if entry.is_symlink():  # never descended into: no loops, no escapes
                if is_memory_name(entry.name):
                    _linked(entry.path, real_root, found, skipped)
            elif entry.is_dir():
                if entry.name not in SKIP_DIRS and not entry.name.startswith("."):
                    stack.append(entry.path)
            elif is_memory_name(entry.name):
                if entry.is_file():  # the d_type scandir read: no system call
                    found.append(entry.path)
                elif skipped is not None:
                    skipped.append(entry.path)
    found.sort()
    return found


def _linked(path: str, real_root: str, found: list[str], skipped: list[str] | None) -> None:
    """A memory-named link: a memory when it leads to a regular file inside the root.

    ``os.path`` answers False for a dangling link and a loop, where the ``DirEntry``
    methods raise (ELOOP). A link to a folder inside the root is no memory, and no mistake.
    """
    if not inside(path, real_root):
        if skipped is not None:
            skipped.append(path)
    elif os.path.isfile(path):
        found.append(path)
    elif skipped is not None and not os.path.isdir(path):
        skipped.append(path)


def inside(path: str, real_root: str) -> bool:
    """Does ``path`` resolve to ``real_root`` or below it?"""
    try:
        target = os.path.realpath(path)
    except (OSError, ValueError):
        return False
    return within(target, real_root)


def within(path: str, folder: str) -> bool:
    """``path`` is ``folder`` or below it (both normal, absolute)."""
    return path == folder or path.startswith(folder if folder.endswith(os.sep) else folder + os.sep)


def git_toplevel(start: str) -> str | None:
    """The work tree that contains ``start`` (found by walking up to a ``.git``)."""
    folder = os.path.realpath(start)
    while True:
        if os.path.exists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def own_git_dir(top: str) -> str:
    """The git dir of the work tree ``top`` itself (``git rev-parse --git-dir``): its
    ``.git`` folder, or the folder its ``.git`` file names (a linked worktree's, where
    a rebase or merge in that worktree keeps its state; a submodule's)."""
    dot_git = os.path.join(top, ".git")
    if os.path.isdir(dot_git):
        return dot_git
    return clean(os.path.join(top, _read(dot_git).removeprefix("gitdir:").strip()))


def main_git_dir(top: str) -> str:
    """The common git dir of the work tree ``top`` (``git rev-parse --git-common-dir``).

    Read from the files git keeps rather than by running git: recall and the hooks
    ask on every call. A linked worktree's ``.git`` file names its own git dir, whose
    ``commondir`` names the main repository's; a submodule's has no ``commondir``.
    """
    dot_git = os.path.join(top, ".git")
    if os.path.isdir(dot_git):
        return dot_git
    text = _read(dot_git)
    gitdir = clean(os.path.join(top, text.removeprefix("gitdir:").strip()))
    common = os.path.join(gitdir, "commondir")
    if os.path.isfile(common):
        return os.path.realpath(os.path.join(gitdir, _read(common)))
    return gitdir


def canonical_toplevel(start: str) -> str | None:
    """The project's main work tree: for a linked ``git worktree``, the main one.

    An agent working in ``../wt/feature`` works on the same project as one in the
    main checkout, so both see one project root. A worktree of a bare repository
    has no main work tree: it is its own project then.
    """
    top = git_toplevel(start)
    if top is None:
        return None
    try:
        common = main_git_dir(top)
    except (OSError, UnicodeDecodeError) as exc:
        _log().debug("cannot read the git dir of %s: %s", top, exc)
        return top
    parent = os.path.dirname(common)
    if os.path.basename(common) == ".git" and os.path.isdir(parent):
        return os.path.realpath(parent)
    return top


def project_root_for(start: str, memory_roots: Iterable[str] = ()) -> str | None:
    """``<main work tree>/.memory`` for ``start``, whether or not it exists yet.

    None outside git, and None when the repository is itself (inside) one of
    ``memory_roots``: a global root is a git repository, not a project.
    """
    top = canonical_toplevel(start)
    if top is None:
        return None
    for root in memory_roots:
        if within(top, os.path.realpath(root)):
            return None
    return os.path.join(top, PROJECT_DIRNAME)


def search_roots(
    listed: Sequence[R],
    start: str,
    project: str | None,
    path_of: Callable[[R], str],
    project_root: Callable[[str], R],
) -> list[R]:
    """The global and team roots of ``listed`` plus the project root of ``project`` (default:
    ``start``), the one rule of every recall (:func:`memoryd.freshness.search_roots`,
    :mod:`memoryd.lean_recall`).

    The project root is the main work tree's ``.memory`` (the same from every ``git
    worktree`` of the project): ``listed``'s root at that path, else ``project_root(path)``
    when the folder exists; skipped silently when it does not. Other projects' roots
    never are. A ``project`` outside git is a :class:`~memoryd.errors.PathError`.
    """
    roots = [r for r in listed if r.scope in ("global", "team")]
    own = project_root_for(project or start, [path_of(r) for r in roots])
    if own is None:
        if project is not None:
            from memoryd.errors import PathError

            raise PathError(
                f"{project} is not inside a git repository",
                hint="pass --project a folder inside the project's repository",
            )
        return roots
    for root in listed:
        path = path_of(root)
        if path == own or os.path.realpath(path) == os.path.realpath(own):
            return roots if root in roots else [*roots, root]
    if os.path.isdir(own):
        roots.append(project_root(own))
    return roots


def _read(file: str) -> str:
    with open(file, encoding="utf-8") as handle:
        return handle.read().strip()


def _log() -> logging.Logger:
    import logging  # only on a failure: logging costs the lean recall a third of its time

    return logging.getLogger("memoryd.roots")
