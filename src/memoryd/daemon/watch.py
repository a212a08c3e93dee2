"""Watching roots: one native observer for all of them, polling where it is refused.

The handler only filters and queues (it runs on watchdog's thread); all the
work happens in the batch worker. When the OS refuses a watch (ENOSPC: the
inotify watch limit; EMFILE: too many inotify instances) the root is watched
by a PollingObserver instead, with one warning naming the sysctl to raise.

A root's ``watch`` setting (see memoryd.config) decides the rest: ``auto``
polls a root on a network file system, whose watches are granted but never
report changes made by other machines (see memoryd.daemon.mounts); ``events``
never switches on its own; ``polling`` always polls.
"""

from __future__ import annotations

import errno
import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memoryd.daemon import mounts
from memoryd.daemon.batching import Change, Kind
from memoryd.roots import listed_by_name, visible

log = logging.getLogger(__name__)

Sink = Callable[[Change], None]
ObserverFactory = Callable[[], Any]  # -> a watchdog BaseObserver
LIMIT_ERRNOS = (errno.ENOSPC, errno.EMFILE, errno.ENFILE)
LIMIT_HINT = (
    "raise the limit with 'sudo sysctl fs.inotify.max_user_watches=524288' "
    "(and max_user_instances), or leave it: polling works, it just costs more CPU"
)
_FILE_KINDS = {"created": Kind.CREATED, "modified": Kind.MODIFIED, "closed": Kind.MODIFIED}
_FILE_KINDS["deleted"] = Kind.DELETED
# Why a root is polled (Watcher.reasons): the OS refused its watch, its file
# system reports no remote changes, or config.yaml says so.
LIMIT, FILESYSTEM, SETTING = "limit", "filesystem", "setting"


def relevant_file(root: Path, path: Path) -> bool:
    """A memory file of ``root`` (not under .git/ or a hidden folder, not a temp file)."""
    return listed_by_name(root, path)


def relevant_dir(root: Path, path: Path) -> bool:
    """A folder a walk of ``root`` would enter, by its names."""
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        return False
    return bool(parts) and visible(parts)


def to_change(root: Path, kind: str, src: Path, dest: Path | None, is_dir: bool) -> Change | None:
    """One watchdog event as a daemon change, or None when it does not matter."""
    if is_dir:
        if kind in ("deleted", "moved") and src == root:
            return Change(Kind.ROOT_GONE, root)
        if kind not in ("created", "deleted", "moved"):
            return None
        if relevant_dir(root, src) or (dest is not None and relevant_dir(root, dest)):
            return Change(Kind.RESCAN, root)
        return None
    if kind == "moved" and dest is not None:
        src_ok, dest_ok = relevant_file(root, src), relevant_file(root, dest)
        if src_ok and dest_ok:
            return Change(Kind.MOVED, src, dest)
        if dest_ok:
            return Change(Kind.MOVED_IN, dest)
        return Change(Kind.DELETED, src) if src_ok else None
    mapped = _FILE_KINDS.get(kind)
    if mapped is None or not relevant_file(root, src):
        return None
    return Change(mapped, src)


def unwatched(root: Path, watched: set[bytes], among: list[str] | None = None) -> list[str]:
    """Folders below ``root`` (or of ``among``) that still exist and have no watch."""
    if among is None:
        among = [
            os.path.join(top, name)
            for top, names, _files in os.walk(root)
            for name in names
            if not os.path.islink(os.path.join(top, name))
        ]
    return [d for d in among if os.fsencode(d) not in watched and os.path.isdir(d)]


def _path(raw: str | bytes) -> Path:
    return Path(os.fsdecode(raw))


class Handler:
    """A watchdog event handler for one root: filter, convert, queue. Nothing else."""

    def __init__(self, root: Path, sink: Sink) -> None:
        self.root = root
        self.sink = sink

    def dispatch(self, event: Any) -> None:
        dest = getattr(event, "dest_path", "") or None
        change = to_change(
            self.root,
            event.event_type,
            _path(event.src_path),
            _path(dest) if dest else None,
            event.is_directory,
        )
        if change is not None:
            self.sink(change)


def _event_filter() -> list[type[Any]]:
    from watchdog import events as ev

    return [
        ev.FileCreatedEvent, ev.FileModifiedEvent, ev.FileDeletedEvent, ev.FileMovedEvent,
        ev.FileClosedEvent, ev.DirCreatedEvent, ev.DirDeletedEvent, ev.DirMovedEvent,
    ]  # fmt: skip


def native_observer() -> Any:
    from watchdog.observers import Observer

    return Observer()


