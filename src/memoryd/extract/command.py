"""Running the user's extractor command and reading its answer.

The command is a shell command line (``extract.command``): it reads the prompt
and conversation on stdin and prints JSON on stdout. It runs in a folder of
memoryd's own (so an agent CLI used as the extractor does not write its
transcript into a project memoryd watches), in its own process group, killed
with the group after ``extract.timeout_s``. ``MEMORYD_EXTRACTING=1`` is set so
hooks it triggers can tell. Cheap models often wrap JSON in a code fence or a
sentence: the first JSON value found in the answer is what counts.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memoryd.fsutil import private_dirs

log = logging.getLogger(__name__)

EXTRACTING_ENV = "MEMORYD_EXTRACTING"
# What an extractor may write; "rule" is saved as a rule-proposal, like any agent's.
KINDS = ("preference", "decision", "pitfall", "fact", "rule", "rule-proposal")
STDERR_KEEP = 2000
STOP_CHECK_S = 0.5  # how often a running command checks whether the daemon is stopping


class ExtractorFailed(Exception):
    """The command could not run, failed, timed out, or answered no usable JSON."""

    def __init__(self, reason: str, stderr: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.stderr = stderr[-STDERR_KEEP:]


@dataclass(frozen=True)
class Candidate:
    kind: str
    summary: str
    body: str
    load_when: tuple[str, ...]
    scope: str  # project | global


def run(
    command: str, document: str, *, cwd: Path, env: Mapping[str, str], timeout_s: float,
    stop: threading.Event | None = None,
) -> str:  # fmt: skip
    """The command's stdout for ``document`` on stdin; :class:`ExtractorFailed` otherwise.

    ``stop`` (the daemon is stopping) ends a running command at once.
    """
    private_dirs(cwd)
    try:
        process = subprocess.Popen(  # a shell: the user's own command line, pipes and all
            command, shell=True, cwd=cwd, env={**env, EXTRACTING_ENV: "1"},
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True,
        )  # fmt: skip
    except OSError as exc:
        raise ExtractorFailed(f"the command could not start: {exc}") from exc
    deadline = time.monotonic() + timeout_s
    data: bytes | None = document.encode("utf-8")
    while True:
        try:
            left = max(0.0, deadline - time.monotonic())
            out, err = process.communicate(data, timeout=min(left, STOP_CHECK_S))
            break
        except subprocess.TimeoutExpired:
            data = None  # already handed over; a retry must not send it again
            stopping = stop is not None and stop.is_set()
            if time.monotonic() < deadline and not stopping:
                continue
            _kill_group(process)
            out, err = process.communicate()
            why = (
                "the daemon stopped while the command ran"
                if stopping
                else f"the command ran longer than extract.timeout_s ({timeout_s:g} s) and was "
                "stopped"
            )
            raise ExtractorFailed(why, err.decode("utf-8", "replace")) from None
    stderr = err.decode("utf-8", "replace")
    if process.returncode != 0:
        raise ExtractorFailed(f"the command failed with exit code {process.returncode}", stderr)
    return out.decode("utf-8", "replace")


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:  # already gone
        process.kill()


def parse(answer: str, max_memories: int) -> tuple[list[Candidate], list[str]]:
    """The candidates in the command's answer, and why any item was skipped."""
    data = first_json(answer)
    if isinstance(data, dict):
        data = data.get("memories")
    if not isinstance(data, list):
        shown = " ".join(answer.split())[:200] or "(nothing)"
        raise ExtractorFailed(
            'the command did not answer with {"memories": [...]} JSON; it printed: ' + shown
        )
    found: list[Candidate] = []
    skipped: list[str] = []
    for number, item in enumerate(data):
        candidate, why = _candidate(item)
        if candidate is None:
            skipped.append(f"item {number + 1}: {why}")
        elif len(found) >= max_memories:
            skipped.append(f"item {number + 1}: over extract.max_memories ({max_memories})")
        else:
            found.append(candidate)
    return found, skipped


def first_json(text: str) -> Any:
    """The first JSON object or array in ``text`` (None when there is none)."""
    decoder = json.JSONDecoder()
    for start, char in enumerate(text):
        if char in "{[":
            try:
                value, _end = decoder.raw_decode(text, start)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict | list):
                return value
    return None


def _candidate(item: Any) -> tuple[Candidate | None, str]:
    if not isinstance(item, dict):
        return None, "not an object"
    kind = item.get("kind")
    summary = item.get("summary")
    if not isinstance(kind, str) or kind.strip().lower() not in KINDS:
        return None, f"kind {kind!r} is not one of {', '.join(KINDS)}"
    if not isinstance(summary, str) or not " ".join(summary.split()):
        return None, "no summary"
    body = item.get("body")
    raw_when = item.get("load_when")
    when = [w for w in raw_when if isinstance(w, str)] if isinstance(raw_when, list) else []
    scope = "global" if item.get("scope") == "global" else "project"
    return (
        Candidate(
            kind=kind.strip().lower(),
            summary=" ".join(summary.split()),
            body=body if isinstance(body, str) else "",
            load_when=tuple(w.strip() for w in when if w.strip())[:8],
            scope=scope,
        ),
        "",
    )
