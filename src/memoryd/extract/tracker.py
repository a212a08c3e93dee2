"""Which sessions changed, and extracting each once its turn has settled.

The daemon tells :meth:`Tracker.touched` about every changed file under the
folders of :meth:`Tracker.watched` (cheap: a path test and a set insert, on the
watcher's thread) and calls :meth:`Tracker.settle` for a bucket once no file of
it changed for ``extract.settle_ms``. A bucket is one Claude Code transcript
file, the OpenCode database, or the OpenCode JSON store. ``settle`` answers how
long to wait before asking again when a session in the bucket is still active.

Only sessions active since extraction first ran are extracted, so years of old
sessions are never sent to a paid model at once. Two watermarks in the ledger
say where "old" ends (:meth:`Tracker.prime` starts both the first time only):

- The OpenCode database's starts at the newest write already there and moves
  to the newest settled write; each watch of it begins with one settle, which
  finds the sessions saved while the daemon was down.
- Claude Code's (``CLAUDE_MARK``, epoch seconds) starts when the daemon began
  starting. Whenever a watch on the projects folder begins (daemon start, the
  folder appearing later, a config reload) every transcript there whose mtime
  is newer than the mark counts as changed (:meth:`Tracker.backlog`), so turns
  written while the daemon was down, or between its start and the watch, are
  extracted without waiting for their next change. At a clean stop
  :meth:`Tracker.advance` moves the mark to just before the oldest transcript
  whose newest write was not settled in this run (pending, still active, or
  cut short by the stop), or to the stop time when all were. It looks at the
  files themselves, not only at the events the watcher delivered, and it never
  moves back. A crash leaves the old mark: the next start re-examines more,
  which is cheap, and :meth:`Extractor.consider` sends only turns not done yet.

Sessions that worked in the extractor's own folder (an agent CLI used as the
extractor) are never extracted.
"""

from __future__ import annotations

import logging
import os
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
CLAUDE_MARK = "claude"  # the ledger's Claude Code watermark: transcript mtimes, epoch seconds
# A file's mtime comes from the kernel's coarse clock (a tick behind time.time()) or from a
# file server's clock: the Claude mark is kept this far before the moments it stands for.
MTIME_SLACK_S = 2.0


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
        self._settled: dict[Path, float] = {}  # a transcript's mtime when it last settled

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

    def prime(self, since: float | None = None) -> None:
        """Start the watermarks the first time only: OpenCode's database at its newest write,
        Claude Code's at ``since`` (when the daemon began starting; default now)."""
        ledger = self.extractor.ledger
        if self.claude_dir is not None and CLAUDE_MARK not in ledger.marks:
            began = self.clock() if since is None else since
            ledger.mark(CLAUDE_MARK, began - MTIME_SLACK_S)
        if self.opencode_dir is None or DB_BUCKET in ledger.marks:
            return
        newest = transcript.opencode_db_newest(self.opencode_dir / DB_FILES[0])
        ledger.mark(DB_BUCKET, newest)

    def backlog(self, watch: Watch, late: bool) -> list[Path]:
        """The files already in a folder whose watch just began that count as changed.

        Claude Code transcripts newer than the Claude mark, whenever the watch began. The
        OpenCode database (its settle asks for the sessions written after its own mark). In
        an OpenCode folder that appeared while the daemon ran (``late``), every file.
        """
        if watch.path == self.claude_dir:
            since = self.extractor.ledger.marks.get(CLAUDE_MARK)
            return [p for p, mtime in self._transcripts() if since is None or mtime > since]
        if late:
            return _files(watch)
        db = watch.path / DB_FILES[0]
        return [db] if watch.path == self.opencode_dir and db.is_file() else []

    def advance(self) -> None:
        """Move the Claude mark as far as every transcript's newest write has settled."""
        ledger = self.extractor.ledger
        old = ledger.marks.get(CLAUDE_MARK)
        if self.claude_dir is None or old is None:
            return
        with self._lock:
            settled = dict(self._settled)
        mark = self.clock() - MTIME_SLACK_S
        for path, mtime in self._transcripts():
            if mtime > old and settled.get(path, -1.0) < mtime:
                mark = min(mark, mtime - MTIME_SLACK_S)  # next start: newer than the mark
        if mark > old:
            ledger.mark(CLAUDE_MARK, mark)
            log.debug("claude transcripts settled up to %.3f", mark)

    def _transcripts(self) -> list[tuple[Path, float]]:
        """Every Claude Code session transcript (not subagents' files) with its mtime."""
        found: list[tuple[Path, float]] = []
        if self.claude_dir is None:
            return found
        try:
            slugs = [e for e in os.scandir(self.claude_dir) if e.is_dir(follow_symlinks=False)]
        except OSError:
            return found
        for slug in slugs:
            try:
                entries = list(os.scandir(slug.path))
            except OSError:
                continue
            for entry in entries:
                if not entry.name.endswith(".jsonl"):
                    continue
                try:
                    if entry.is_file():
                        found.append((Path(entry.path), entry.stat().st_mtime))
                except OSError:
                    continue
        return found

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
        elif bucket.startswith(CLAUDE_BUCKET) and not self.extractor.stopping.is_set():
            self._note_settled(Path(bucket[len(CLAUDE_BUCKET) :]), conversations)
        return wait

    def _note_settled(self, path: Path, conversations: list[Conversation]) -> None:
        """Remember the mtime up to which a transcript was read and settled (for advance)."""
        if conversations:
            mtime = conversations[0].updated  # fstat'ed before the read: all of it was read
        else:
            try:  # unreadable or no conversation: waiting longer would not change that
                mtime = path.stat().st_mtime
            except OSError:
                return
        with self._lock:
            self._settled[path] = mtime

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


def _files(watch: Watch) -> list[Path]:
    """The files already in a watched folder (below it too when the watch is recursive)."""
    if not watch.recursive:
        try:
            return [Path(e.path) for e in os.scandir(watch.path) if e.is_file()]
        except OSError:
            return []
    return [Path(top, name) for top, _dirs, files in os.walk(watch.path) for name in files]
