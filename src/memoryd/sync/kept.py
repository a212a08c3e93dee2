"""The private index a cycle commits from, kept for the next cycle with git's stat data.

A cycle never uses the user's index (their staged work stays theirs): it stages and writes
its tree in an index file of its own (``GIT_INDEX_FILE``). Built fresh each cycle, that
index had no stat data and ``git status`` read every byte under the root; kept while HEAD
stays the commit it holds, it makes a cycle cost the change, not the root. Beside it, a
record of the user's index as the cycle left it saves the next cycle comparing it with HEAD.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
import zlib
from pathlib import Path

from memoryd.fsutil import atomic_write, private_dirs
from memoryd.sync.git import config_env
from memoryd.sync.repo import Repo


def private_index(repo: Repo, tmp_dir: Path, rev: str | None) -> Path:
    """A private index file holding exactly ``rev``'s tree (empty for an unborn branch).

    Built fresh, with no stat data, so ``git status`` reads every file under the root.
    It used to be seeded from a copy of the user's index to reuse its stat data; under
    load that made a cycle miss a same-size rewrite of a file (shared.md went from
    "laptop 0" to "laptop 1" and the commit took only the new laptop-1.md): a lost edit.
    """
    private_dirs(tmp_dir)
    fd, name = tempfile.mkstemp(prefix="index-", dir=tmp_dir)
    os.close(fd)
    index = Path(name)
    index.unlink()  # git wants to create it
    if rev is None:
        repo.git.run("read-tree", "--empty", index=index)
    else:
        repo.git.run("read-tree", rev, index=index)
    return index


def kept_index(repo: Repo, kept_dir: Path, head: str | None) -> Path:
    """The root's private index kept from its last cycle, when that cycle left it holding
    ``head``'s tree; else one built fresh (:func:`private_index`), in the same place.

    A kept index has the stat data git recorded, so ``git status`` reads only the files
    whose size or times changed, not every byte under the root (a cycle's cost was the
    root's size, not the change's). The index is only ever written by git itself (never
    copied: a copy's newer mtime hid a same-size rewrite from git's racy-entry check, see
    :func:`private_index`), and the cycle keeps it only once it committed (or found nothing
    to commit): :func:`keep_index`. Any other ending deletes it.
    """
    private_dirs(kept_dir)  # git writes the index files in it with the umask's mode
    index = _kept_path(repo, kept_dir)
    if head is not None and _record(index)[:1] == [head] and index.is_file():
        return index
    index.unlink(missing_ok=True)
    repo.git.run(
        "read-tree", *([head] if head else ["--empty"]), index=index, env=KEPT_INDEX_FORMAT
    )
    return index


# git's version 4 index writes each path as the part that differs from the one before: a
# fifth smaller at 10k memories, and every git of a cycle reads and checksums it whole (status,
# update-index and write-tree read and write it: 1-2 ms less each at 10k)
KEPT_INDEX_FORMAT = config_env({"index.version": "4"})


def _kept_path(repo: Repo, kept_dir: Path) -> Path:
    name = f"{zlib.crc32(os.fsencode(repo.root)):08x}-{zlib.crc32(os.fsencode(repo.git_dir)):08x}"
    return kept_dir / f"{name}.index"


def _record(index: Path) -> list[str]:
    """What :func:`keep_index` recorded beside ``index``: the head, the user's index."""
    try:
        return index.with_suffix(".head").read_text(encoding="ascii").split()
    except (OSError, UnicodeDecodeError):
        return []


def _user_index(repo: Repo) -> str:
    """The user's index file as the file system sees it: git writes it whole, to a new file
    renamed into place, so any write changes its inode or times (a missing one: '-')."""
    try:
        seen = (repo.git_dir / "index").stat()
    except OSError:
        return "-"
    return f"{seen.st_ino}:{seen.st_size}:{seen.st_mtime_ns}:{seen.st_ctime_ns}"


def keep_index(repo: Repo, index: Path, head: str | None, *, user_at_head: bool) -> None:
    """Record that ``index`` holds ``head``'s tree, for the next cycle (see kept_index), and
    with ``user_at_head`` (the user's index agrees with HEAD under the root: the cycle
    checked it, then committed), the user's index as it is now (:func:`user_index_as_left`)."""
    record = index.with_suffix(".head")
    if head is None:
        record.unlink(missing_ok=True)
        index.unlink(missing_ok=True)
    else:
        user = _user_index(repo) if user_at_head else "-"
        atomic_write(record, f"{head}\n{user}\n".encode("ascii"), durable=False)


def user_index_as_left(repo: Repo, kept_dir: Path, head: str) -> bool:
    """Are HEAD and the user's index as the last cycle left them, agreeing under the root (its
    stale entries refreshed first, then the committed ones)? Then nothing under the root can
    be behind HEAD. Any git that wrote the index since (the user's ``git add``, a fast-forward,
    a cycle killed before it recorded this) makes it False, and so does a missing index."""
    user = _user_index(repo)
    return user != "-" and _record(_kept_path(repo, kept_dir)) == [head, user]


def drop_index(index: Path) -> None:
    """Forget a kept index a cycle did not finish with (it may hold staged changes)."""
    index.with_suffix(".head").unlink(missing_ok=True)
    index.unlink(missing_ok=True)


def clean_tmp(tmp_dir: Path, older_than_s: float = 600.0) -> None:
    """Private index files a killed cycle left behind."""
    cutoff = time.time() - older_than_s
    for leftover in tmp_dir.glob("index-*") if tmp_dir.is_dir() else ():
        with contextlib.suppress(OSError):
            if leftover.stat().st_mtime < cutoff:
                leftover.unlink()
