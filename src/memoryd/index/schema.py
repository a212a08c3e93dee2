"""The index database: opening, checking, migrating, moving a bad one aside.

The database is a cache of the memory files. Anything unexpected about it (not
a database, ``quick_check`` fails, an application id or schema version this
code does not know) makes :func:`connect` move it aside and start an
empty one, which the next reconcile fills from the files.

``quick_check`` reads every page (15 ms at 10k memories, a second at 100k), so
it runs when the file is not the one that last passed it: ``index.sqlite3.checked``
holds that file's inode, size and mtime. memoryd's own writes reach the main file at
a checkpoint; a connection that wrote vouches for the file they left (:func:`vouch`),
so only a change from elsewhere (a copy, a restore, another program, the disk) makes
the next open read every page again.

The full-text table is *contentless* (``content=''``): the memories table keeps
the original text and FTS5 gets the pre-tokenized text. Deleting from a
contentless table needs the exact tokens that were inserted; the tokenizer is
deterministic and its version is recorded in the schema (``TOKENIZER_VERSION``),
so the ``'delete'`` command always gets them. Schema 1 kept the two tables in
step with triggers; schema 2 drops them and :mod:`memoryd.index.store` writes
both in the same transaction (its docstring says why). ``AUTOINCREMENT`` keeps
a rowid from ever being reused. An index written by an older tokenizer (version 1
did not stem English words) is emptied and created anew, and the next reconcile
fills it from the files: its tokens are not the ones a query now looks for.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from memoryd import fingerprint
from memoryd.fsutil import atomic_write, private_file
from memoryd.index.tokenizer import TOKENIZER_VERSION, index_text
from memoryd.roots import CONFLICTS_FILE, INDEX_FILE, ROOT_FILE

log = logging.getLogger(__name__)

APPLICATION_ID = 0x6D656D64  # "memd"
# user_version = SCHEMA_VERSION * 100 + TOKENIZER_VERSION
SCHEMA_VERSION = 4
USER_VERSION = SCHEMA_VERSION * 100 + TOKENIZER_VERSION
BUSY_TIMEOUT_MS = 10_000

_FTS_COLUMNS = "id, summary, load_when, body"
_TOKENS = (
    "memoryd_tokens({p}.id), memoryd_tokens({p}.summary), "
    "memoryd_tokens({p}.load_when), memoryd_tokens({p}.body)"
)

_CREATE_V1 = f"""
CREATE TABLE memories (
    rowid INTEGER PRIMARY KEY AUTOINCREMENT,
    path TEXT NOT NULL UNIQUE,
    root TEXT NOT NULL,
    scope TEXT NOT NULL,
    layout TEXT NOT NULL,
    type TEXT,
    scope_id TEXT,
    id TEXT NOT NULL,
    kind TEXT,
    summary TEXT,
    load_when TEXT,          -- the load_when list, one entry per line
    pinned INTEGER NOT NULL DEFAULT 0,
    supersedes TEXT,         -- one id per line
    superseded_by TEXT,
    created INTEGER,
    updated INTEGER,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    checked_ns INTEGER NOT NULL,  -- when the file was read (racy-mtime guard)
    hash TEXT NOT NULL,
    oversized INTEGER NOT NULL DEFAULT 0,
    problems TEXT NOT NULL DEFAULT '[]',  -- JSON list of {{code, message}}
    body TEXT NOT NULL DEFAULT ''
);
CREATE INDEX memories_root ON memories(root);
CREATE INDEX memories_id ON memories(id);
CREATE VIRTUAL TABLE memories_fts USING fts5(
    {_FTS_COLUMNS}, content='', tokenize="ascii tokenchars '_'"
);
CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts(rowid, {_FTS_COLUMNS})
    VALUES (new.rowid, {_TOKENS.format(p="new")});
END;
CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, {_FTS_COLUMNS})
    VALUES ('delete', old.rowid, {_TOKENS.format(p="old")});
END;
CREATE TRIGGER memories_au AFTER UPDATE OF id, summary, load_when, body ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, {_FTS_COLUMNS})
    VALUES ('delete', old.rowid, {_TOKENS.format(p="old")});
    INSERT INTO memories_fts(rowid, {_FTS_COLUMNS})
    VALUES (new.rowid, {_TOKENS.format(p="new")});
END;
"""

# Triggers make FTS5 flush a segment per row (see memoryd.index.store): gone.
_DROP_TRIGGERS_V2 = """
DROP TRIGGER IF EXISTS memories_ai;
DROP TRIGGER IF EXISTS memories_ad;
DROP TRIGGER IF EXISTS memories_au;
"""

# Every reconcile reads every row's fingerprint: from this index, not from the rows (which
# hold the bodies, so reading them scans the whole table).
_FINGERPRINTS_V3 = """
CREATE INDEX memories_fingerprint ON memories(root, path, size, mtime_ns, checked_ns, hash);
DROP INDEX IF EXISTS memories_root;
"""

# The page's Memories view copies every memory's listing columns into a narrow table of its
# own (memoryd.index.browse). Read from the rows, that copy read every body and called a
# Python dirname per row: 0.5 s of CPU at 100k memories. The columns it derives are computed
# here (generated columns: SQLite computes them as a row is written, nothing in
# memoryd.index.store changes) and kept with the others in one index the copy reads alone
# (no path: 70 bytes a row that only the few files with findings need, found by path).
# ``listed``: a memory file, not memoryd's own ROOT.md, CONFLICTS.md or an index.md (what
# memoryd.compile.blocks.is_generated says of a path).
_LISTING_V4 = f"""
ALTER TABLE memories ADD COLUMN rel TEXT
    GENERATED ALWAYS AS (substr(path, length(root) + 2)) VIRTUAL;
