"""Keeping FTS5's big segments from being merged under a user's save.

FTS5 writes each transaction as a new segment and merges segments as they pile up
(``automerge``, ``crisismerge``). A cold index of 100k memories leaves a few big segments
(10,171 and 2,949 pages) beside small ones, and a few edits later FTS5 merges the big ones
inside an ordinary one-file save: that save took 0.3-2.3 s instead of 2 ms (300 single
edits at 100k: p50 1.4 ms, max 1,875 ms), and the daemon's save -> searchable p95 at 100k
was 600-1,000 ms instead of 160. Merged into one segment (``optimize``, 1.6 s of CPU at
100k) the index gives the same answers, and later merges involve only the small segments
saves add (the same 300 edits: max 29 ms).

:func:`tidy` does that when the index holds two segments or more of :data:`BIG_PAGES`
pages: a cheap test (the structure record is one small blob) that the daemon makes after
its batches, so the merge runs once after a cold index or a large pull, on the daemon's
own time, and not inside a save.
"""

from __future__ import annotations

import logging
import sqlite3
import time

from memoryd.index.schema import write

log = logging.getLogger(__name__)

BIG_PAGES = 1000  # FTS5 leaf pages are about 4 KB: a segment of 4 MB of index or more
_STRUCTURE = "SELECT block FROM memories_fts_data WHERE id = 10"  # FTS5_STRUCTURE_ROWID
_V2 = b"\xff\x00\x00\x01"  # a contentless_delete table's structure record


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """SQLite's varint at ``at``: (value, the offset after it)."""
    value = 0
    for k in range(8):
        byte = data[at + k]
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value, at + k + 1
    return (value << 8) | data[at + 8], at + 9


def sizes(data: bytes) -> list[int]:
    """The page count of each segment a structure record lists (fts5_index.c's
    fts5StructureDecode: a cookie, levels, segments, a write counter, then per level its
    merge state and segments: id, first page, last page; five more varints each in V2)."""
    at, extra = (8, 5) if data[4:8] == _V2 else (4, 0)
    levels, at = _varint(data, at)
    _, at = _varint(data, at)  # segments in all
    _, at = _varint(data, at)  # write counter
    out = []
    for _level in range(levels):
        _, at = _varint(data, at)  # merge in progress
        count, at = _varint(data, at)
        for _segment in range(count):
            _, at = _varint(data, at)  # segment id
            first, at = _varint(data, at)
            last, at = _varint(data, at)
            for _more in range(extra):
                _, at = _varint(data, at)
            out.append(last - first + 1)
    return out


def big_segments(conn: sqlite3.Connection) -> int:
    """How many segments of :data:`BIG_PAGES` or more the full-text index holds (0 when
    its structure record cannot be read: a format this code does not know)."""
    row = conn.execute(_STRUCTURE).fetchone()
    if row is None or not isinstance(row[0], bytes):
        return 0
    try:
        return sum(1 for pages in sizes(row[0]) if pages >= BIG_PAGES)
    except IndexError:
        log.debug("index: an FTS5 structure record this code cannot read; not merging")
        return 0


def tidy(conn: sqlite3.Connection) -> bool:
    """Merge the full-text index into one segment when it holds two big ones (True if
    it did)."""
    if big_segments(conn) < 2:
        return False
    started = time.perf_counter()
    with write(conn):
        conn.execute("INSERT INTO memories_fts(memories_fts) VALUES ('optimize')")
    log.info("index: merged the full-text index (%.0f ms)", (time.perf_counter() - started) * 1000)
    return True
