"""Roots that come and go: a root whose folder disappears is paused, not emptied.

A paused root is not watched and not reconciled, so its index rows stay and
nothing in it is treated as deleted. When the folder is back, it is watched
again and rescanned. Back means the root itself: a folder that holds what it
held when last seen (its ``.git``, else its ROOT.md), so a bare folder made at
its path (by hand, or by a program that writes there) keeps it a problem.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

from memoryd.daemon.status import StatusBoard
from memoryd.daemon.watch import LIMIT, Watcher

log = logging.getLogger(__name__)

MISSING = "root {} is missing: paused (its index rows are kept) until it returns"
MARKS = (".git", "ROOT.md")  # what says a folder is the root that went away
POLLING = "root {} is polled, not watched: raise fs.inotify.max_user_watches to get events"


class RootGuard:
    def __init__(
        self,
        watcher: Watcher,
        status: StatusBoard,
        rescan: Callable[[Path], None],
        setting: Callable[[Path], str] = lambda path: "auto",
    ) -> None:
        self.watcher, self.status, self.rescan = watcher, status, rescan
        self.setting = setting  # a root's `watch:` in config.yaml
        self._paused: set[Path] = set()
        self._marks: dict[Path, str] = {}  # the root's mark when last seen (see MARKS)
        self._lock = threading.RLock()

    def watch(self, path: Path) -> None:
        """Start watching a configured root (paused at once when it is missing)."""
        with self._lock:
            if not path.is_dir() or not self._add(path):
                self._pause(path)

    def check(self, path: Path) -> None:
        """Pause a root that vanished, resume one that came back."""
        with self._lock:
            if path in self._paused and self._back(path):
                self._resume(path)
            elif path not in self._paused and not path.is_dir() and path in self.watcher.modes:
                self._pause(path)

    def rewatch(self, path: Path) -> None:
        """The root's ``watch`` setting changed: watch it again the new way, then rescan
        (whatever changed in between was not reported)."""
        with self._lock:
            if path in self._paused:
                return
            self.watcher.remove(path)
            if self._add(path):
                self.rescan(path)
            else:
                self._pause(path)

    def live(self, path: Path) -> bool:
        """Whether ``path`` may be reconciled now (pausing it when it is gone)."""
        with self._lock:
            if path in self._paused:
                return False
            if not path.is_dir():
                self._pause(path)
                return False
            return True

    def _back(self, path: Path) -> bool:
        """A paused root is back: a folder again, holding its mark if it had one."""
        mark = self._marks.get(path)
        return path.is_dir() and (mark is None or (path / mark).exists())

    def is_paused(self, path: Path) -> bool:
        return path in self._paused

    def forget(self, path: Path) -> None:
        """The root left config.yaml: stop watching it."""
        with self._lock:
            self.watcher.remove(path)
            self._paused.discard(path)
            self._marks.pop(path, None)
            self.status.problem(MISSING.format(path), present=False)
            self.status.problem(POLLING.format(path), present=False)
            self.status.forget_root(path)

    def _add(self, path: Path) -> bool:
        try:
            mode = self.watcher.add(path, self.setting(path))
        except OSError as exc:
            log.warning("cannot watch %s: %s", path, exc)
            return False
        self.status.root(path, mode=mode, state="watching")
        found = next((m for m in MARKS if (path / m).exists()), None)
        if found is not None:
            self._marks[path] = found
        refused = self.watcher.reasons.get(path) == LIMIT
        self.status.problem(POLLING.format(path), present=refused)
        return True

    def _pause(self, path: Path) -> None:
        if path not in self._paused:
            log.warning(MISSING.format(path))
        self._paused.add(path)
        self.watcher.remove(path)
        self.status.problem(MISSING.format(path))  # first: whoever sees "paused" sees why
        self.status.root(path, mode="none", state="paused")

    def _resume(self, path: Path) -> None:
        if not self._add(path):
            return
        self._paused.discard(path)
        self.status.problem(MISSING.format(path), present=False)
        log.info("root %s is back: resuming", path)
        self.rescan(path)
