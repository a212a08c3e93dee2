"""Sync from the daemon: debounced after changes, periodic for pulls, at once on wake.

All git work for one repository goes through one lock, so the daemon never
runs two git operations on a repo at the same time (jobs run on the
scheduler's thread pool; a second job for the same root waits its turn).
A file the cycle quarantines (a secret, conflict markers) is told once in the log,
with what to do, when it is first held back, not every cycle it stays so. A cycle's
problem (no git identity, the remote unreachable, a ``git commit -a`` left in its editor
holding index.lock past ``stale_lock_s``) is told once too, and again only when it
changes or after it cleared: it stays in the status (and so in ``memoryd status`` and
``doctor``) for as long as it lasts, while a log line every cycle told nothing new. A
cycle that crashed (an exception the engine did not turn into an outcome: a bug) is such a
problem too, logged once with its traceback, since the same traceback every cycle buried
the rest of the log. The conflict copies a cycle saved are one line with their count and
the first few names (fifty files edited on two devices are one event); ``memoryd
conflicts`` lists them all. A cycle that the daemon's stop ended while it waited on the
remote (status ``stopped``) is no problem: an INFO line says so, and the next start runs
that root's sync at once (:meth:`Syncer.resume`).
"""

from __future__ import annotations

import functools
import importlib
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memoryd.config.sections import Config, RootConfig
from memoryd.daemon.scheduler import Scheduler
from memoryd.daemon.status import StatusBoard, now_iso
from memoryd.paths import Paths

log = logging.getLogger(__name__)


def syncs(root: RootConfig) -> bool:
    return root.sync.commit or root.sync.push or root.sync.pull


QUIET_OUTCOMES = ("ok", "disabled", "done")  # nothing the user must look at
# cycles that stopped before sorting the files: they say nothing of the quarantined ones
UNSORTED = ("busy", "blocked", "failed", "unavailable")
STOPPED = "stopped"  # the daemon's stop ended the cycle (memoryd.sync.engine.CUT_SHORT)


def describe(outcome: Any) -> tuple[str, str]:
    """(status word, one-line message) from the ``SyncOutcome`` that ``sync_root`` returned."""
    word = str(getattr(outcome, "status", None) or "done")
    message = getattr(outcome, "message", None) or getattr(outcome, "error", None) or ""
    return word, str(message)


class Syncer:
    def __init__(
        self,
        scheduler: Scheduler,
        status: StatusBoard,
        paths: Paths,
        config: Callable[[], Config],
        paused: Callable[[Path], bool],
    ) -> None:
        self.scheduler, self.status, self.paths = scheduler, status, paths
        self.config, self.paused = config, paused
        self._locks: dict[Path, threading.Lock] = {}
        self._guard = threading.Lock()
        self._told: dict[Path, set[tuple[str, int, str, str]]] = {}  # quarantined, logged
        self._said: dict[Path, str] = {}  # the problem last logged for a root, until it clears

    def touch(self, root: RootConfig) -> None:
        """A batch changed ``root``: sync it once it has been quiet for ``debounce_s``."""
        if syncs(root) and self.scheduler.running:
            key = f"sync:{root.path}"
            self.scheduler.after(key, root.sync.debounce_s, lambda: self.run(root.path))

    def resume(self) -> None:
        """At start: sync now each root whose last cycle the last stop cut short."""
        try:
            from memoryd.sync.state import load_state
        except ImportError:  # no sync engine in this build (see _sync)
            return
        for root in self.config().roots:
            if syncs(root) and load_state(self.paths, root.path).cut_short:
                self.scheduler.now(f"sync:{root.path}", functools.partial(self.run, root.path))

    def run_all(self) -> None:
        for root in self.config().roots:
            if syncs(root):
                self.run(root.path)

    def run(self, path: Path) -> None:
        root = next((r for r in self.config().roots if r.path == path), None)
        if root is None or self.paused(path) or not path.is_dir():
            return
        with self._lock_for(path):
            outcome, message, hint, held, copies, crash = self._sync(root)
            if outcome not in UNSORTED:  # a cycle that sorted files
                self._tell_quarantined(path, held)
        if copies:
            from memoryd.conflicts import conflicts_line

            log.warning("sync of %s: %s", path, conflicts_line(copies))
        self.status.root(path, last_sync={"at": now_iso(), "outcome": outcome, "message": message})
        if outcome == "busy":  # another process was syncing this repo: nothing learned
            return
        if outcome == STOPPED:  # the stop ended it: nothing wrong, nothing learned
            log.info("sync of %s: %s", path, message)
            return
        prefix = f"sync of {path}: "
        current = None
        self._tell(path, outcome, message, crash)
        if outcome not in QUIET_OUTCOMES:
            current = f"{prefix}{outcome}: {message}" + (f" ({hint})" if hint else "")
            self.status.problem(current)  # added before the old one goes: never a gap
        for text in self.status.snapshot().problems:
            if text.startswith(prefix) and text != current:
                self.status.problem(text, present=False)

    def _tell(
        self, path: Path, outcome: str, message: str, crash: Exception | None = None
    ) -> None:
        """Log a cycle's problem when it is new or changed (a crash with its traceback), and
        once that it cleared."""
        said = self._said.get(path)
        if outcome in QUIET_OUTCOMES:
            if said is not None:
                log.info("sync of %s: working again: %s", path, message)
                del self._said[path]
            return
        text = f"{outcome}: {message}"
        if text != said:
            log.log(logging.ERROR if crash else logging.WARNING, "sync of %s: %s", path, text,
                    exc_info=crash)  # fmt: skip
            self._said[path] = text

    def _sync(
        self, root: RootConfig
    ) -> tuple[str, str, str | None, list[Any], list[str], Exception | None]:
        """(status word, message, hint, quarantined findings, the files of the conflict
        copies it saved, the exception it crashed with) of one cycle; never raises."""
        try:  # the sync engine is a separate subsystem; a build without it still serves
            engine: Any = importlib.import_module("memoryd.sync.engine")
        except ImportError:
            return "unavailable", "this memoryd has no sync engine", None, [], [], None
        try:
            outcome = engine.sync_root(self.config(), self.paths, root)
        except Exception as exc:  # a failed cycle must not stop the daemon; _tell logs it
            return "failed", f"{type(exc).__name__}: {exc}", None, [], [], exc
        held = list(getattr(outcome, "quarantined", None) or [])
        copies = [str(c["path"]) for c in getattr(outcome, "conflicts", None) or []]
        return (*describe(outcome), getattr(outcome, "hint", None), held, copies, None)

    def _tell_quarantined(self, path: Path, held: list[Any]) -> None:
        """Log each finding that newly holds a file back; one released and back is new again."""
        if not held and not self._told.get(path):
            return
        from memoryd.sync.report import quarantine_advice

        now = {(q.path, q.line, q.rule, q.preview) for q in held}
        for rel, line, rule, preview in sorted(now - self._told.get(path, set())):
            what, fix = quarantine_advice(line, rule, preview)
            log.warning("sync of %s: %s kept out of git: %s; %s", path, rel, what, fix)
        self._told[path] = now

    def _lock_for(self, path: Path) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(path, threading.Lock())