class Watcher:
    """Owns the observers; ``add``/``remove`` roots; knows each root's watch mode."""

    def __init__(
        self, sink: Sink, poll_interval: float, native: ObserverFactory = native_observer
    ) -> None:
        self.sink = sink
        self.poll_interval = poll_interval
        self._native_factory = native
        self._native: Any = None
        self._polling: Any = None
        self._watches: dict[Path, tuple[Any, Any]] = {}  # root -> (observer, watch)
        self.modes: dict[Path, str] = {}
        self.reasons: dict[Path, str] = {}  # polled roots only: LIMIT, FILESYSTEM or SETTING
        self.warned = False
        self._fs_warned: set[Path] = set()
        self._lock = threading.Lock()

    def start(self) -> None:
        try:
            self._native = self._native_factory()
            self._native.start()
        except OSError as exc:
            self._native = None
            self._warn_limit(None, exc)

    def add(self, root: Path, watch: str = "auto") -> str:
        """Watch ``root`` (which must exist) as its ``watch`` setting says
        (auto, events or polling); returns "events" or "polling"."""
        with self._lock:
            if root in self._watches:
                return self.modes[root]
            reason = self._polling_reason(root, watch)
            if reason is None:
                if self._native is not None:
                    try:
                        self._schedule(self._native, root)
                        self._check_coverage(root)
                        self.modes[root] = "events"
                        return "events"
                    except OSError as exc:
                        if exc.errno not in LIMIT_ERRNOS:
                            raise
                        self._unschedule(root)
                        self._warn_limit(root, exc)
                reason = LIMIT
            self._schedule(self._polling_observer(), root)
            self.modes[root], self.reasons[root] = "polling", reason
            return "polling"

    def remove(self, root: Path) -> None:
        with self._lock:
            self.modes.pop(root, None)
            self.reasons.pop(root, None)
            self._unschedule(root)

    def _polling_reason(self, root: Path, watch: str) -> str | None:
        """Why ``root`` must be polled before any watch is tried (None: try events)."""
        if watch == "polling":
            log.info("watch: polling for %s: polled every %.1fs", root, self.poll_interval)
            return SETTING
        fstype = mounts.filesystem_of(root)
        if fstype is None or not mounts.no_remote_events(fstype):
            return None
        if watch == "events":
            log.info("%s is on %s, watched for events as config.yaml says", root, fstype)
            return None
        if root not in self._fs_warned:
            self._fs_warned.add(root)
            log.warning(
                "%s is on a %s file system, which does not report changes made by other "
                "machines: polling it every %.1fs. If it only changes here, set "
                "'watch: events' on this root in config.yaml",
                root, fstype, self.poll_interval,
            )  # fmt: skip
        return FILESYSTEM

    def _unschedule(self, root: Path) -> None:
        entry = self._watches.pop(root, None)
        if entry is not None:
            observer, watch = entry
            try:
                observer.unschedule(watch)
            except (KeyError, OSError) as exc:  # the folder may be gone already
                log.debug("unschedule %s: %s", root, exc)

    def stop(self) -> None:
        for observer in (self._native, self._polling):
            if observer is not None:
                observer.stop()
        for observer in (self._native, self._polling):
            if observer is not None and observer.is_alive():
                observer.join(timeout=10)
        self._native = self._polling = None
        self._watches.clear()

    def _schedule(self, observer: Any, root: Path) -> None:
        handler = Handler(root, self.sink)
        watch = observer.schedule(handler, str(root), recursive=True, event_filter=_event_filter())
        self._watches[root] = (observer, watch)

    def _check_coverage(self, root: Path) -> None:
        """Raise ENOSPC when the OS refused a watch on some folder below ``root``.

        watchdog raises only when the root's own watch is refused and skips its
        folders silently; their events would be lost until the next reconcile.
        """
        observer, watch = self._watches[root]
        try:  # watchdog's inotify internals; elsewhere (or another version) trust it
            group = observer._emitter_for_watch[watch]._inotify
            missing = unwatched(root, set(group._active_callbacks_by_path))
        except (AttributeError, KeyError, TypeError):
            return
        if missing:
            time.sleep(0.2)  # a folder created just now gets its watch from its own event
            missing = unwatched(root, set(group._active_callbacks_by_path), missing)
        if missing:
            raise OSError(errno.ENOSPC, f"no watch for {len(missing)} folders, e.g. {missing[0]}")

    def _polling_observer(self) -> Any:
        if self._polling is None:
            from watchdog.observers.polling import PollingObserver

            self._polling = PollingObserver(timeout=self.poll_interval)
            self._polling.start()
        return self._polling

    def _warn_limit(self, root: Path | None, exc: OSError) -> None:
        if self.warned:
            return
        self.warned = True
        where = f"{root}" if root else "any root"
        log.warning(
            "cannot watch %s for events (%s); polling every %.1fs instead. "
            "This is usually the fs.inotify.max_user_watches limit: %s",
            where, exc.strerror or exc, self.poll_interval, LIMIT_HINT,
        )  # fmt: skip
