"""The floor: the least any Python indexer of a memory root must do, to measure memoryd against.

It reads every ``.md`` file, splits the frontmatter off (no YAML), tokenizes in
Python the way memoryd's index needs (NFKC + case fold, CJK bigrams, Latin words
whole) and inserts rows and FTS5 tokens in one transaction; a rescan stats every
file against the stored (size, mtime); a query is one FTS5 MATCH ranked by bm25.
No validation, no problems, no hit counts, no snippets: whatever memoryd costs
beyond this is the price of what it does for the user, and the benchmark prints
it as a ratio measured in the same run.

    python bench/floor.py index ROOT DB      # cold index (run as a process: CPU is measured)
"""

from __future__ import annotations

import itertools
import os
import re
import sqlite3
import sys
import unicodedata
from pathlib import Path

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_RUN = re.compile(f"[{_CJK}]+|[^\\W{_CJK}]+")
SCHEMA = """
CREATE TABLE files (rowid INTEGER PRIMARY KEY, path TEXT UNIQUE, size INT, mtime INT,
                    summary TEXT, body TEXT);
CREATE VIRTUAL TABLE fts USING fts5(meta, body, content='', tokenize="ascii tokenchars '_'");
"""


def tokens(text: str) -> str:
    """The index text of ``text``: words whole, CJK runs as overlapping bigrams."""
    text = text.lower() if text.isascii() else unicodedata.normalize("NFKC", text).casefold()
    out: list[str] = []
    for run in _RUN.findall(text):
        if len(run) > 1 and run[0] >= "\u3040" and not run.isascii():
            out.extend(a + b for a, b in itertools.pairwise(run))
        else:
            out.append(run)
    return " ".join(out)


def files(root: Path) -> list[str]:
    out = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        out += [os.path.join(folder, n) for n in names if n.endswith(".md")]
    return out


def index(root: Path, db: Path) -> int:
    conn = sqlite3.connect(db, isolation_level=None)
    conn.executescript(SCHEMA)
    conn.execute("BEGIN")
    for rowid, path in enumerate(files(root), 1):
        with open(path, "rb") as handle:
            text = handle.read().decode("utf-8", "replace")
        meta, body = "", text
        if text.startswith("---\n"):
            end = text.find("\n---\n", 4)
            if end > 0:
                meta, body = text[4:end], text[end + 5 :]
        stat = os.stat(path)
        conn.execute(
            "INSERT INTO files VALUES (?, ?, ?, ?, ?, ?)",
            (rowid, path, stat.st_size, stat.st_mtime_ns, meta[:200], body),
        )
        conn.execute("INSERT INTO fts(rowid, meta, body) VALUES (?, ?, ?)",
                     (rowid, tokens(meta), tokens(body)))  # fmt: skip
    conn.execute("COMMIT")
    conn.close()
    return rowid if "rowid" in locals() else 0


def rescan(conn: sqlite3.Connection, root: Path) -> int:
    """How many files changed since they were indexed (a stat of each, no reads)."""
    known = {p: (s, m) for p, s, m in conn.execute("SELECT path, size, mtime FROM files")}
    changed = 0
    for path in files(root):
        stat = os.stat(path)
        changed += known.get(path) != (stat.st_size, stat.st_mtime_ns)
    return changed


def query(conn: sqlite3.Connection, text: str, limit: int = 10) -> list[tuple[str, str]]:
    """The best ``limit`` files for the words of ``text`` (OR), by bm25."""
    terms = " OR ".join(f'"{t}"' for t in dict.fromkeys(tokens(text).split()))
    if not terms:
        return []
    sql = ("SELECT f.path, f.summary FROM fts JOIN files f ON f.rowid = fts.rowid "
           "WHERE fts MATCH ? ORDER BY bm25(fts) LIMIT ?")  # fmt: skip
    return list(conn.execute(sql, (terms, limit)))


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] != "index":
        sys.exit("usage: python bench/floor.py index ROOT DB")
    print(index(Path(sys.argv[2]), Path(sys.argv[3])))
