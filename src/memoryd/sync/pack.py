"""A bulk change's blobs written into one pack before the private index takes them.

``git update-index --add`` writes every blob it hashes as a loose object, a file of its
own: the first commit of 100k memories spent 25 s of CPU there (18 s of it the kernel
making 100k files), and its push 24 s more reading them back one by one. ``git
fast-import`` writes the same bytes into one pack in a fraction of that; ``update-index``
then hashes each file as before (filters, ``core.autocrlf``, modes and stat data all
git's own) and, finding the object there, writes nothing, and the push sends the packed
objects as they are. A file whose cleaned text differs from its bytes (a clean filter,
CRLF under ``core.autocrlf``) is written loose by ``update-index`` as before; its raw
copy in the pack is garbage nobody names.

A batch below git's own unpack limit (:data:`PACK_FROM`) is left to ``update-index``:
fast-import would write so few objects loose anyway. The paths go in chunks
(:data:`CHUNK_FILES`, :data:`CHUNK_BYTES`) so that no git call's time, or memory, grows
with the root past the 60 s a local git gets.

A ``git gc --prune=now`` run by hand meanwhile may delete the pack's objects, which
nothing names until the tree is written and held (:func:`memoryd.sync.heal.keep`), as it
could delete the loose ones: ``update-index`` then writes a missing one again, and
``write-tree`` refuses an index naming one ("invalid object"), so the cycle fails and the
next writes them again; the branch never names a missing blob.
"""

from __future__ import annotations

import stat
from collections.abc import Iterator
from pathlib import Path

from memoryd.sync.repo import Repo

PACK_FROM = 100  # git's transfer.unpackLimit: fast-import keeps fewer objects loose
CHUNK_FILES = 20_000  # paths per git call (about 1 s of CPU each on a loaded machine)
CHUNK_BYTES = 32 << 20  # file bytes per fast-import stream (files go up to 1 MiB each)


def chunks(repo: Repo, paths: list[str]) -> Iterator[list[str]]:
    """``paths`` (repo-relative) in chunks for ``update-index``; when there are
    :data:`PACK_FROM` or more, the blobs of each chunk are packed before it is handed out."""
    if len(paths) < PACK_FROM:
        if paths:
            yield paths
        return
    chunk: list[str] = []
    blobs: list[bytes] = []
    size = 0
    for path in paths:
        data = _regular_file(repo.top / path)
        chunk.append(path)
        if data is not None:
            blobs.append(data)
            size += len(data)
        if len(chunk) >= CHUNK_FILES or size >= CHUNK_BYTES:
            write(repo, blobs)
            yield chunk
            chunk, blobs, size = [], [], 0
    if chunk:
        write(repo, blobs)
        yield chunk


def write(repo: Repo, blobs: list[bytes]) -> None:
    """Write ``blobs`` into one pack (``git fast-import``; no deltas: memories rarely share
    text, and a delta per blob was most of fast-import's time)."""
    if blobs:
        stream = b"".join(b"blob\ndata %d\n%b\n" % (len(data), data) for data in blobs)
        repo.git.run("fast-import", "--quiet", "--depth=0", input=stream)


def _regular_file(full: Path) -> bytes | None:
    """The bytes of a regular file (not a symbolic link), or None: deleted, a link, unreadable.
    A file changed after this read is hashed again by update-index: its text is written then."""
    try:
        if not stat.S_ISREG(full.lstat().st_mode):
            return None
        return full.read_bytes()
    except OSError:
        return None
