"""Reading files into index rows: hash, parse, identify, tokenize.

A pure-ish function of a file's bytes and place (:func:`load`), so a large
batch (a cold index of thousands of files) can be spread over worker
processes (:mod:`memoryd.index.pool`) while this process writes to SQLite.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from memoryd.config.sections import RootConfig
from memoryd.fingerprint import Fingerprint
from memoryd.index import store
from memoryd.index.db import dump_problems, join_lines
from memoryd.index.layout import expected_id, identify, summary
from memoryd.memory import NOT_REGULAR, Problem, looks_binary, parse
from memoryd.team import visible_to
from memoryd.validation import validate

HEAD_BYTES = 64 * 1024  # how much of an oversized file is read for its frontmatter


@dataclass(frozen=True)
class Spread:
    """When a batch is loaded in worker processes (:mod:`memoryd.index.pool`), and how it is
    cut up. A parameter of ``reconcile`` so a test can spread a small batch."""

    # Files to load before worker processes pay for themselves. A worker costs about 75 ms of
    # CPU to start and a few microseconds a file to send its answers back; below this a cold
    # index takes well under two seconds in this process alone, and CPU is what a shared
    # machine runs out of (a cold index of 10k: about 15% less CPU without them).
    min_files: int = 20_000
    # CPUs the machine must have. Workers only buy wall time, with CPU: on two cores the one
    # worker competes with this process (which writes SQLite) and whatever else runs, and a
    # cold index of 100k took 13% more CPU for no less wall time at load 3 (docs/search.md).
    min_cpus: int = 3
    chunk: int = 64  # files per request at most
    worker: tuple[str, ...] = ()  # the worker's command line (default: memoryd.index.worker)


class Read(NamedTuple):
    """A file as read from disk, before it is parsed."""

    data: bytes  # the whole file, or its head when oversized
    size: int
    mtime_ns: int
    hash: str
    oversized: bool
    ctime_ns: int  # with size, mtime_ns and inode: its fingerprint (memoryd.fingerprint)
    inode: int


class Loaded(NamedTuple):
    """A file read: its fingerprint, and its row unless the content hash was unchanged.

    Tuples, not dataclasses: worker processes send one per file through a pipe, and a
    tuple pickles in half the time.
    """

    size: int
    mtime_ns: int
    checked_ns: int
    hash: str
    oversized: bool
    row: tuple[Any, ...] | None  # the memories row (None: same hash as before)
    tokens: tuple[str, ...]  # the index text of each full-text column (store.TEXT_COLUMNS)
    fingerprint: Fingerprint  # as memoryd.fingerprint.of gives it, from the read's fstat
    # the frontmatter the row was made from, for a compile of the same pass (see reconcile's
    # ``parsed``): None when no row was made, or the file is binary or was read in part only
    meta: dict[Any, Any] | None


class Failed(NamedTuple):
    """A file that could not be loaded, and why."""

    gone: bool  # the file disappeared (as opposed to: could not be read)
    reason: str


def read_file(path: str, cap: int) -> Read:
    """The bytes (or, above ``cap``, the head) of a file and the hash of all of it."""
    import hashlib  # loads OpenSSL: kept off a recall that reads no file

    # No file object (non-inheritable, as every fd of Python). O_NONBLOCK: opening a FIFO
    # named like a memory waits for a writer that never comes, and would hang every
    # reindex, recall and the daemon; it changes nothing for a regular file.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # a FIFO, a device: never read it
            raise OSError(errno.EINVAL, NOT_REGULAR, path)
        if st.st_size <= cap:
            data = _read_to_end(fd, st.st_size)
            digest = hashlib.blake2b(data, digest_size=16).hexdigest()
            return Read(data, len(data), st.st_mtime_ns, digest, False, st.st_ctime_ns, st.st_ino)
        head = _read_exactly(fd, HEAD_BYTES)
        hasher = hashlib.blake2b(head, digest_size=16)
        while chunk := os.read(fd, 1 << 20):
            hasher.update(chunk)
        digest = hasher.hexdigest()
        return Read(head, st.st_size, st.st_mtime_ns, digest, True, st.st_ctime_ns, st.st_ino)
    finally:
        os.close(fd)


def _read_exactly(fd: int, size: int) -> bytes:
    """The next ``size`` bytes of ``fd`` (fewer at its end)."""
    parts: list[bytes] = []
    while size > 0 and (part := os.read(fd, size)):
        parts.append(part)
        size -= len(part)
    return b"".join(parts)


def _read_to_end(fd: int, size: int) -> bytes:
    """The rest of ``fd``, which fstat said holds ``size`` bytes.

    One read of ``size + 1`` bytes: fewer than that is the end of a regular file, with no
    second read to confirm it (a syscall a file). A file being written may hold more by
    now, and then it is read to its end; a read cut short, or a file cut short meanwhile,
    gives fewer bytes than its size, a row whose size then differs from the file's, and the
    next reconcile reads it again.
    """
    data = os.read(fd, size + 1)
    if len(data) <= size:
        return data
    parts = [data]
    while part := os.read(fd, max(1 << 16, size - len(data) + 1)):
        parts.append(part)
    return b"".join(parts)


def load(root: RootConfig, path: str, cap: int, old_hash: str | None) -> Loaded | Failed:
    """Read ``path``; parse it into a row unless its hash equals ``old_hash``."""
    return load_many(root, [(path, old_hash)], cap)[0]


LOAD_CHUNK = 1024  # files a reconcile hands load_many at a time
LOAD_BYTES = 4 << 20  # bytes of files in memory at most before their rows are made


def load_many(
    root: RootConfig, items: Sequence[tuple[str, str | None]], cap: int
) -> list[Loaded | Failed]:
    """Each ``(path, old_hash)`` read, and parsed into a row unless its hash equals
    ``old_hash``, in order, done phase by phase: every file read, then every row made,
    then each full-text column of every row tokenized (this process's batches, and each
    worker's chunk, :mod:`memoryd.index.pool`; :func:`load` is a chunk of one). The reads
    stop at :data:`LOAD_BYTES` (a few thousand memories; a few files near the size cap)
    and the phases run on what was read, then the next files are read.

    A file's result is the same whatever chunk holds it, its ``checked_ns`` taken right
    after its own read. Only the order of the work differs: a phase runs the same
    code many times in a row, where a file at a time cycled through the system calls, the
    frontmatter reader, the tokenizer and the stemmer, each pushing the others' code and
    data out of the CPU's caches: a cold index of 10k took 3-5% less CPU in chunks of 64
    than file by file. Chunks of :data:`LOAD_CHUNK` load its files 3.5% faster again than
    chunks of 64 (the whole cold index: 6% less CPU while compiled files still gave FTS5
    their text, the same since).
    """
    out: list[Loaded | Failed] = []
    while len(out) < len(items):
        reads = _read_some(items, len(out), cap)
        out += _load_read(root, items[len(out) : len(out) + len(reads)], reads)
    return out


def _read_some(
    items: Sequence[tuple[str, str | None]], start: int, cap: int
) -> list[tuple[Read, int] | Failed]:
    """The files of ``items`` from ``start`` on, read until :data:`LOAD_BYTES` are held
    (one file at least), each with the time right after its read."""
    reads: list[tuple[Read, int] | Failed] = []
    held = 0
    for index in range(start, len(items)):
        try:
            read = read_file(items[index][0], cap)
        except (FileNotFoundError, NotADirectoryError) as exc:
            reads.append(Failed(gone=True, reason=reason(exc)))
            continue
        except OSError as exc:
            reads.append(Failed(gone=False, reason=reason(exc)))
            continue
        reads.append((read, time.time_ns()))
        held += len(read.data)
        if held >= LOAD_BYTES:
            break
    return reads


def _load_read(
    root: RootConfig,
    items: Sequence[tuple[str, str | None]],
    reads: list[tuple[Read, int] | Failed],
) -> list[Loaded | Failed]:
    """:func:`load_many` of files already read: their rows, then their columns' tokens."""
    made = [
        None if isinstance(done, Failed) or done[0].hash == old else record(root, path, *done)
        for (path, old), done in zip(items, reads, strict=True)
    ]
    hidden = [isinstance(one, Failed) for one in made]  # a record that failed is HIDDEN
    reads = [HIDDEN if no else done for no, done in zip(hidden, reads, strict=True)]
    records = [None if isinstance(one, Failed) else one for one in made]
    tokens = iter(store.fts_tokens([store.texts(one[0]) for one in records if one is not None]))
    out: list[Loaded | Failed] = []
    for done, one in zip(reads, records, strict=True):
        if isinstance(done, Failed):
            out.append(done)
            continue
        read, checked = done
        row, meta = (None, None) if one is None else one
        text = () if row is None else next(tokens)
        fingerprint = (read.size, read.mtime_ns, read.ctime_ns, read.inode)
        out.append(
            Loaded(read.size, read.mtime_ns, checked, read.hash, read.oversized, row, text,
                   fingerprint, meta)
        )  # fmt: skip
    return out


# A proposal another device wrote, left out of this device's index (as a file that is gone:
# a row it had goes) until a person accepts it: see memoryd.team.
HIDDEN = Failed(gone=True, reason="a proposal of another device, not yet accepted")


def record(
    root: RootConfig, path: str, read: Read, checked_ns: int
) -> tuple[tuple[Any, ...], dict[Any, Any] | None] | Failed:
    """The memories row for a file (pure: a function of its bytes and place) and the
    frontmatter it was made from (:attr:`Loaded.meta`), or :data:`HIDDEN`."""
    relative = path[len(str(root.path)) + 1 :].replace(os.sep, "/")
    memory = parse(read.data, keep_source=False)
    if not visible_to(memory.meta, root.viewer):
        return HIDDEN
    ident = identify(root, relative, memory)
    problems = validate(memory, expected_id=expected_id(root, relative))
    body = memory.body
    if read.oversized:
        body = ""
        problems.append(
            Problem("file.oversized", f"{read.size} bytes: only the frontmatter is indexed")
        )
    row = (
        path, str(root.path), root.scope, root.layout, ident.type, ident.scope_id,
        ident.id, memory.kind, summary(root, memory), join_lines(memory.load_when),
        int(memory.pinned), join_lines(memory.supersedes), memory.superseded_by,
        memory.created, memory.updated, read.size, read.mtime_ns, checked_ns, read.hash,
        int(read.oversized), dump_problems(problems), body,
    )  # fmt: skip
    whole = not read.oversized and not looks_binary(read.data)
    return row, memory.meta if whole else None


def reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__
