"""Reading agents' session transcripts into one shape: a conversation of messages.

Only what a person and the model said counts: user prompts and the model's
text. Tool calls, tool results, reasoning, synthetic and meta messages, and
subagent (sidechain or child) sessions are left out: they are the work, not
what was decided.

* Claude Code appends one JSON object per line to
  ``~/.claude/projects/<slug>/<session>.jsonl``: ``type`` ``user`` or
  ``assistant``, ``message.content`` a string or a list of blocks (``text``,
  ``tool_use``, ``tool_result``, ``thinking``), ``cwd``, ``sessionId``,
  ``isSidechain``, ``isMeta``, ``isCompactSummary``. One answer is often
  several lines (one per block).
* OpenCode keeps sessions in ``<data>/opencode.db`` (SQLite; tables
  ``session``, ``message`` and ``part``, each row's ``data`` a JSON object), and
  before that in JSON files under ``<data>/storage/``: ``session/<project>/<ses>.json``,
  ``message/<ses>/<msg>.json``, ``part/<msg>/<prt>.json``. ``<data>`` is
  ``$XDG_DATA_HOME/opencode`` (``~/.local/share/opencode``).
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

USER, ASSISTANT = "user", "assistant"
CLAUDE, OPENCODE = "claude", "opencode"
TITLES = {CLAUDE: "Claude Code", OPENCODE: "OpenCode"}  # a memory's ``agent`` field
# Claude Code's own lines that look like user prompts but are not: slash commands and their output.
_CLAUDE_NOT_PROMPTS = ("<command-name>", "<command-message>", "<local-command-", "Caveat:")


@dataclass(frozen=True)
class Message:
    role: str  # user | assistant
    text: str


@dataclass(frozen=True)
class Conversation:
    agent: str  # claude | opencode
    session: str
    cwd: Path | None  # the folder the session worked in
    messages: tuple[Message, ...]
    updated: float  # epoch seconds of the newest write
    transcript: str  # where it was read from (a file, or the database)

    @property
    def key(self) -> str:
        return f"{self.agent}:{self.session}"

    @property
    def title(self) -> str:
        return TITLES.get(self.agent, self.agent)

    def turn_starts(self) -> list[int]:
        """The index of each turn's first message: a turn starts with a user message."""
        return [i for i, m in enumerate(self.messages) if m.role == USER]

    @property
    def turns(self) -> int:
        return len(self.turn_starts())

    def since_turn(self, done: int) -> tuple[Message, ...]:
        """The messages from turn ``done`` (0-based) on: what is new after ``done`` turns."""
        starts = self.turn_starts()
        if done <= 0 or not starts:
            return self.messages
        if done >= len(starts):
            return ()
        return self.messages[starts[done] :]


def _joined(messages: Iterable[Message]) -> tuple[Message, ...]:
    """Consecutive messages of one role as one (an answer split over several records)."""
    out: list[Message] = []
    for message in messages:
        if not message.text.strip():
            continue
        if out and out[-1].role == message.role:
            out[-1] = Message(message.role, out[-1].text + "\n\n" + message.text)
        else:
            out.append(message)
    return tuple(out)


# -- Claude Code -------------------------------------------------------------------


def claude_lines(data: bytes) -> Iterator[dict[str, Any]]:
    """The complete JSON lines of a transcript (a half-written last line is left for later)."""
    end = data.rfind(b"\n")
    for raw in data[: end + 1].splitlines():
        if not raw.strip():
            continue
        try:
            item = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            log.debug("skipping a line that is not JSON")
            continue
        if isinstance(item, dict):
            yield item


