"""Which sessions changed, and extracting each once its turn has settled.

The daemon tells :meth:`Tracker.touched` about every changed file under the
folders of :meth:`Tracker.watched` (cheap: a path test and a set insert, on the
watcher's thread) and calls :meth:`Tracker.settle` for a bucket once no file of
it changed for ``extract.settle_ms``. A bucket is one Claude Code transcript
file, the OpenCode database, or the OpenCode JSON store. ``settle`` answers how
long to wait before asking again when a session in the bucket is still active.

Only sessions active while the daemon runs are extracted: the first time
memoryd sees the OpenCode database its watermark starts at the newest write
already there (:meth:`Tracker.prime`), so years of old sessions are not sent to
a paid model at once; Claude Code transcripts count once they change. Sessions
that worked in the extractor's own folder (an agent CLI used as the extractor)
are never extracted.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from memoryd.extract import transcript
from memoryd.extract.extractor import Extractor, extractor_dir
from memoryd.extract.transcript import Conversation

log = logging.getLogger(__name__)

DB_FILES = ("opencode.db", "opencode.db-wal")
CLAUDE_BUCKET, DB_BUCKET, JSON_BUCKET = "claude:", "opencode-db", "opencode-json"


@dataclass(frozen=True)
class Watch:
    path: Path
    recursive: bool


def opencode_data_dir(env: Mapping[str, str]) -> Path:
    """OpenCode's data folder: ``$XDG_DATA_HOME/opencode``, else ``~/.local/share/opencode``."""
    xdg = env.get("XDG_DATA_HOME", "")
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "opencode"
    return Path(env.get("HOME") or str(Path.home())) / ".local" / "share" / "opencode"


def for_app(extractor: Extractor) -> Tracker:
    """A tracker of the transcript folders ``extract.claude`` and ``extract.opencode`` turn on."""
    from memoryd.layouts import claude_projects_dir

    env, settings = extractor.app.env, extractor.settings()
    return Tracker(
        extractor,
        claude_dir=claude_projects_dir(env) if settings.claude else None,
        opencode_dir=opencode_data_dir(env) if settings.opencode else None,
    )


class Tracker:
    def __init__(
        self, extractor: Extractor, *, claude_dir: Path | None, opencode_dir: Path | None,
        clock: Callable[[], float] = time.time,
    ) -> None:  # fmt: skip
        self.extractor = extractor
        self.claude_dir = claude_dir
        self.opencode_dir = opencode_dir
        self.clock = clock
        self._pending: dict[str, set[Path]] = {}
        self._lock = threading.Lock()
        self._own = extractor_dir(extractor.app).resolve()
        self._claude = transcript.ClaudeReader()

    @property
    def settle_s(self) -> float:
        return self.extractor.settings().settle_ms / 1000

    def watched(self) -> list[Watch]:
        """The folders to watch that exist now (the daemon asks again when one is missing)."""
        wanted: list[Watch] = []
        if self.claude_dir is not None:
            wanted.append(Watch(self.claude_dir, recursive=True))
        if self.opencode_dir is not None:
            wanted.append(Watch(self.opencode_dir, recursive=False))  # opencode.db and its WAL
            for sub in ("message", "part"):
                wanted.append(Watch(self.opencode_dir / "storage" / sub, recursive=True))
        return [w for w in wanted if w.path.is_dir()]

    def wanted(self) -> list[Path]:
        """Every folder :meth:`watched` would watch once it exists."""
        paths = [] if self.claude_dir is None else [self.claude_dir]
        if self.opencode_dir is not None:
            storage = self.opencode_dir / "storage"
            paths += [self.opencode_dir, storage / "message", storage / "part"]
        return paths

    def prime(self) -> None:
        """Start the OpenCode database's watermark at its newest write, the first time only."""
        if self.opencode_dir is None or DB_BUCKET in self.extractor.ledger.marks:
            return
        newest = transcript.opencode_db_newest(self.opencode_dir / DB_FILES[0])
        self.extractor.ledger.mark(DB_BUCKET, newest)

    def bucket_of(self, path: Path) -> str | None:
        """The bucket a changed file belongs to (None: not a transcript)."""
        claude = self.claude_dir
        if claude is not None and path.suffix == ".jsonl" and path.parent.parent == claude:
            return CLAUDE_BUCKET + str(path)  # <slug>/<session>.jsonl, not subagents' files
        if self.opencode_dir is not None:
            if path.parent == self.opencode_dir and path.name in DB_FILES:
                return DB_BUCKET
            storage = self.opencode_dir / "storage"
            if path.suffix == ".json" and storage in path.parents:
                return JSON_BUCKET
        return None

    def touched(self, path: Path) -> str | None:
        """Note a changed file; the bucket whose settle timer should restart (None: ignore)."""
        bucket = self.bucket_of(path)
        if bucket is not None:
            with self._lock:
                self._pending.setdefault(bucket, set()).add(path)
        return bucket

    def settle(self, bucket: str) -> float | None:
        """Extract the bucket's settled sessions; seconds to wait when one is still active."""
        with self._lock:
            paths = self._pending.pop(bucket, set())
        conversations = self._load(bucket, paths)
        wait: float | None = None
        now = self.clock()
        for conv in conversations:
            if self._own_session(conv):
                continue
            quiet = now - conv.updated
            if quiet < self.settle_s:
                left = self.settle_s - quiet
                wait = left if wait is None else min(wait, left)
                continue
            self.extractor.consider(conv)
        if wait is not None:
            with self._lock:
                self._pending.setdefault(bucket, set()).update(paths)
        elif bucket == DB_BUCKET and conversations:
            newest = max(c.updated for c in conversations)
            self.extractor.ledger.mark(DB_BUCKET, newest * 1000)
        return wait

    def _own_session(self, conv: Conversation) -> bool:
        if conv.cwd is None:
            return False
        try:
            return conv.cwd.resolve() == self._own or self._own in conv.cwd.resolve().parents
        except OSError:
            return False

    def _load(self, bucket: str, paths: set[Path]) -> list[Conversation]:
        if bucket.startswith(CLAUDE_BUCKET):
            found = self._claude.read(Path(bucket[len(CLAUDE_BUCKET) :]))
            return [] if found is None else [found]
        if self.opencode_dir is None:
            return []
        if bucket == DB_BUCKET:
            self.prime()
            since = self.extractor.ledger.marks[DB_BUCKET]
            return transcript.opencode_db_sessions(self.opencode_dir / DB_FILES[0], int(since))
        storage = self.opencode_dir / "storage"
        sessions = {s for p in paths if (s := transcript.opencode_json_session_of(storage, p))}
        loaded = (transcript.opencode_json_session(storage, s) for s in sorted(sessions))
        return [c for c in loaded if c is not None]
