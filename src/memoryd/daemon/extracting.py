"""The daemon's side of auto-extraction: watch the transcript folders, time the settles.

Nothing runs while no ``extract.command`` is configured: no watch, no timer.
With one, a native observer of its own watches the agents' transcript folders
(a changed transcript costs one path test on watchdog's thread); each change
arms its bucket's one-shot timer ``extract.settle_ms`` ahead unless one is armed
already (a streaming answer writes many times a second; the timer is not moved
for each write). When it fires, the tracker measures the real quiet from the
transcript itself, extracts the settled sessions on the scheduler's thread and
re-arms for the rest of the wait where a session is still active. An idle
machine has no timer and no polling at all. Whatever goes
wrong there is logged and the daemon carries on (see memoryd.daemon.scheduler).
Folders that do not exist yet are looked for again on the daemon's tick.

When a watch begins, the transcripts already there that changed since the
ledger's watermark count as changed (turns written while the daemon was down,
or in the moment between its start and the watch); a clean stop moves the
watermark up to what has settled (see memoryd.extract.tracker).
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memoryd.app import App
from memoryd.config.sections import Config
from memoryd.daemon.scheduler import Scheduler
from memoryd.daemon.watch import ObserverFactory

if TYPE_CHECKING:
    from memoryd.extract.tracker import Tracker, Watch

log = logging.getLogger(__name__)

JOB_PREFIX = "extract:"


class _Handler:
    def __init__(self, owner: Extraction) -> None:
        self.owner = owner

    def dispatch(self, event: Any) -> None:
        if event.is_directory or event.event_type in ("opened", "closed_no_write", "deleted"):
            return
        for raw in (event.src_path, getattr(event, "dest_path", "") or None):
            if raw:
                self.owner.changed(Path(os.fsdecode(raw)))


class Extraction:
    def __init__(
        self, app: App, scheduler: Scheduler, config: Config, native: ObserverFactory
    ) -> None:
        self.app = app
        self.scheduler = scheduler
        self.config = config
        self.native = native
        self.tracker: Tracker | None = None
        self._observer: Any = None
        self._watched: set[Path] = set()
        self._armed: set[str] = set()
        self._lock = threading.Lock()

    def start(self, since: float | None = None) -> None:
        """Watch the transcript folders; ``since``: when the daemon began starting (the first
        run's Claude watermark: transcripts changed after it count; default now)."""
        if not self.config.extract.command:
            log.info("extraction is off: no extract.command in config.yaml")
            return
        from memoryd.extract.extractor import Extractor
        from memoryd.extract.tracker import for_app
        from memoryd.extract_ledger import Ledger

        extractor = Extractor(
            self.app, Ledger(self.app.paths.state_dir), settings=lambda: self.config.extract
        )
        self.tracker = for_app(extractor)
        self.tracker.prime(since)
        try:
            self._observer = self.native()
            self._observer.start()
        except OSError as exc:
            log.warning("extraction cannot watch transcripts: %s", exc)
            self._observer = None
            return
        self.check(late=False)
        log.info("extraction on: watching %s", ", ".join(map(str, sorted(self._watched))) or "-")

    def check(self, late: bool = True) -> None:
        """Watch transcript folders that appeared since the last look (the daemon's tick).

        Files already in a folder when its watch begins count as changed as
        :meth:`memoryd.extract.tracker.Tracker.backlog` says: Claude Code transcripts
        newer than the watermark at any time; in an OpenCode folder that appeared while
        the daemon runs (``late``), everything.
        """
        tracker = self.tracker
        if tracker is None or self._observer is None:
            return
        added: list[Watch] = []
        with self._lock:
            for watch in tracker.watched():
                if watch.path in self._watched:
                    continue
                try:
                    handler, where = _Handler(self), str(watch.path)
                    self._observer.schedule(handler, where, recursive=watch.recursive)
                except OSError as exc:
                    log.warning("cannot watch %s for transcripts: %s", watch.path, exc)
                    continue
                self._watched.add(watch.path)
                added.append(watch)
        for watch in added:
            backlog = tracker.backlog(watch, late)
            if backlog:
                log.info("%d transcripts in %s changed before the watch", len(backlog), watch.path)
            for path in backlog:
                self.changed(path)

    def changed(self, path: Path) -> None:  # watchdog's thread
        tracker = self.tracker
        if tracker is None:
            return
        bucket = tracker.touched(path)
        if bucket is None:
            return
        with self._lock:
            if bucket in self._armed:
                return
            self._armed.add(bucket)
        self._arm(bucket, tracker.settle_s)

    def _arm(self, bucket: str, seconds: float) -> None:
        self.scheduler.after(JOB_PREFIX + bucket, seconds, lambda: self._settle(bucket))

    def _settle(self, bucket: str) -> None:  # a scheduler thread
        tracker = self.tracker
        with self._lock:
            self._armed.discard(bucket)
        if tracker is None:
            return
        wait = tracker.settle(bucket)
        if wait is not None:
            with self._lock:
                if bucket in self._armed:  # a change armed it again meanwhile
                    return
                self._armed.add(bucket)
            self._arm(bucket, wait)

    def reconfigure(self, config: Config) -> None:
        """config.yaml changed: start, stop or keep extraction as ``extract`` now says."""
        old, self.config = self.config, config
        if old.extract == config.extract:
            return
        self.stop()
        self.start()

    def stop(self) -> None:
        observer, self._observer = self._observer, None
        tracker, self.tracker = self.tracker, None
        if tracker is not None:
            tracker.extractor.stopping.set()  # a running command ends; its turn is not settled
            tracker.advance()
        self._watched.clear()
        self._armed.clear()
        if observer is not None:
            observer.stop()
            if observer.is_alive():
                observer.join(timeout=10)
