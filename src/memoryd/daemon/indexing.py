"""The daemon's seam to the index and the compiler, and the memory of its own writes.

``refresh`` and ``reindex`` touch the database: the batch worker thread alone
calls them (it owns the SQLite connection). ``compile`` writes ROOT.md and
index.md and runs on the compile thread; the paths it writes and their hashes
are remembered, so the watcher's events for them are recognised and dropped:
no write loops. A compile announces each file just before writing it: the
watcher reports the rename at once, and the worker may settle that batch
(``quiet_ms`` later) while a compile of several files, each fsynced, still runs.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Collection
from pathlib import Path
from typing import Any

from memoryd import fingerprint
from memoryd.config.sections import Config, RootConfig
from memoryd.daemon.batching import Op
from memoryd.fsutil import read_or_none
from memoryd.paths import Paths

log = logging.getLogger(__name__)
# Past this many paths, one incremental reconcile of the whole root (size+mtime
# fingerprints, no re-reads) is cheaper than following each path.
ONLY_MAX = 64


def came_through_git(root: Path, path: Path, data: bytes | None) -> bool:
    """Whether ``data`` (a compiled file's bytes before a compile rewrote them) is a version
    git already holds: another device's, brought by a pull or a sync, or one checked out.
    A hand edit is new bytes that no commit has (the daemon restores it before any sync)."""
    if data is None:
        return False
    from memoryd.gitcli import GitError
    from memoryd.sync.git import Git

    git = Git(root)
    try:  # as git would store the file at that path (its filters: a CRLF checkout)
        rel = path.relative_to(root).as_posix()
        blob = git.run("hash-object", "--stdin", f"--path={rel}", input=data, readonly=True)
        known = git.run("cat-file", "-e", blob.text.strip(), check=False, readonly=True)
    except (GitError, OSError, ValueError):  # not a repository, no git: nobody brought it
        return False
    return known.code == 0


def digest(path: Path) -> str | None:
    """The content hash of ``path`` (None when it does not exist)."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    except OSError:
        return "unreadable"


class OwnWrites:
    """Files the daemon wrote, with the hashes it wrote (None: it deleted them).

    The hash a file held before the last announced write stays known too, until the
    file is seen holding the last one: an event for the earlier write may come after
    the announcement of the next one.
    """

    KEEP = 2  # hashes per path: the last write and the one announced after it

    def __init__(self) -> None:
        self._wrote: dict[Path, tuple[str | None, ...]] = {}
        self._lock = threading.Lock()

    def expect(self, path: Path, data: bytes | None) -> None:
        """``path`` is about to hold ``data`` (None: it is about to be deleted)."""
        value = None if data is None else hashlib.sha256(data).hexdigest()
        with self._lock:
            earlier = [h for h in self._wrote.get(path, ()) if h != value]
            self._wrote[path] = (*earlier[-(self.KEEP - 1) :], value)

    def drop_own(self, ops: dict[Path, Op]) -> int:
        """Remove from ``ops`` the paths still exactly as the daemon left them."""
        dropped = 0
        with self._lock:
            for path in [p for p in ops if p in self._wrote]:
                known, now = self._wrote[path], digest(path)
                if now in known:
                    del ops[path]
                    dropped += 1
                    if now == known[-1]:  # the last write arrived: the earlier one is past
                        self._wrote[path] = (now,)
                else:  # someone changed it since: a real change, and our record is obsolete
                    del self._wrote[path]
        return dropped


class Engine:
    def __init__(self, paths: Paths) -> None:
        self.paths = paths
        self.db: Any = None
        self.own = OwnWrites()
        self.opened: tuple[int, int] | None = None  # the index file the connection holds
        self.told: set[Path] = set()  # files that cannot be indexed, logged once a run

    def open(self) -> None:
        """Open the index (again: the old connection is closed once the new one is open)."""
        from memoryd.index import open_index

        db = open_index(self.paths)
        old, self.db = self.db, db
        self.opened = fingerprint.identity(self.paths.index_db)
        if old is not None:
            old.close()

    def replaced(self) -> bool:
        """Whether the index file at its path is no longer the one open: the cache folder
        cleaned out (``rm -rf ~/.cache/*``, a disk cleaner), or the file moved aside by a
        command that found it damaged. The connection keeps writing to the old inode, which
        nothing else reads: every change since was missing from recall until a restart."""
        return self.db is not None and fingerprint.identity(self.paths.index_db) != self.opened

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None

    def refresh(
        self, config: Config, root: RootConfig, only: Collection[Path] | None
    ) -> list[Path]:
        """Reindex ``only`` (None: the whole root); return the paths that changed: rows
        changed, and files of ``only`` that cannot be indexed (a name that is not UTF-8):
        the compiled listing names those too, so a change to one still needs a compile,
        as 'memoryd compile' would make it, and sync carries it."""
        from memoryd.index import reconcile

        if only is not None and len(only) > ONLY_MAX:
            only = None
        report = reconcile(self.db, config, [root], only)
        self.db.vouch()  # its commit may have checkpointed the WAL into the main file
        for path, reason in report.unknown:
            if path not in self.told:
                self.told.add(path)
                log.warning("cannot index %s: %s", path, reason)
        if report.modified:
            self._warn_malformed([*report.added, *report.changed])
        unindexed = [] if only is None else [path for path, _ in report.unknown]
        return [*report.added, *report.changed, *report.removed, *unindexed]

    def tidy(self) -> bool:
        """Merge the index's big segments now rather than inside a later save."""
        from memoryd.index.segments import tidy

        merged = tidy(self.db.conn)
        self.db.vouch()
        return merged

    def _warn_malformed(self, paths: list[Path]) -> None:
        """One line for each new or changed file whose frontmatter does not parse: the
        memory is indexed by its text alone (no kind, summary, pin), which nothing said
        unless someone ran ``memoryd inspect``."""
        for path, problems in self.db.problems(paths).items():
            for problem in problems:
                if problem.code.startswith("frontmatter."):
                    log.warning(
                        "%s: %s; fix the YAML between the '---' lines at the top of the file",
                        path,
                        problem.message,
                    )

    def compile(self, config: Config, root: RootConfig, changed: list[Path] | None) -> list[Path]:
        """Recompile ``root`` for ``changed`` (None: all of it); return the paths written."""
        from memoryd.compile.writer import compile_root

        asked = set(changed or ())
        before: dict[Path, bytes | None] = {}

        def expect(path: Path, data: bytes | None) -> None:
            if path in asked and path not in before:  # its bytes before the compile's write
                before[path] = read_or_none(path)
            self.own.expect(path, data)

        report = compile_root(root, config, changed=changed, expect=expect)
        written = report.touched
        for path in sorted(set(report.written) & asked):
            # the compiled file itself changed, and not by us: a hand edit, now undone, unless
            # the bytes are a version git has (a pull, a sync's move, a checkout brought them)
            if came_through_git(root.path, path, before.get(path)):
                log.debug("recompiled %s, which git had just brought", path)
                continue
            log.warning(
                "restored the compiled parts of %s: a hand edit there is overwritten by "
                "every compile (edit the memories' frontmatter instead)",
                path,
            )
        for problem in report.problems:
            log.debug("compile %s: %s", root.path, problem)
        return written
