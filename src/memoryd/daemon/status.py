"""The daemon's status file: rewritten atomically on every change of state.

The daemon owns a :class:`StatusBoard`; ``memoryd status`` and ``memoryd
doctor`` call :func:`read_status`, which also tells whether the daemon that
wrote the file is still alive (the lock file is the truth, not the pid in the
status file).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memoryd.fsutil import atomic_write, read_or_none
from memoryd.paths import Paths
from memoryd.runlock import running_pid

log = logging.getLogger(__name__)


def now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


@dataclass
class RootState:
    """One watched root, as the daemon's status file records it."""

    mode: str = "none"  # events | polling | none (not watched)
    state: str = "starting"  # starting | watching | paused
    last_sync: dict[str, Any] | None = None  # {at, outcome, message}


@dataclass
class Status:
    """The daemon's status file: its pid, roots and last reconcile, batch and problems."""

    pid: int
    started_at: str
    updated_at: str = ""
    stopped_at: str | None = None
    roots: dict[str, RootState] = field(default_factory=dict)
    last_reconcile: dict[str, Any] | None = None  # {at, ms, roots, changed}
    last_batch: dict[str, Any] | None = None  # {at, files, ms}
    own_writes: int = 0  # events for the daemon's own writes, recognised and dropped so far
    problems: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Status:
        roots = {k: RootState(**v) for k, v in dict(data.get("roots") or {}).items()}
        known = {f.name for f in dataclasses.fields(cls)} - {"roots"}
        return cls(roots=roots, **{k: v for k, v in data.items() if k in known})


@dataclass(frozen=True)
class StatusView:
    """What a reader learns: the last status written and whether its writer lives."""

    status: Status | None
    running_pid: int | None  # from the lock file
    unreadable: str = ""  # why the status file could not be read ("" when it was, or is absent)

    @property
    def running(self) -> bool:
        return self.running_pid is not None

    @property
    def stale(self) -> bool:
        """A status that claims a live daemon whose process is gone (or is another one)."""
        if self.status is None or self.status.stopped_at is not None:
            return False
        return self.running_pid != self.status.pid


def read_status(paths: Paths) -> StatusView:
    """The status file (None when absent or unreadable) and the live daemon's pid."""
    status: Status | None = None
    unreadable = ""
    try:
        status = Status.from_json(json.loads(paths.status_file.read_text(encoding="utf-8")))
    except FileNotFoundError:
        pass
    except (OSError, ValueError, TypeError) as exc:
        log.debug("cannot read %s: %s", paths.status_file, exc)
        unreadable = str(exc) or type(exc).__name__
    return StatusView(status, running_pid(paths.lock_file), unreadable)


REWRITTEN = "the daemon writes it again within seconds; if it stays so, restart the daemon"


def unreadable_status(paths: Paths, view: StatusView) -> str:
    """What a reader says of a running daemon whose status file it cannot read (deleted,
    or garbled by hand): the daemon runs, which "no daemon is running" denied."""
    why = f"cannot be read ({view.unreadable})" if view.unreadable else "is missing"
    return f"its status file {paths.status_file} {why}"


class StatusBoard:
    """The daemon's live status; every change rewrites the file atomically."""

    def __init__(self, file: Path) -> None:
        self.file = file
        self._lock = threading.Lock()
        self.status = Status(pid=os.getpid(), started_at=now_iso())
        self.detached = False  # another daemon owns the file now: never write it again
        self._written: bytes | None = None  # the file's bytes as last written

    def detach(self) -> None:
        """Write the file no more (another daemon took the lock and writes its own)."""
        with self._lock:
            self.detached = True

    def update(self, **fields: Any) -> None:
        with self._lock:
            for key, value in fields.items():
                setattr(self.status, key, value)
            self._write()

    def root(self, path: Path, **fields: Any) -> None:
        with self._lock:
            state = self.status.roots.setdefault(str(path), RootState())
            for key, value in fields.items():
                setattr(state, key, value)
            self._write()

    def forget_root(self, path: Path) -> None:
        with self._lock:
            self.status.roots.pop(str(path), None)
            self._write()

    def problem(self, text: str, present: bool = True) -> None:
        """Add (or, with ``present=False``, clear) one pending problem."""
        with self._lock:
            problems = self.status.problems
            if present == (text in problems):
                return
            if present:
                problems.append(text)
            else:
                problems.remove(text)
            self._write()

    def clear_problems(self, prefix: str) -> None:
        """Clear every pending problem that starts with ``prefix`` (written at once, so a
        reader never sees a problem that is over)."""
        with self._lock:
            problems = self.status.problems
            kept = [p for p in problems if not p.startswith(prefix)]
            if kept != problems:
                problems[:] = kept
                self._write()

    def restore(self) -> bool:
        """Write the file again when it is no longer as last written (deleted, garbled or
        replaced by hand): readers took a daemon without a readable status for none, and
        nothing rewrote it before the next change of state (a sync, up to 5 minutes)."""
        with self._lock:
            # compared by content, not by a stat: one taken after the rename could already be
            # of a file garbled in between, which then passed for the daemon's own
            if self.detached or self._written is None or read_or_none(self.file) == self._written:
                return False
            log.info("%s was changed or deleted by something else: written again", self.file)
            self._write()
            return True

    def snapshot(self) -> Status:
        with self._lock:
            return Status.from_json(json.loads(json.dumps(self.status.to_json())))

    def _write(self) -> None:
        if self.detached:
            return
        self.status.updated_at = now_iso()
        text = json.dumps(self.status.to_json(), indent=2, ensure_ascii=False) + "\n"
        # A non-UTF-8 file name in a problem is a lone surrogate: backslashreplace writes it
        # as the JSON escape "\udce9", which reads back as the same name (UTF-8 "strict"
        # raised here, on the batch thread, with the daemon's lock held)
        data = text.encode("utf-8", "backslashreplace")
        try:
            atomic_write(self.file, data)
        except OSError as exc:  # a full disk must not stop the daemon
            self._written = None  # not restored on every tick: the next change writes it
            log.warning("cannot write %s: %s", self.file, exc)
            return
        self._written = data
