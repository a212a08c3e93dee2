"""What each agent session already holds from memoryd's hooks, so a prompt adds only what is new.

Claude Code keeps every hook's ``additionalContext`` in the session's history: with the
rules and the outline in every prompt's block, three prompts of one session carried 2, 3
and 4 copies of them. SessionStart (startup, resume, clear, compact: each begins a
context that holds no memoryd block) gives the whole block and starts the session's
record afresh; UserPromptSubmit gives only what the record says the session was not
shown (:class:`memoryd.injection_session.Given`), and nothing when that is nothing.

The record is one small JSON file per session id in the state folder, written only by
the hooks: bounded (the last ``MAX_SHOWN`` memories, the last ``MAX_SIZES`` sizes,
``MAX_SESSIONS`` files) and expiring (a week untouched). It also keeps the characters each
hook injected, which ``memoryd context --stats`` reports. Without a session id or a
usable state folder every prompt gets the whole block: a repeated rule costs tokens, a
missing one costs a wrong answer.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memoryd.agent import notice
from memoryd.agent.context import gather
from memoryd.fsutil import atomic_write
from memoryd.injection import Block
from memoryd.injection_session import Given

if TYPE_CHECKING:
    from memoryd.app import App

log = logging.getLogger(__name__)

START, PROMPT = "SessionStart", "UserPromptSubmit"
FOLDER = "injected"  # in the state folder: one record per session
MAX_SESSIONS = 200
MAX_SHOWN = 500  # past this the oldest are forgotten (and may be shown once more)
MAX_SIZES = 200


@dataclass
class Record:
    """One session: the frame it holds, the memories it was shown, what each hook injected."""

    session: str
    frame: str = ""
    shown: dict[str, str] = field(default_factory=dict)
    starts: list[int] = field(default_factory=list)  # characters, per SessionStart
    prompts: list[int] = field(default_factory=list)  # characters, per UserPromptSubmit
    updated: float = 0.0

    def given(self) -> Given:
        return Given(self.frame, self.shown)

    def add(self, event: str, block: Block) -> None:
        """What this hook's block put into the session."""
        if block.framed:
            self.frame = block.frame
        self.shown.update(block.shown)
        for key in list(self.shown)[: max(0, len(self.shown) - MAX_SHOWN)]:
            del self.shown[key]
        sizes = self.starts if event == START else self.prompts
        sizes.append(len(block.text))
        del sizes[: max(0, len(sizes) - MAX_SIZES)]
        self.updated = time.time()


def hook_block(
    app: App, event: dict[str, Any], query: str, max_chars: int | None, max_entries: int | None
) -> Block:
    """The block for one hook event, given what its session holds, and the session's record
    brought up to date (SessionStart: the whole block, a new record)."""
    name, session = event.get("hook_event_name"), event.get("session_id")
    folder = _folder(app)
    if name not in (START, PROMPT) or not isinstance(session, str) or not session or not folder:
        return gather(app, query, max_chars, max_entries)
    record = Record(session) if name == START else load(folder, session)
    given = None if name == START else record.given()
    block = gather(app, query, max_chars, max_entries, given=given)
    record.add(name, block)
    save(folder, record)
    return block


def load(folder: Path, session: str) -> Record:
    """The session's record; a new one when there is none (or it cannot be read)."""
    with contextlib.suppress(OSError, ValueError, TypeError):
        data = json.loads(_file(folder, session).read_text(encoding="utf-8"))
        record = Record(**data)
        if record.session == session:
            return record
    return Record(session)


def save(folder: Path, record: Record) -> None:
    path = _file(folder, record.session)
    try:
        atomic_write(path, json.dumps(asdict(record)).encode(), durable=False)
        notice.prune(folder, keep=path, most=MAX_SESSIONS)
    except OSError as exc:  # the next prompt gets the whole block: costly, never wrong
        log.debug("session record not written to %s: %s", path, exc)


def records(app: App) -> list[Record]:
    """Every session's record there is, the most recent first."""
    folder = _folder(app)
    if folder is None or not folder.is_dir():
        return []
    found: list[Record] = []
    for entry in os.scandir(folder):
        with contextlib.suppress(OSError, ValueError, TypeError):
            found.append(Record(**json.loads(Path(entry.path).read_text(encoding="utf-8"))))
    return sorted(found, key=lambda r: r.updated, reverse=True)


def _folder(app: App) -> Path | None:
    state_dir = notice.state_dir(app)
    return state_dir / FOLDER if state_dir is not None else None


def _file(folder: Path, session: str) -> Path:
    name = hashlib.sha256(session.encode("utf-8", "replace")).hexdigest()[:32]
    return folder / f"{name}.json"
