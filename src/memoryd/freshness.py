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

from memoryd import rootfs
from memoryd.app import App
from memoryd.config.sections import PROJECT_SYNC, Config, RootConfig
from memoryd.index.db import IndexDB, open_index
from memoryd.index.reconcile import reconcile
from memoryd.index.staleness import to_check

if TYPE_CHECKING:
    from memoryd.compile.listing import ScanCache
    from memoryd.compile.writer import CompileReport

log = logging.getLogger(__name__)


def search_roots(config: Config, cwd: Path, project: Path | None = None) -> list[RootConfig]:
    """The global roots plus the project root of ``project`` (default: ``cwd``), as
    :func:`memoryd.rootfs.search_roots` says; a project root config.yaml does not list
    is a plugin root of its own."""
    return rootfs.search_roots(
        config.roots,
        str(cwd),
        None if project is None else str(project),
        lambda root: str(root.path),
        lambda own: RootConfig(path=Path(own), layout="plugin", scope="project", sync=PROJECT_SYNC),
    )


def ensure_fresh(
    app: App, *, roots: Sequence[RootConfig] | None = None, recompile: bool = False
) -> IndexDB:
    """Open the index; reconcile first unless a daemon keeps it fresh (and it is not empty).

    ``roots`` (default: every configured root) are the roots about to be read.
    Roots that config.yaml does not list are reconciled even when a daemon runs,
    because the daemon does not watch them. ``recompile``: where memories changed,
    also recompile ROOT.md and index.md, as the daemon would have.
    """
    db = open_index(app.paths)
    try:
        freshen(app, db, roots=roots, recompile=recompile)
    except BaseException:
        db.close()
        raise
    return db


def freshen(
    app: App, db: IndexDB, *, roots: Sequence[RootConfig] | None = None, recompile: bool = False
) -> None:
    """:func:`ensure_fresh` on an index already open (one a server keeps between requests:
    opening checks the file, which reads all of it after each checkpoint)."""
    from memoryd.runlock import running_pid

    daemon = running_pid(app.paths.lock_file) is not None
    wanted = to_check(
        app.config.roots if roots is None else roots,
        app.config.roots.__contains__,
        daemon=daemon,
        empty=daemon and not db.count(),  # (an older tokenizer's index was emptied too)
    )
    if wanted:
        report = reconcile(db, app.config, wanted)
        log.debug("reconciled %d roots in %.3fs", len(wanted), report.seconds)
        if recompile and report.modified:
            from memoryd.compile.writer import kept_cache  # on a change only

            touched = [*report.added, *report.changed, *report.removed]
            cache = kept_cache(app.paths.cache_dir)
            recompile_changed(db, app.config, wanted, touched, cache)


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
