"""A hook's failure, told to the person once per session.

A memoryd hook always exits 0 (it must never block the prompt or the edit), and Claude Code
shows the stderr of a hook that exits 0 only in its transcript view: a broken config.yaml
would quietly take the memory out of every prompt. The ``systemMessage`` of a hook's JSON
answer is shown to the user (never to the model). This module keeps that to once per
session and problem: later hooks of the session say it on stderr alone, until the problem
changes, or goes away and comes back.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from memoryd.errors import MemorydError
from memoryd.fsutil import atomic_write

if TYPE_CHECKING:
    from memoryd.app import App

log = logging.getLogger(__name__)

FOLDER = "hook-notices"  # in the state folder: one small file per session with a problem
KEEP_S = 7 * 24 * 3600  # a notice file older than this belongs to a session long over


def once(app: App, session: object, what: str, exc: MemorydError) -> str | None:
    """The one-line notice of ``exc`` (``memoryd: WHAT: the error; hint: ...``) for the
    hook's ``systemMessage``, or None when this session was already told just that."""
    hint = f"; hint: {exc.hint}" if exc.hint else ""
    message = f"memoryd: {what}: {exc.message}{hint}"
    sid = session if isinstance(session, str) else ""
    return message if first_time(state_dir(app), sid, message) else None


def solved(app: App, session: object) -> None:
    """The session's hooks work again: a later problem is told again."""
    folder = state_dir(app)
    if isinstance(session, str) and session and folder is not None:
        with contextlib.suppress(OSError):  # the usual case: there is no such file
            os.unlink(_file(folder, session))


def first_time(state_dir: Path | None, session: str, message: str) -> bool:
    """Whether ``message`` is new for ``session``; if so it is recorded as told.

    Without a session id or a usable state folder every call is a first time: a notice told
    too often beats one never told.
    """
    if not session or state_dir is None:
        return True
    path = _file(state_dir, session)
    with contextlib.suppress(OSError, UnicodeDecodeError):
        if path.read_text(encoding="utf-8") == message:
            return False
    try:
        atomic_write(path, message.encode("utf-8", "replace"), durable=False)
        prune(path.parent, keep=path)
    except OSError as exc:
        log.debug("hook notice not recorded in %s: %s", path, exc)
    return True


def state_dir(app: App) -> Path | None:
    """memoryd's state folder, or None when the environment names none that works."""
    try:
        return app.paths.state_dir
    except MemorydError:
        return None


def _file(state_dir: Path, session: str) -> Path:
    return state_dir / FOLDER / hashlib.sha256(session.encode("utf-8", "replace")).hexdigest()[:32]


def prune(folder: Path, keep: Path, most: int | None = None) -> None:
    """Drop the files of sessions over for a week, and past ``most`` files the oldest (only
    when a new one is written, so a folder of them stays small without a timer)."""
    cutoff = time.time() - KEEP_S
    kept: list[tuple[float, str]] = []
    for entry in os.scandir(folder):
        try:
            if entry.path == str(keep):
                continue
            mtime = entry.stat().st_mtime
            if mtime < cutoff:
                os.unlink(entry.path)
            else:
                kept.append((mtime, entry.path))
        except OSError:
            continue
    if most is not None and len(kept) >= most:
        for _, path in sorted(kept)[: len(kept) - most + 1]:
            with contextlib.suppress(OSError):
                os.unlink(path)
