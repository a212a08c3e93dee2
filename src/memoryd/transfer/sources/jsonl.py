"""memoryd's own JSON Lines (:mod:`memoryd.transfer.records`): one memory per line.

The records keep their ids, kinds, times, links and ``source``, so an export imported
into another root and exported again gives the same lines; only an iron rule comes in
as a ``rule-proposal`` (a person accepts it again with ``memoryd accept``). A line that
is not a JSON object with a one-line ``summary`` is reported with its line number.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memoryd.transfer import kinds
from memoryd.transfer.candidate import Candidate, Reading, Unreadable, read_text
from memoryd.transfer.records import EXTRA

NAME = "jsonl"
WHAT = "JSON Lines file (memoryd export jsonl)"
FIX = "make the line one JSON object with at least 'kind' and 'summary' (or remove it)"


def default_path(env: Mapping[str, str], cwd: Path) -> Path | None:
    return None


def read(path: Path, env: Mapping[str, str]) -> Reading:
    reading = Reading()
    text = read_text(path, reading, "convert the file to UTF-8 and import again")
    if text is None:
        return reading
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            why = f"not JSON ({exc.msg} at column {exc.colno})"
            reading.unreadable.append(Unreadable(where, why, FIX))
            continue
        problem = _problem(record)
        if problem:
            reading.unreadable.append(Unreadable(where, problem, FIX))
            continue
        reading.candidates.append(_candidate(record))
    return reading


def _problem(record: Any) -> str | None:
    if not isinstance(record, dict):
        return f"a JSON {type(record).__name__}, not an object"
    for name in ("kind", "summary"):
        if not isinstance(record.get(name), str) or not record[name].strip():
            return f"'{name}' is missing or not text"
    for name in ("id", "body", "supersedes", "source"):
        if record.get(name) is not None and not isinstance(record[name], str):
            return f"'{name}' is not text"
    for name in ("created", "updated"):
        value = record.get(name)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            return f"'{name}' is not epoch milliseconds"
    words = record.get("load_when") or []
    if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
        return "'load_when' is not a list of text"
    if not isinstance(record.get(EXTRA) or {}, dict):
        return f"'{EXTRA}' is not an object"
    return None


def _candidate(record: Mapping[str, Any]) -> Candidate:
    kind = record["kind"]
    return Candidate(
        kind=kinds.PROPOSAL if kind == kinds.RULE else kind, summary=record["summary"],
        body=record.get("body") or "", id=record.get("id") or None,
        created=record.get("created"), updated=record.get("updated"),
        load_when=tuple(record.get("load_when") or ()), pinned=record.get("pinned") is True,
        supersedes=record.get("supersedes") or None, source=record.get("source") or None,
        extra=dict(record.get(EXTRA) or {}),
    )  # fmt: skip
