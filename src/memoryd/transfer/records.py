"""memoryd's neutral JSON Lines: one memory per line, the same for export and import.

Fields: ``id, kind, summary, body, created, updated, load_when, pinned, supersedes,
source``, and ``extra`` for any other frontmatter field the memory has (``highlight``,
``cites``, ``sync`` ...), so an export loses nothing. ``superseded_by`` is not written: it
is the other end of ``supersedes`` and an import sets it again. ``body`` is the text after
the frontmatter without the one newline a file ends with.
"""

from __future__ import annotations

import json
from typing import Any

from memoryd.memory import Memory

FIELDS = (
    "id", "kind", "summary", "body", "created", "updated", "load_when", "pinned",
    "supersedes", "source",
)  # fmt: skip
DERIVED = ("superseded_by",)  # set again on import, from the other memory's supersedes
EXTRA = "extra"


def record_of(memory: Memory, memory_id: str) -> dict[str, Any]:
    """The JSON Lines record of one memory."""
    meta = memory.meta
    body = memory.body[:-1] if memory.body.endswith("\n") else memory.body
    record: dict[str, Any] = {
        "id": memory_id,
        "kind": meta.get("kind"),
        "summary": meta.get("summary"),
        "body": body,
        "created": meta.get("created"),
        "updated": meta.get("updated"),
        "load_when": list(memory.strings("load_when")),
        "pinned": meta.get("pinned") is True,
        "supersedes": meta.get("supersedes"),
        "source": meta.get("source"),
    }
    extra = {str(k): v for k, v in meta.items() if k not in FIELDS and k not in DERIVED}
    if extra:
        record[EXTRA] = extra
    return record


def line_of(record: dict[str, Any]) -> str:
    """One line of the file (UTF-8 text kept as it is, so Chinese stays readable)."""
    return json.dumps(record, ensure_ascii=False, sort_keys=False, default=str)
