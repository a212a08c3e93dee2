"""What extraction has done per session: how far it got, and its last outcome with the reason.

``<state>/extract.json`` keeps, for every session memoryd looked at, how many
turns were already handed to the extractor (so only new turns go next time),
and the last attempt: when, the outcome, why nothing was written when nothing
was, what was written and what was refused, and the command's stderr when it
failed. ``memoryd status`` and ``memoryd inspect`` read it, so "nothing
extracted" and "extraction broken" are never confused.

``marks`` holds the per-source watermarks that say where old sessions end (the
OpenCode database's newest settled write in ms; the mtime, in epoch seconds, up
to which every Claude Code transcript settled): see memoryd.extract.tracker.

Top-level, not in ``extract/``: inspect (and its MCP tool in ``agent/``) reads the
ledger, while ``extract/`` writes through ``agent/remember``; below both, no loop.
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from memoryd.fsutil import atomic_write

log = logging.getLogger(__name__)

LEDGER_FILE = "extract.json"
KEEP_SESSIONS = 200  # the oldest entries beyond this are dropped
# Outcomes: written (at least one memory), nothing (ran, or decided not to run, and wrote
# nothing: the reason says why), failed (the command failed: reason and stderr say how).
WRITTEN, NOTHING, FAILED = "written", "nothing", "failed"
NO_COMMAND = "no extract.command is configured, so nothing is extracted"


@dataclass
class Attempt:
    """One extraction attempt on a session and its outcome."""

    at: str  # ISO 8601, UTC
    outcome: str
    reason: str
    turns: int  # the session's turns at the time
    written: list[str] = field(default_factory=list)  # "<scope>:<id>"
    refused: list[str] = field(default_factory=list)  # "<summary>: <why>"
    stderr: str = ""


@dataclass
class SessionEntry:
    """One agent session in the extraction ledger: how far it has been extracted."""

    agent: str
    session: str
    transcript: str
    cwd: str | None
    turns_done: int = 0
    last: Attempt | None = None


class Ledger:
    """The ledger file, read once and written after every change (one lock around it)."""

    def __init__(self, state_dir: Path) -> None:
        self.file = state_dir / LEDGER_FILE
        self._lock = threading.Lock()
        self.sessions: dict[str, SessionEntry] = {}
        self.marks: dict[str, float] = {}  # per-source watermarks (see the module docstring)
        self._load()

    def _load(self) -> None:
        try:
            data = json.loads(self.file.read_bytes())
        except FileNotFoundError:
            return
        except (OSError, ValueError) as exc:
            log.warning("ignoring unreadable %s: %s", self.file, exc)
            return
        if not isinstance(data, dict):
            return
        for key, raw in (data.get("sessions") or {}).items():
            try:
                last = raw.get("last")
                fields = {**raw, "last": Attempt(**last) if isinstance(last, dict) else None}
                self.sessions[key] = SessionEntry(**fields)
            except (TypeError, AttributeError):
                log.debug("dropping a malformed ledger entry %s", key)
        marks = data.get("marks")
        if isinstance(marks, dict):
            self.marks = {k: float(v) for k, v in marks.items() if isinstance(v, int | float)}

    def entry(self, key: str) -> SessionEntry | None:
        with self._lock:
            return self.sessions.get(key)

    def record(self, key: str, entry: SessionEntry) -> None:
        with self._lock:
            self.sessions.pop(key, None)
            self.sessions[key] = entry  # the newest last: the order is recency
            while len(self.sessions) > KEEP_SESSIONS:
                del self.sessions[next(iter(self.sessions))]
            self._save()

    def mark(self, name: str, value: float) -> None:
        with self._lock:
            self.marks[name] = value
            self._save()

    def _save(self) -> None:
        data: dict[str, Any] = {
            "sessions": {k: asdict(v) for k, v in self.sessions.items()},
            "marks": self.marks,
        }
        text = json.dumps(data, ensure_ascii=False, indent=1) + "\n"
        atomic_write(self.file, text.encode("utf-8"))


def read_entries(state_dir: Path) -> list[SessionEntry]:
    """Every session's entry, newest first (for status and inspect)."""
    return list(reversed(Ledger(state_dir).sessions.values()))
