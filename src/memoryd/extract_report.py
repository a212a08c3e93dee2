"""The extraction part of ``memoryd status`` and ``memoryd inspect``: on or off, and per session.

Read from config.yaml and the ledger only, so it answers with or without a
running daemon.

Top-level, not in ``extract/``, for the reason :mod:`memoryd.extract_ledger` gives:
``inspection.py`` (which the agent's inspect tool calls) reads it.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from memoryd.app import App
from memoryd.extract_ledger import NO_COMMAND, read_entries

SHOWN = 10  # sessions in the text form; --json has them all
STDERR_LINES = 3


def report(app: App) -> dict[str, Any]:
    settings = app.config.extract
    entries = read_entries(app.paths.state_dir)
    return {
        "enabled": bool(settings.command),
        "command": settings.command or None,
        "reason": None if settings.command else NO_COMMAND,
        "sessions": [asdict(e) for e in entries],
    }


def lines(data: dict[str, Any]) -> list[str]:
    """The human lines: the state, then the newest sessions' last extraction."""
    if not data["enabled"]:
        out = [f"extraction: off: {data['reason']} (set extract.command in config.yaml)"]
    else:
        out = [f"extraction: on, extract.command: {data['command']}"]
    for entry in data["sessions"][:SHOWN]:
        last = entry.get("last")
        if not last:
            continue
        head = f"  {entry['agent']} session {entry['session']} at {last['at']}"
        out.append(f"{head}: {last['outcome']}: {last['reason']}")
        out += [f"    wrote {item}" for item in last.get("written") or []]
        out += [f"    refused {item}" for item in last.get("refused") or []]
        stderr = [ln for ln in (last.get("stderr") or "").splitlines() if ln.strip()]
        out += [f"    stderr: {ln}" for ln in stderr[-STDERR_LINES:]]
    if data["enabled"] and not data["sessions"]:
        out.append("  no session has settled since extraction was turned on")
    return out
