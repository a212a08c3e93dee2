"""claude-mem's SQLite database: ``~/.claude-mem/claude-mem.db`` (``$CLAUDE_MEM_DATA_DIR``).

Each row of its ``observations`` table is one memory: ``title`` the summary, ``subtitle``,
``narrative`` (or the older ``text``), the JSON lists ``facts`` and ``concepts`` and the
files read and modified the body, ``type`` the kind (decision, bugfix, feature, refactor,
discovery, change), ``created_at_epoch`` its time and ``project`` the project it was
filed under. The columns are read as each database has them (claude-mem added them over
its migrations). The database is opened read-only: the import never changes it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memoryd.transfer import kinds
from memoryd.transfer.candidate import Candidate, Reading, Unreadable, source_tag, summary_of, when

NAME = "claude-mem"
WHAT = "claude-mem database (~/.claude-mem/claude-mem.db)"
DB_FILE = "claude-mem.db"
COLUMNS = (
    "id", "project", "type", "title", "subtitle", "narrative", "text", "facts", "concepts",
    "files_read", "files_modified", "created_at", "created_at_epoch",
)  # fmt: skip


def default_path(env: Mapping[str, str], cwd: Path) -> Path | None:
    base = env.get("CLAUDE_MEM_DATA_DIR") or str(
        Path(env.get("HOME") or Path.home()) / ".claude-mem"
    )
    return Path(base) / DB_FILE


def read(path: Path, env: Mapping[str, str]) -> Reading:
    reading = Reading()
    db_path = path / DB_FILE if path.is_dir() else path
    fix = "give the path of claude-mem's database (claude-mem.db), or repair it with sqlite3"
    try:
        conn = sqlite3.connect(f"{db_path.as_uri()}?{_mode(db_path)}", uri=True)
    except sqlite3.Error as exc:
        reading.unreadable.append(Unreadable(str(db_path), f"cannot be opened ({exc})", fix))
        return reading
    try:
        have = {row[1] for row in conn.execute("PRAGMA table_info(observations)")}
        if not have:
            raise sqlite3.DatabaseError("it has no observations table")
        wanted = [c for c in COLUMNS if c in have]
        rows = conn.execute(f"SELECT {', '.join(wanted)} FROM observations ORDER BY id")
        for values in rows:
            candidate = _candidate(dict(zip(wanted, values, strict=True)), db_path, env)
            if candidate is not None:
                reading.candidates.append(candidate)
    except sqlite3.Error as exc:
        reason = str(exc) if "observations" in str(exc) else f"not a claude-mem database ({exc})"
        reading.unreadable.append(Unreadable(str(db_path), reason, fix))
    finally:
        conn.close()
    return reading


def _mode(db_path: Path) -> str:
    """Read-only; with no write-ahead log beside it (claude-mem not running), also
    ``immutable``, else SQLite would create the -wal and -shm files of a WAL database."""
    wal = db_path.with_name(db_path.name + "-wal")
    return "mode=ro" if wal.exists() else "mode=ro&immutable=1"


def _candidate(row: Mapping[str, Any], db_path: Path, env: Mapping[str, str]) -> Candidate | None:
    narrative = _text(row.get("narrative")) or _text(row.get("text"))
    subtitle = _text(row.get("subtitle"))
    summary = summary_of(_text(row.get("title")) or subtitle or narrative)
    if not summary:
        return None
    parts = [p for p in (subtitle if subtitle != summary else "", narrative) if p]
    facts = _list(row.get("facts"))
    if facts:
        parts.append("Facts:\n" + "\n".join(f"- {fact}" for fact in facts))
    for label, column in (("Concepts", "concepts"), ("Files read", "files_read"),
                          ("Files modified", "files_modified")):  # fmt: skip
        values = _list(row.get(column))
        if values:
            parts.append(f"{label}: {', '.join(values)}")
    stamp = when(row.get("created_at_epoch")) or when(row.get("created_at"))
    kind = kinds.CLAUDE_MEM.get(_text(row.get("type")).lower(), kinds.FACT)
    return Candidate(
        kind=kinds.imported_kind(kind, summary),
        summary=summary,
        body="\n\n".join(parts),
        created=stamp,
        updated=stamp,
        project=_text(row.get("project")) or None,
        source=source_tag(NAME, db_path, env, f"observation-{row.get('id')}"),
    )


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _list(value: Any) -> list[str]:
    """A JSON list column (claude-mem stores ``facts`` and ``concepts`` as JSON text); a
    plain text value is one item."""
    if not isinstance(value, str) or not value.strip():
        return []
    try:
        loaded = json.loads(value)
    except ValueError:
        return [value.strip()]
    if isinstance(loaded, list):
        return [str(v).strip() for v in loaded if str(v).strip()]
    return [str(loaded)]