ALTER TABLE memories ADD COLUMN folder TEXT
    GENERATED ALWAYS AS (rtrim(rtrim(rel, replace(rel, '/', '')), '/')) VIRTUAL;
ALTER TABLE memories ADD COLUMN stamp INTEGER
    GENERATED ALWAYS AS (coalesce(updated, created, mtime_ns / 1000000)) VIRTUAL;
ALTER TABLE memories ADD COLUMN own_n INTEGER
    GENERATED ALWAYS AS (
        CASE problems WHEN '[]' THEN 0 ELSE json_array_length(problems) END
    ) VIRTUAL;
ALTER TABLE memories ADD COLUMN listed INTEGER
    GENERATED ALWAYS AS (
        rel NOT IN {(ROOT_FILE, INDEX_FILE, CONFLICTS_FILE)!r}
        AND substr(rel, -{len(INDEX_FILE) + 1}) != '/{INDEX_FILE}'
    ) VIRTUAL;
CREATE INDEX memories_listing ON memories(
    listed, root, id, scope, kind, folder, stamp, pinned, superseded_by, own_n
);
"""

# FTS5 keeps a transaction's new terms in memory up to its hashsize (1 MB by default) before it
# writes them out as a segment; a reconcile's large batch (up to 12 MB of text, see
# memoryd.index.reconcile.BATCH_BYTES) then becomes one segment, not one per megabyte, and
# far less merging. A setting stored in the database; small writes never come near it.
FTS_HASHSIZE = 16 << 20
_TUNING = f"INSERT INTO memories_fts(memories_fts, rank) VALUES ('hashsize', {FTS_HASHSIZE})"

# Forward migrations: MIGRATIONS[v] turns schema v-1 into schema v.
MIGRATIONS: dict[int, str] = {
    1: _CREATE_V1,
    2: _DROP_TRIGGERS_V2,
    3: _FINGERPRINTS_V3,
    4: _LISTING_V4,
}


class BadDatabase(Exception):
    """The file is not an index this code can trust."""


def connect(
    file: Path, check_same_thread: bool = True, *, discard: bool = False
) -> sqlite3.Connection:
    """A ready connection: the database checked, migrated, or moved aside and rebuilt.

    ``discard``: the index is thrown away and rebuilt (``reindex --full``), so it is
    emptied (:func:`reset`) first and checked after: ``quick_check`` then reads the new
    empty tables and the free list's trunk pages, not every page of what is dropped (a
    cold index of 10k spent 15 ms checking the pages it was about to drop, 100k ten times
    that). A file that is not a memoryd index, or that the drop finds damaged, or that
    fails the check after it, is moved aside as a checked open would move it.
    """
    private_file(file)  # SQLite gives the -wal and -shm files the database's mode
    try:
        return _open_checked(file, check_same_thread, discard)
    except (BadDatabase, sqlite3.DatabaseError) as exc:
        move_aside(file, str(exc))
    private_file(file)  # the new one too
    return _open_checked(file, check_same_thread)


def _open_checked(file: Path, check_same_thread: bool, discard: bool = False) -> sqlite3.Connection:
    conn = sqlite3.connect(file, isolation_level=None, check_same_thread=check_same_thread)
    try:
        _configure(conn)
        if discard:
            _check_identity(conn)
            reset(conn)
        _check(conn, file)
        _migrate(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def _configure(conn: sqlite3.Connection) -> None:
    # Schema 1's triggers call memoryd_tokens(); registered until they are dropped.
    conn.create_function("memoryd_tokens", 1, index_text, deterministic=True)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")


def _check(conn: sqlite3.Connection, file: Path) -> None:
    stamp = _stamp(file)
    if stamp is None or _checked(file) != stamp:
        result = quick_check(conn)
        if result != "ok":
            raise BadDatabase(f"quick_check failed: {result}")
        _remember_checked(file, stamp)
    _check_identity(conn)


def quick_check(conn: sqlite3.Connection) -> str:
    """``PRAGMA quick_check``'s first answer, on one line: ``ok`` for a sound database
    (SQLite's first answer may be two lines, ``*** in database main ***`` and the fault)."""
    result = conn.execute("PRAGMA quick_check").fetchone()
    return "no answer" if result is None else "; ".join(str(result[0]).split("\n"))


def _check_identity(conn: sqlite3.Connection) -> None:
    """A memoryd index of a schema this code knows, or an empty database (BadDatabase)."""
    app_id = conn.execute("PRAGMA application_id").fetchone()[0]
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if app_id == 0 and version == 0 and _is_empty(conn):
        return
    if app_id != APPLICATION_ID:
        raise BadDatabase(f"not a memoryd index (application_id {app_id})")
    if version not in _known_versions():
        raise BadDatabase(f"unknown schema version {version}")


def _marker(file: Path) -> Path:
    return file.with_name(file.name + ".checked")


def _checked(file: Path) -> str | None:
    try:
        return _marker(file).read_text()
    except (OSError, UnicodeDecodeError):
        return None


def _stamp(file: Path) -> str | None:
    """The database file's fingerprint, as the marker file keeps it."""
    found = fingerprint.of_path(file)
    return None if found is None else " ".join(map(str, found)) + "\n"


def _remember_checked(file: Path, stamp: str | None) -> None:
    """Note that the file passed ``quick_check`` as it is now (best effort)."""
    if stamp is None or stamp != _stamp(file):
        return
    try:
        atomic_write(_marker(file), stamp.encode(), durable=False)
    except OSError as exc:
        log.debug("index: cannot record the check of %s: %s", file, exc)


def vouch(file: Path, identity: tuple[int, int] | None) -> None:
    """Note that ``file`` passes as checked as memoryd's own committed writes left it,
    when it is still the file they went to (``identity``, taken when it was opened and
    checked). SQLite's own writes are not the damage ``quick_check`` looks for, and
    reading every page after each checkpoint made the first command after a write wait
    (a second of CPU at 100k memories, and again after the daemon's every checkpoint)."""
    if identity is None or fingerprint.identity(file) != identity:
        return  # replaced or gone: the next open checks what is there
    stamp = _stamp(file)
    if stamp is not None and _checked(file) != stamp:
        _remember_checked(file, stamp)


def _known_versions() -> set[int]:
    return {v * 100 + t for v in MIGRATIONS for t in range(1, TOKENIZER_VERSION + 1)}


def _is_empty(conn: sqlite3.Connection) -> bool:
    return bool(conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0)


def _migrate(conn: sqlite3.Connection) -> None:
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version == USER_VERSION:
        return  # the common case: no write lock taken
    if version and version % 100 != TOKENIZER_VERSION:
        log.info(
            "index: the tokenizer changed (version %d, now %d): rebuilding the index",
            version % 100, TOKENIZER_VERSION,
        )  # fmt: skip
        reset(conn)
        return
    with write(conn):
        current = conn.execute("PRAGMA user_version").fetchone()[0] // 100
        if current == 0:
            log.info("index: creating a new index (schema %d)", SCHEMA_VERSION)
        for version in range(current + 1, SCHEMA_VERSION + 1):
            if current:
                log.info("index: migrating schema to version %d", version)
            for statement in _statements(MIGRATIONS[version]):
                conn.execute(statement)
        if current == 0:
            conn.execute(_TUNING)
        if current != SCHEMA_VERSION:
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {USER_VERSION}")


def _statements(script: str) -> Iterator[str]:
    """Split a script into statements (triggers contain semicolons)."""
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            yield pending.strip()
            pending = ""
    if pending.strip():
        raise ValueError(f"incomplete statement in migration: {pending!r}")


def reset(conn: sqlite3.Connection) -> None:
    """Drop everything and create the current schema (``reindex --full``).

    The old tables' pages go to the free list as they are (``secure_delete = FAST`` for the
    drop; SQLite built with SECURE_DELETE, as Debian's is, writes zeros over every page it frees:
    dropping an index of 100k files cost 0.66 s of CPU that way, 0.05 s without), and the
    rebuild that follows writes over them.
    """
    (before,) = conn.execute("PRAGMA secure_delete").fetchone()
    conn.execute("PRAGMA secure_delete = FAST")
    try:
        _recreate(conn)
    finally:
        conn.execute(f"PRAGMA secure_delete = {'FAST' if before == 2 else int(before)}")


def _recreate(conn: sqlite3.Connection) -> None:
    with write(conn):
        tables = conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'memories'"
        ).fetchall()
        if tables:
            conn.execute("DROP TABLE memories")  # drops its triggers and indexes too
        conn.execute("DROP TABLE IF EXISTS memories_fts")
        for version in range(1, SCHEMA_VERSION + 1):
            for statement in _statements(MIGRATIONS[version]):
                conn.execute(statement)
        conn.execute(_TUNING)
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute(f"PRAGMA user_version = {USER_VERSION}")


@contextlib.contextmanager
def write(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One ``BEGIN IMMEDIATE`` transaction: committed on success, rolled back on error."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def move_aside(file: Path, reason: str, clock: Callable[[], float] = time.time) -> Path:
    """Rename a bad database (and its WAL files) so a fresh one can take its place."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(clock()))
    aside = file.with_name(f"{file.name}.bad-{stamp}-{os.getpid()}")
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.replace(f"{file}{suffix}", f"{aside}{suffix}")
    # told once it is true: on a read-only cache the rename fails, and nothing was moved
    log.warning("index: %s is unusable (%s); moved to %s and rebuilding", file, reason, aside)
    return aside
