"""mem0 / OpenMemory exports.

OpenMemory's backup (``POST /api/v1/backup/export``) is a zip holding ``memories.json``
(the user, apps, categories and ``memories`` with ``content``, ``state``, ``created_at``,
``updated_at``, ``category_ids``) and ``memories.jsonl.gz`` (one memory per line with its
category names). PATH may be the zip, either file, or mem0's own ``get_all`` answer
(``{"results": [{"memory": ..., "categories": [...]}]}`` or a bare list). Deleted
memories are not imported; a memory in a "preferences" category is a preference.
"""

from __future__ import annotations

import gzip
import json
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from memoryd.transfer import kinds
from memoryd.transfer.candidate import (
    Candidate,
    Reading,
    Unreadable,
    digest,
    source_tag,
    summary_of,
    when,
)

NAME = "mem0"
WHAT = "mem0/OpenMemory export (the zip, memories.json or memories.jsonl.gz)"
FIX = "export again from OpenMemory (Settings, Export) and import the zip as it is"
SKIPPED_STATES = ("deleted",)


def default_path(env: Mapping[str, str], cwd: Path) -> Path | None:
    return None  # an export is wherever the user saved it


def read(path: Path, env: Mapping[str, str]) -> Reading:
    reading = Reading()
    try:
        records = list(_records(path))
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        reading.unreadable.append(Unreadable(str(path), f"is not a mem0 export ({exc})", FIX))
        return reading
    for record in records:
        candidate = _candidate(record, path, env)
        if candidate is not None:
            reading.candidates.append(candidate)
    return reading


def _records(path: Path) -> Iterator[dict[str, Any]]:
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            names = {n.rsplit("/", 1)[-1]: n for n in archive.namelist()}
            if "memories.json" in names:
                yield from _from_json(json.loads(archive.read(names["memories.json"])))
            elif "memories.jsonl.gz" in names:
                yield from _from_lines(gzip.decompress(archive.read(names["memories.jsonl.gz"])))
            else:
                raise ValueError("the zip holds neither memories.json nor memories.jsonl.gz")
        return
    data = path.read_bytes()
    if path.name.endswith(".gz"):
        yield from _from_lines(gzip.decompress(data))
    elif path.name.endswith(".jsonl"):
        yield from _from_lines(data)
    else:
        yield from _from_json(json.loads(data))


def _from_lines(data: bytes) -> Iterator[dict[str, Any]]:
    for line in data.decode("utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            if isinstance(record, dict):
                yield record


def _from_json(data: Any) -> Iterator[dict[str, Any]]:
    if isinstance(data, dict) and isinstance(data.get("memories"), list):  # OpenMemory backup
        names = {c.get("id"): c.get("name") for c in data.get("categories", [])
                 if isinstance(c, dict)}  # fmt: skip
        for memory in data["memories"]:
            if isinstance(memory, dict):
                ids = memory.get("category_ids") or []
                yield {**memory, "categories": [names[i] for i in ids if names.get(i)]}
        return
    items = data.get("results") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise ValueError("no 'memories' or 'results' list in it")
    yield from (item for item in items if isinstance(item, dict))


def _candidate(record: Mapping[str, Any], path: Path, env: Mapping[str, str]) -> Candidate | None:
    content = record.get("content", record.get("memory"))
    if not isinstance(content, str) or not content.strip():
        return None
    if str(record.get("state", "active")).lower() in SKIPPED_STATES:
        return None
    summary = summary_of(content)
    categories = [str(c) for c in record.get("categories") or [] if c]
    preference = any(c.lower() in kinds.PREFERENCE_WORDS for c in categories)
    kind = kinds.PREFERENCE if preference else kinds.FACT
    created = when(record.get("created_at"))
    return Candidate(
        kind=kinds.imported_kind(kind, summary), summary=summary,
        body=content.strip() if content.strip() != summary else "",
        created=created, updated=when(record.get("updated_at")) or created,
        load_when=tuple(categories),
        source=source_tag(NAME, path, env, str(record.get("id") or digest(content))),
    )  # fmt: skip
