"""One extraction: decide whether a settled session is worth it, ask the command, write.

Every decision is recorded in the ledger with its reason, including the
decisions not to run (too few turns, too short, no command). Each candidate the
command answers with is written by :func:`memoryd.agent.remember.remember` as an
agent's memory, so it passes the same gate: the secret gate, the duplicate
check, rule → rule-proposal, the path guard; the extractor chooses neither ids
nor pins, so it can never write an iron rule. A failing command is recorded with
its stderr and retried at the next settled turn; it never raises.
"""

from __future__ import annotations

import datetime
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from memoryd.app import App
from memoryd.config.sections import ExtractConfig
from memoryd.errors import DuplicateRefused, MemorydError, SecretRefused
from memoryd.extract import command, prompt
from memoryd.extract.transcript import Conversation, Message
from memoryd.extract_ledger import (
    FAILED,
    NO_COMMAND,
    NOTHING,
    WRITTEN,
    Attempt,
    Ledger,
    SessionEntry,
)

log = logging.getLogger(__name__)

EXTRACTOR_DIR = "extractor"  # under memoryd's state folder: where the command runs
SECRET_WITHHELD = "(summary withheld: it looks like it holds a secret)"


def now_iso() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def extractor_dir(app: App) -> Path:
    """The folder the command runs in: sessions that worked there are the extractor's own."""
    return app.paths.state_dir / EXTRACTOR_DIR


@dataclass
class _Writes:
    written: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    duplicates: int = 0
    secrets: int = 0
    other: int = 0