def claude_message(item: dict[str, Any]) -> Message | None:
    """One transcript line as a message (None: not something a person or the model said)."""
    kind = item.get("type")
    if kind not in (USER, ASSISTANT) or item.get("isSidechain") or item.get("isMeta"):
        return None
    if item.get("isCompactSummary") or item.get("isApiErrorMessage"):
        return None  # the summary of a compaction, an API error shown as an answer
    message = item.get("message")
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    if isinstance(content, str):
        texts = [content]
    elif isinstance(content, list):
        texts = [
            b["text"]
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
    else:
        return None
    text = "\n".join(t for t in texts if t.strip())
    if not text or (kind == USER and text.lstrip().startswith(_CLAUDE_NOT_PROMPTS)):
        return None
    return Message(str(kind), text)


def read_claude(path: Path) -> Conversation | None:
    """A Claude Code transcript file as a conversation (None when it cannot be read)."""
    return ClaudeReader().read(path)


@dataclass
class _Progress:
    """How far one transcript was read, and what it said up to there."""

    inode: int
    head: bytes  # its first bytes: a file replaced in place reads again from the start
    offset: int = 0  # bytes of complete lines consumed
    messages: list[Message] = field(default_factory=list)
    cwd: str | None = None
    session: str = ""


class ClaudeReader:
    """Reads Claude Code transcripts, each from where the last read of it ended.

    Claude Code only appends to a transcript, so a settle after one more turn
    parses that turn's lines, not the whole file again. A file that shrank, has
    another inode or other first bytes is read from its start.
    """

    HEAD = 256

    def __init__(self, keep: int = 8) -> None:  # transcripts remembered (their text is kept)
        self.keep = keep
        self._progress: dict[Path, _Progress] = {}

    def read(self, path: Path) -> Conversation | None:
        try:
            with path.open("rb") as file:
                stat = os.fstat(file.fileno())
                head = file.read(self.HEAD)
                progress = self._progress.pop(path, None)
                if (
                    progress is None
                    or progress.inode != stat.st_ino
                    or stat.st_size < progress.offset
                    or not head.startswith(progress.head[: len(head)])
                ):
                    progress = _Progress(stat.st_ino, head, session=path.stem)
                file.seek(progress.offset)
                data = file.read()
        except OSError as exc:
            log.debug("cannot read %s: %s", path, exc)
            return None
        progress.head = head
        progress.offset += data.rfind(b"\n") + 1
        for item in claude_lines(data):
            if isinstance(item.get("cwd"), str) and not item.get("isSidechain"):
                progress.cwd = item["cwd"]
            if isinstance(item.get("sessionId"), str):
                progress.session = item["sessionId"]
            message = claude_message(item)
            if message is not None:
                progress.messages.append(message)
        self._progress[path] = progress  # the newest last: the oldest goes first
        while len(self._progress) > self.keep:
            del self._progress[next(iter(self._progress))]
        cwd = Path(progress.cwd) if progress.cwd else None
        messages = _joined(progress.messages)
        return Conversation(CLAUDE, progress.session, cwd, messages, stat.st_mtime, str(path))


def claude_slug(cwd: Path) -> str:
    """Claude Code's folder name for a working directory (see
    :func:`memoryd.layouts.visible.claude_slug`)."""
    from memoryd.layouts.visible import claude_slug as slug

    return slug(cwd)


# -- OpenCode ----------------------------------------------------------------------


def opencode_message(role: Any, parts: Iterable[Any]) -> Message | None:
    """An OpenCode message from its role and its parts' data (text parts only, not synthetic)."""
    if role not in (USER, ASSISTANT):
        return None
    texts = [
        p["text"]
        for p in parts
        if isinstance(p, dict)
        and p.get("type") == "text"
        and isinstance(p.get("text"), str)
        and not p.get("synthetic")
        and not p.get("ignored")
    ]
    text = "\n".join(t for t in texts if t.strip())
    return Message(str(role), text) if text else None


def _loads(raw: Any) -> Any:
    try:
        return json.loads(raw)
    except (TypeError, ValueError):
        return None


def opencode_db_sessions(db_file: Path, since_ms: int) -> list[Conversation]:
    """Top-level sessions of ``opencode.db`` with a message or part written after ``since_ms``."""
    try:
        db = sqlite3.connect(f"file:{db_file}?mode=ro", uri=True, timeout=5)
    except sqlite3.Error as exc:
        log.warning("cannot open %s: %s", db_file, exc)
        return []
    try:
        changed = db.execute(
            "SELECT session_id FROM part WHERE time_updated > ?1"
            " UNION SELECT session_id FROM message WHERE time_updated > ?1",
            (since_ms,),
        ).fetchall()
        out = []
        for (session,) in changed:
            found = _db_session(db, db_file, session)
            if found is not None:
                out.append(found)
        return out
    except sqlite3.Error as exc:
        log.warning("cannot read %s: %s", db_file, exc)
        return []
    finally:
        db.close()


def opencode_db_session(db_file: Path, session: str) -> Conversation | None:
    """One top-level session of ``opencode.db`` (None: no such session, or no database)."""
    if not db_file.is_file():
        return None
    try:
        db = sqlite3.connect(f"file:{db_file}?mode=ro", uri=True, timeout=5)
        try:
            return _db_session(db, db_file, session)
        finally:
            db.close()
    except sqlite3.Error as exc:
        log.warning("cannot read %s: %s", db_file, exc)
        return None


def opencode_db_newest(db_file: Path) -> int:
    """The newest write (ms) in ``opencode.db``; 0 when there is no database or nothing in it."""
    if not db_file.is_file():
        return 0
    try:
        db = sqlite3.connect(f"file:{db_file}?mode=ro", uri=True, timeout=5)
        try:
            row = db.execute(
                "SELECT max(t) FROM (SELECT max(time_updated) AS t FROM part"
                " UNION ALL SELECT max(time_updated) FROM message)"
            ).fetchone()
        finally:
            db.close()
    except sqlite3.Error as exc:
        log.warning("cannot read %s: %s", db_file, exc)
        return 0
    return int(row[0] or 0)


def _db_session(db: sqlite3.Connection, db_file: Path, session: str) -> Conversation | None:
    row = db.execute(
        "SELECT directory, parent_id, time_updated FROM session WHERE id = ?", (session,)
    ).fetchone()
    if row is None or row[1]:
        return None  # gone, or a subagent's child session
    directory, _parent, updated = row
    parts: dict[str, list[Any]] = {}
    newest = int(updated or 0)
    for message_id, data, stamp in db.execute(
        "SELECT message_id, data, time_updated FROM part WHERE session_id = ? ORDER BY id",
        (session,),
    ):
        parts.setdefault(message_id, []).append(_loads(data))
        newest = max(newest, int(stamp or 0))
    messages = []
    for message_id, data, stamp in db.execute(
        "SELECT id, data, time_updated FROM message WHERE session_id = ? ORDER BY time_created, id",
        (session,),
    ):
        info = _loads(data)
        newest = max(newest, int(stamp or 0))
        if isinstance(info, dict):
            message = opencode_message(info.get("role"), parts.get(message_id, []))
            if message is not None:
                messages.append(message)
    cwd = Path(directory) if directory else None
    return Conversation(OPENCODE, session, cwd, _joined(messages), newest / 1000, str(db_file))


def opencode_json_session(storage: Path, session: str) -> Conversation | None:
    """One session of the JSON file store (``<data>/storage``)."""
    info = next(
        (
            _read_json(p)
            for p in sorted((storage / "session").glob(f"*/{_glob_safe(session)}.json"))
        ),
        None,
    )
    if not isinstance(info, dict) or info.get("parentID"):
        return None
    newest = 0.0
    messages = []
    folder = storage / "message" / session
    for file in sorted(_json_files(folder)):
        data = _read_json(file)
        newest = max(newest, _mtime(file))
        if not isinstance(data, dict):
            continue
        part_files = sorted(_json_files(storage / "part" / file.stem))
        newest = max([newest, *(_mtime(p) for p in part_files)])
        message = opencode_message(data.get("role"), [_read_json(p) for p in part_files])
        if message is not None:
            messages.append(message)
    directory = info.get("directory")
    cwd = Path(directory) if isinstance(directory, str) and directory else None
    return Conversation(OPENCODE, session, cwd, _joined(messages), newest, str(folder))


def opencode_json_session_of(storage: Path, changed: Path) -> str | None:
    """The session a changed file of the JSON store belongs to (None: not a message or part)."""
    try:
        parts = changed.relative_to(storage).parts
    except ValueError:
        return None
    if len(parts) != 3 or not parts[2].endswith(".json"):
        return None
    if parts[0] == "message":
        return parts[1]
    if parts[0] == "part":
        data = _read_json(changed)
        if isinstance(data, dict) and isinstance(data.get("sessionID"), str):
            return str(data["sessionID"])
    return None


def _glob_safe(name: str) -> str:
    return "".join(c for c in name if c not in "*?[]/\\")


def _json_files(folder: Path) -> list[Path]:
    try:
        return [Path(e.path) for e in os.scandir(folder) if e.name.endswith(".json")]
    except OSError:
        return []


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
