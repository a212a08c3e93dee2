"""What a reading command calls: which roots a recall searches, and a fresh index to read.

This sits above the index, the compiler and the daemon's lock on purpose: it asks whether a
daemon keeps the index fresh, reconciles when none does, and recompiles what changed, so
none of those three needs to know about the others.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from memoryd.app import App
from memoryd.config.sections import PROJECT_SYNC, Config, RootConfig
from memoryd.errors import PathError
from memoryd.index.db import IndexDB, open_index
from memoryd.index.reconcile import reconcile
from memoryd.roots import project_root_for

if TYPE_CHECKING:
    from memoryd.compile.listing import ScanCache
    from memoryd.compile.writer import CompileReport

log = logging.getLogger(__name__)


def search_roots(config: Config, cwd: Path, project: Path | None = None) -> list[RootConfig]:
    """The global and team roots plus the project root of ``project`` (default: ``cwd``).

    The project root is the main work tree's ``.memory`` (the same from every
    ``git worktree`` of the project). It is included when it exists even if
    config.yaml does not list it, and skipped silently when it does not exist;
    other projects' roots never are.
    """
    roots = [r for r in config.roots if r.scope in ("global", "team")]
    own = project_root_for(project or cwd, [r.path for r in roots])
    if own is None:
        if project is not None:
            raise PathError(
                f"{project} is not inside a git repository",
                hint="pass --project a folder inside the project's repository",
            )
        return roots
    for root in config.roots:
        if _same(root.path, own):
            return roots if root in roots else [*roots, root]
    if own.is_dir():
        roots.append(RootConfig(path=own, layout="plugin", scope="project", sync=PROJECT_SYNC))
    return roots


def _same(a: Path, b: Path) -> bool:
    return a == b or a.resolve() == b.resolve()


def ensure_fresh(
    app: App, *, roots: Sequence[RootConfig] | None = None, recompile: bool = False
) -> IndexDB:
    """Open the index; reconcile first unless a daemon keeps it fresh (and it is not empty).

    ``roots`` (default: every configured root) are the roots about to be read.
    Roots that config.yaml does not list are reconciled even when a daemon runs,
    because the daemon does not watch them. ``recompile``: where memories changed,
    also recompile ROOT.md and index.md, as the daemon would have.
    """
    from memoryd.runlock import running_pid

    wanted = list(app.config.roots if roots is None else roots)
    db = open_index(app.paths)
    try:
        if running_pid(app.paths.lock_file) is not None and db.count():
            # an empty index is not the daemon's work: this open just created it, emptied it
            # (an index of an older tokenizer, as after an upgrade while the old daemon ran)
            # or moved a damaged one aside, and trusting it answered every recall with
            # nothing until the daemon's next full reconcile, 10 minutes later
            wanted = [r for r in wanted if r not in app.config.roots]
        if wanted:
            report = reconcile(db, app.config, wanted)
            log.debug("reconciled %d roots in %.3fs", len(wanted), report.seconds)
            if recompile and report.modified:
                from memoryd.compile.writer import kept_cache  # on a change only

                touched = [*report.added, *report.changed, *report.removed]
                cache = kept_cache(app.paths.cache_dir)
                recompile_changed(db, app.config, wanted, touched, cache)
    except BaseException:
        db.close()
        raise
    return db


def recompile_changed(
    db: IndexDB,
    config: Config,
    roots: Sequence[RootConfig],
    touched: Sequence[Path],
    cache: ScanCache | None = None,
) -> None:
    """Recompile the roots where memories changed, and index what that wrote.

    The daemon does this after every change; a command that reconciled without a
    daemon does it too, so ROOT.md and index.md never lag behind a hand edit for
    longer than the next command. Only changed memories count: a hand edit of a
    compiled file alone is left for ``memoryd inspect`` to report.
    """
    for root in roots:
        changed = [p for p in touched if _memory_of(root, p)]
        if changed:
            compile_and_index(db, config, root, changed, cache)


def compile_and_index(
    db: IndexDB,
    config: Config,
    root: RootConfig,
    changed: Sequence[Path],
    cache: ScanCache | None = None,
    *,
    also: Sequence[Path] = (),
) -> CompileReport:
    """Compile ``root`` for its ``changed`` memories, then index what the compile wrote
    (and ``also``: paths the caller changed and wants indexed in the same pass).
    The compile's report is returned: its problems are the caller's to show."""
    from memoryd.compile.writer import compile_root

    report = compile_root(root, config, changed=list(changed), cache=cache)
    written = [*also, *report.touched]
    if written:
        reconcile(db, config, roots=[root], only=written)
    return report


def _memory_of(root: RootConfig, path: Path) -> bool:
    """Is ``path`` a memory (not a compiled file) of ``root``?"""
    from memoryd.compile.blocks import is_generated
    from memoryd.roots import relative_id

    if root.path not in path.parents:
        return False
    return not is_generated(relative_id(root.path, path))