class Extractor:
    """Runs extractions one at a time and records each in the ledger."""

    def __init__(
        self, app: App, ledger: Ledger, *, settings: Callable[[], ExtractConfig] | None = None,
        clock: Callable[[], str] = now_iso,
    ) -> None:  # fmt: skip
        self.app = app
        self.ledger = ledger
        self.settings = settings or (lambda: app.config.extract)  # the daemon's, when it reloads
        self.clock = clock
        self.stopping = threading.Event()  # set: a running command is ended at once
        self._lock = threading.Lock()

    def consider(self, conversation: Conversation) -> Attempt | None:
        """Extract from a settled session; None when there is nothing new since last time."""
        with self._lock:
            return self._consider(conversation)

    def _consider(self, conv: Conversation) -> Attempt | None:
        settings = self.settings()
        entry = self.ledger.entry(conv.key) or SessionEntry(
            conv.agent, conv.session, conv.transcript, str(conv.cwd) if conv.cwd else None
        )
        if conv.turns <= entry.turns_done:
            return None
        new = conv.since_turn(entry.turns_done)
        chars = sum(len(m.text) for m in new)
        if not settings.command:
            return self._done(conv, entry, NOTHING, NO_COMMAND)
        if conv.turns < settings.min_turns:
            why = f"too few turns: {conv.turns} of the {settings.min_turns} extract.min_turns asks"
            return self._done(conv, entry, NOTHING, why)
        if chars < settings.min_chars:
            why = f"too short: {chars} new characters, extract.min_chars is {settings.min_chars}"
            return self._done(conv, entry, NOTHING, why)
        if conv.cwd is not None and not conv.cwd.is_dir():
            why = f"the session's folder {conv.cwd} no longer exists, so it has no project"
            return self._done(conv, entry, NOTHING, why, advance=True)
        try:
            _document, candidates, skipped = self.ask(conv, new)
        except command.ExtractorFailed as exc:
            log.warning("extraction for %s failed: %s", conv.key, exc.reason)
            return self._done(conv, entry, FAILED, exc.reason, stderr=exc.stderr)
        if not candidates:
            why = "the extractor found nothing worth remembering"
            return self._done(conv, entry, NOTHING, why, refused=skipped, advance=True)
        writes = self._write(conv, candidates)
        writes.refused[:0] = skipped
        outcome, why = _summary(writes, len(candidates))
        return self._done(
            conv, entry, outcome, why, written=writes.written, refused=writes.refused, advance=True
        )

    def document(self, conv: Conversation, messages: tuple[Message, ...]) -> str:
        """What the command reads on stdin for ``messages`` of ``conv``."""
        settings = self.settings()
        return prompt.render(conv, prompt.tail(messages, settings.max_chars), settings.max_memories)

    def ask(
        self, conv: Conversation, messages: tuple[Message, ...]
    ) -> tuple[str, list[command.Candidate], list[str]]:
        """Run the command on ``messages``: the document sent, the candidates, the skipped items.

        Writes nothing; :class:`memoryd.extract.command.ExtractorFailed` when the command fails.
        """
        settings = self.settings()
        document = self.document(conv, messages)
        answer = command.run(
            settings.command, document, cwd=extractor_dir(self.app), env=self.app.env,
            timeout_s=settings.timeout_s, stop=self.stopping,
        )  # fmt: skip
        candidates, skipped = command.parse(answer, settings.max_memories)
        return document, candidates, skipped

    def _write(self, conv: Conversation, candidates: list[command.Candidate]) -> _Writes:
        from memoryd.agent.remember import Request, remember

        writes = _Writes()
        app = App(env=self.app.env, cwd=conv.cwd or extractor_dir(self.app), out=self.app.out,
                  err=self.app.err)  # fmt: skip
        for candidate in candidates:
            scope = "global" if candidate.scope == "global" or conv.cwd is None else None
            request = Request(
                kind=candidate.kind, summary=candidate.summary, body=candidate.body,
                load_when=candidate.load_when, scope=scope, agent=True, session=conv.session,
                client=conv.title, extracted_from=conv.transcript,
            )  # fmt: skip
            try:
                outcome = remember(app, request)
            except SecretRefused:
                writes.secrets += 1
                writes.refused.append(f"{SECRET_WITHHELD}: refused as a secret")
            except DuplicateRefused as exc:
                writes.duplicates += 1
                writes.refused.append(f"{candidate.summary}: {exc.message.splitlines()[0]}")
            except MemorydError as exc:
                writes.other += 1
                writes.refused.append(f"{candidate.summary}: {exc.message.splitlines()[0]}")
            else:
                writes.written.append(f"{outcome.scope}:{outcome.id}")
                log.info("extracted %s (%s) from %s", outcome.id, outcome.scope, conv.key)
        return writes

    def _done(
        self, conv: Conversation, entry: SessionEntry, outcome: str, reason: str, *,
        written: list[str] | None = None, refused: list[str] | None = None, stderr: str = "",
        advance: bool = False,
    ) -> Attempt:  # fmt: skip
        attempt = Attempt(
            at=self.clock(), outcome=outcome, reason=reason, turns=conv.turns,
            written=written or [], refused=refused or [], stderr=stderr,
        )  # fmt: skip
        entry.transcript = conv.transcript
        entry.cwd = str(conv.cwd) if conv.cwd else None
        entry.last = attempt
        if advance:
            entry.turns_done = conv.turns
        self.ledger.record(conv.key, entry)
        log.info("extraction %s: %s: %s", conv.key, outcome, reason)
        return attempt


def _summary(writes: _Writes, candidates: int) -> tuple[str, str]:
    """The outcome and its one-line reason for a run that produced candidates."""
    if writes.written:
        count = len(writes.written)
        left = len(writes.refused)
        tail = f"; {left} not written (see refused)" if left else ""
        return WRITTEN, f"wrote {count} memor{'y' if count == 1 else 'ies'}{tail}"
    if writes.duplicates == candidates:
        return NOTHING, "every candidate was a duplicate of an existing memory"
    parts = []
    if writes.duplicates:
        parts.append(f"{writes.duplicates} duplicate{'s' if writes.duplicates > 1 else ''}")
    if writes.secrets:
        parts.append(f"{writes.secrets} refused as a secret")
    if writes.other:
        parts.append(f"{writes.other} refused")
    return NOTHING, "nothing written: " + ", ".join(parts)
