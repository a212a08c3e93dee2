"""Per-root sync state in memoryd's state folder, and the per-repository lock.

``memoryd status`` and ``memoryd inspect`` read :func:`load_state` /
:func:`all_states` to show the last sync, commits not pushed, the last error,
pauses, quarantined files and recent notices without running git.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memoryd.errors import MemorydError
from memoryd.fsutil import PRIVATE_FILE, atomic_write, private_dirs
from memoryd.memory import printable
from memoryd.paths import Paths
from memoryd.sync.git import NET_TIMEOUT_S

MAX_NOTICES = 20


NAME_LINE = 0  # a quarantined file's line when the secret is in its name (the scanner's)
CONFLICT_MARKERS = "conflict-markers"  # the rule of a file quarantined for <<<<<<< lines


@dataclass
class SyncState:
    """What the last cycles of one root left behind (JSON in the state folder)."""

    root: str
    last_attempt_ms: int = 0
    last_sync_ms: int = 0  # last cycle that reached the remote (or had none to reach)
    last_status: str = ""
    last_error: str | None = None
    last_hint: str | None = None  # what to do about last_error, as the cycle said it
    not_pushed: int = 0
    paused: dict[str, Any] | None = None  # {"reason", "deleted", "total"}
    quarantined: list[dict[str, Any]] = field(default_factory=list)  # path, line, rule, preview
    left_out: list[dict[str, str]] = field(default_factory=list)  # path, why (size, sync: false)
    notices: list[dict[str, Any]] = field(default_factory=list)  # time_ms, text
    failures: int = 0  # network failures in a row
    retry_after_ms: int = 0
    cut_short: bool = False  # the daemon's stop ended the last cycle: its next start syncs
    whole_head: str = ""  # the branch's head as last found with every object (sync.heal)
    ahead_since_ms: int = 0  # when a cycle first found commits not pushed (0: none now)

    def notice(self, text: str, now_ms: int) -> None:
        self.notices = [*self.notices, {"time_ms": now_ms, "text": text}][-MAX_NOTICES:]

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def ahead_line(state: SyncState, warn_s: float, now: int) -> str | None:
    """What to tell when the root has been ahead of its remote longer than ``warn_s``
    (status, the UI and the agent's context say it, so writes never silently stay local)."""
    if not (state.not_pushed and state.ahead_since_ms and warn_s > 0):
        return None
    ahead_s = (now - state.ahead_since_ms) / 1000
    if ahead_s < warn_s:
        return None
    took = f"{ahead_s / 3600:.1f} h" if ahead_s >= 5400 else f"{ahead_s / 60:.0f} min"
    why = f" ({state.last_error})" if state.last_error else ""
    return (
        f"{state.not_pushed} commit(s) of {state.root} not pushed for {took}{why}: what is "
        "written there stays on this device until a sync reaches the remote"
    )


def sync_dir(paths: Paths) -> Path:
    return paths.state_dir / "sync"


def _key(path: Path) -> str:
    import hashlib  # here: the agent's context reads states with no OpenSSL (all_states)

    digest = hashlib.sha1(str(path).encode("utf-8")).hexdigest()[:12]
    return f"{path.name or 'root'}-{digest}"


def state_file(paths: Paths, root: Path) -> Path:
    return sync_dir(paths) / f"{_key(root)}.json"


def load_state(paths: Paths, root: Path) -> SyncState:
    """The stored state of ``root`` (a fresh one when there is none or it is unreadable)."""
    try:
        data = json.loads(state_file(paths, root).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return SyncState(root=str(root))
    return _state(data, str(root))


def _state(data: Any, root: str) -> SyncState:
    known = {f.name for f in dataclasses.fields(SyncState)}
    try:
        return SyncState(**{**{k: v for k, v in data.items() if k in known}, "root": root})
    except (TypeError, AttributeError):
        return SyncState(root=root)


def save_state(paths: Paths, state: SyncState) -> None:
    data = state.to_json()  # ASCII escapes: a non-UTF-8 file name (a surrogate) survives
    text = json.dumps(data, ensure_ascii=True, indent=2, sort_keys=True)
    atomic_write(state_file(paths, Path(state.root)), (text + "\n").encode("utf-8"))


def all_states(paths: Paths) -> list[SyncState]:
    """Every root's stored state (for status, inspect and the agent's context: read as the
    files are, no hashing of names, so a prompt's hook loads no OpenSSL)."""
    folder = sync_dir(paths)
    if not folder.is_dir():
        return []
    states = []
    for file in sorted(folder.glob("*.json")):
        with contextlib.suppress(OSError, ValueError, TypeError, KeyError):
            data = json.loads(file.read_text(encoding="utf-8"))
            states.append(_state(data, str(data["root"])))
    return states


def now_ms() -> int:
    return int(time.time() * 1000)


class RepoBusy(MemorydError):
    """The repository's sync lock is held; ``holder`` is what the holder wrote in the lock
    file (its pid and command), so the message names it instead of guessing "the daemon"."""

    def __init__(self, repo: Path, holder: str = "") -> None:
        who = f" ({holder})" if holder else ""
        super().__init__(
            f"another memoryd sync{who} is running on {repo}",
            hint="wait for it to finish and try again (a fetch or push waits up to "
            f"{NET_TIMEOUT_S:g} s for a remote that does not answer)",
        )


@contextlib.contextmanager
def repo_lock(paths: Paths, repo: Path, wait_s: float = 30.0) -> Iterator[None]:
    """Hold the per-repository lock (flock: a killed holder never blocks anyone)."""
    file = sync_dir(paths) / f"{_key(repo)}.lock"
    private_dirs(file.parent)
    fd = os.open(file, os.O_RDWR | os.O_CREAT, PRIVATE_FILE)
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise RepoBusy(repo, _holder(fd)) from None
                time.sleep(0.05)
        _claim(fd)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _claim(fd: int) -> None:
    """Write who holds the lock into the lock file (the flock itself is the lock)."""
    with contextlib.suppress(OSError):
        name = " ".join(["memoryd", *sys.argv[1:2]])  # memoryd run: the daemon
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}, {name}".encode(), 0)


def _holder(fd: int) -> str:
    with contextlib.suppress(OSError):
        return printable(os.pread(fd, 200, 0).decode("utf-8", "replace").strip())
    return ""
