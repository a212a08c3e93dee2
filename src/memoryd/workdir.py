"""The project of a working folder that no longer exists (a removed ``git worktree``).

An agent session keeps its folder as its working directory after the worktree is removed
under it, and the hooks' events keep naming it. The project is found by walking up from
the folder to a ``.git``, which for a linked worktree outside the main checkout finds
nothing: the project's memories would vanish from every prompt without a word. So for a
folder that is gone this asks, in order:

1. what the MCP server knew while its folder was there (its project at its start);
2. the git of every registered project: ``<main>/.git/worktrees/*/gitdir`` names each
   linked worktree's folder until ``git worktree prune`` (a folder deleted with ``rm -rf``,
   or by a tool, is still listed there);
3. what an earlier hook of the same session saw, when the folder was inside the worktree
   it saw (never for another folder: that may be another project's);
4. the walk up (a folder deleted inside a work tree belongs to it).

The folder is then read as the main work tree (:func:`settle`), so every root, citation and
layout below it sees that project. When none of them knows the folder, the caller is told
(:class:`memoryd.errors.ProjectLost`) rather than served the global memory as if it were everything.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from memoryd import rootfs
from memoryd.errors import MemorydError, ProjectLost
from memoryd.fsutil import atomic_write

if TYPE_CHECKING:
    from memoryd.app import App

log = logging.getLogger(__name__)

FOLDER = "session-projects"  # in the state folder: a hook session's worktree and main work tree
KEEP_S = 7 * 24 * 3600


def main_tree(folder: Path) -> Path | None:
    """The main work tree of the linked worktree ``folder`` is in (None: not in one)."""
    found = _linked(folder)
    return None if found is None else found[1]


def _linked(folder: Path) -> tuple[Path, Path] | None:
    """The linked worktree ``folder`` is in and its main work tree (None: not in one)."""
    top = rootfs.git_toplevel(str(folder))
    main = rootfs.canonical_toplevel(str(folder))
    if top is None or main is None or main == top:
        return None
    return Path(top), Path(main)


def settle(app: App, session: object = None, known: Path | None = None) -> ProjectLost | None:
    """Read a working folder that no longer exists as its project's main work tree.

    ``session`` (a hook's session id) is recorded when the folder is a linked worktree, so
    a later hook of the session still finds the project after the worktree is removed;
    ``known`` is a main work tree the caller found earlier. Returns the problem when the
    folder is gone and its project cannot be told (the caller says so and serves the
    global memory alone, and ``app.lost`` holds it too); the folder stays as it was then.
    """
    sid = session if isinstance(session, str) and session else ""
    app.lost = None
    if os.path.isdir(app.cwd):
        if sid and (linked := _linked(app.cwd)) is not None:
            _record(app, sid, *linked)
        return None
    gone = app.cwd
    main = _usable(known) or registered_main(gone, _mains(app)) or _recorded(app, sid, gone)
    if main is not None:
        log.info("%s no longer exists: reading it as the project %s", gone, main)
        app.cwd = main
        return None
    if rootfs.git_toplevel(str(gone)) is not None:
        return None  # a folder deleted inside a work tree: the walk up finds its project
    cause = (
        f"the folder {gone} no longer exists (a removed worktree?), and no registered "
        "project's git lists it as a worktree"
    )
    app.lost = ProjectLost(
        cause,
        f"{cause}, so this project's memory is left out: only the global memory is served",
        hint="start the session again in the project's folder (or a worktree that exists)",
    )
    return app.lost


def registered_main(gone: Path, mains: Iterable[Path]) -> Path | None:
    """The main work tree among ``mains`` whose git still lists a linked worktree at or
    above the folder ``gone`` (``.git/worktrees/<name>/gitdir`` holds ``<folder>/.git``)."""
    target = os.path.realpath(gone)
    for main in mains:
        admin = main / ".git" / "worktrees"
        try:
            entries = sorted(os.scandir(admin), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            try:
                recorded = Path(entry.path, "gitdir").read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError):
                continue
            folder = os.path.realpath(os.path.dirname(recorded))
            if recorded and rootfs.within(target, folder):
                return main
    return None


def _mains(app: App) -> list[Path]:
    """The main work trees of the registered project roots (``<main>/.memory``)."""
    try:
        roots = app.config.roots
    except MemorydError:
        return []
    return [root.path.parent for root in roots if root.scope == "project"]


def _usable(main: Path | None) -> Path | None:
    return main if main is not None and os.path.isdir(main) else None


def _file(app: App, session: str) -> Path | None:
    try:
        state = app.paths.state_dir
    except MemorydError:
        return None
    return state / FOLDER / hashlib.sha256(session.encode("utf-8", "replace")).hexdigest()[:32]


def _recorded(app: App, session: str, gone: Path) -> Path | None:
    """The main work tree an earlier hook of ``session`` saw, when ``gone`` was in the
    worktree it saw it from (another folder of the session is not that project's)."""
    path = _file(app, session) if session else None
    if path is None:
        return None
    with contextlib.suppress(OSError, UnicodeDecodeError, ValueError):
        top, main = path.read_text(encoding="utf-8").split("\n")
        if rootfs.within(os.path.realpath(gone), top):
            return _usable(Path(main))
    return None


def _record(app: App, session: str, top: Path, main: Path) -> None:
    path = _file(app, session)
    if path is None:
        return
    text = f"{top}\n{main}"
    with contextlib.suppress(OSError, UnicodeDecodeError):
        if path.read_text(encoding="utf-8") == text:
            return
    try:
        atomic_write(path, text.encode("utf-8", "surrogateescape"), durable=False)
        _prune(path.parent, keep=path)
    except OSError as exc:
        log.debug("the session's project not recorded in %s: %s", path, exc)


def _prune(folder: Path, keep: Path) -> None:
    """Drop the records of sessions over for a week (only when a new one is written)."""
    import time

    cutoff = time.time() - KEEP_S
    for entry in os.scandir(folder):
        with contextlib.suppress(OSError):
            if entry.path != str(keep) and entry.stat().st_mtime < cutoff:
                os.unlink(entry.path)
