"""Names that differ only in case: one file on a Mac's (or Windows') disk, two in git.

A case-insensitive, case-preserving work tree (APFS, NTFS; git sets ``core.ignorecase``)
holds one file for ``facts/Foo.md`` and ``facts/foo.md``. memoryd's private index hashed
every tracked path, read foo.md's bytes for the ``Foo.md`` entry and committed them as an
edit: Foo.md's text ended in no file on any device. Two rules, so it cannot happen:

- On such a work tree, tracked paths that collide when case-folded are never committed
  (:func:`twins`): the pair is held back (left out, so status says so), and every tracked
  version the one file on disk does not hold is written beside it as a named conflict
  copy, which syncs; the user merges and deletes one on any device.
- No device commits a new path that case-folds onto one git already has, or onto another
  new one (:func:`part`): it is moved to a conflict copy of that path first, as any other
  collision, so the remote never holds a pair the next Mac cannot check out. The replay
  applies the same rule to what two devices added at once
  (:mod:`memoryd.sync.replay`).
"""

from __future__ import annotations

import logging
import os
import posixpath
from collections.abc import Collection, Iterable

from memoryd.conflicts import copy_path
from memoryd.fsutil import atomic_write
from memoryd.sync.repo import Repo, device_of

log = logging.getLogger(__name__)

TWIN_WHY = "its name differs only in case from {}, which git also tracks, and this disk holds one"


def fold(path: str) -> str:
    return path.casefold()


def folds(repo: Repo) -> bool:
    """Is this work tree case-insensitive (git's ``core.ignorecase``, or the disk says so)?"""
    said = repo.git.config_get("core.ignorecase")
    if said is not None:
        return said.lower() in ("true", "yes", "on", "1")
    return os.path.exists(repo.top / ".GIT") and os.path.exists(repo.top / ".git")


def clashes(paths: Iterable[str]) -> dict[str, list[str]]:
    """Case-folded name -> the paths that share it, for the names more than one path has."""
    groups: dict[str, list[str]] = {}
    for path in paths:
        groups.setdefault(fold(path), []).append(path)
    return {k: sorted(v) for k, v in groups.items() if len(v) > 1}


def part(repo: Repo, changes: list[tuple[str, str]], head: str | None, device: str) -> list[str]:
    """Move each new file whose name case-folds onto a tracked path (or onto another new
    one) to a conflict copy of that path; the notices. ``changes``: :func:`pending`'s."""
    added = [p for status, p in changes if status == "??"]
    if not added:
        return []
    tracked = set(repo.git.ls_tree(head, repo.prefix)) if head else set()
    owner = {fold(p): p for p in sorted(tracked)}
    notices = []
    for path in sorted(added):
        key = fold(path)
        first = owner.setdefault(key, path)
        if first != path and first in tracked and not os.path.lexists(repo.top / first):
            owner[key] = first = path  # renamed to another case: the old name is gone
        if first == path or not (repo.top / path).is_file():
            continue
        data = (repo.top / path).read_bytes()
        folder = posixpath.dirname(path)
        taken = {posixpath.join(folder, n) for n in os.listdir(repo.top / folder or ".")}
        copy = copy_path(first, device, data, taken)
        os.replace(repo.top / path, repo.top / copy)
        rel, rel_first, rel_copy = (repo.root_path(p) for p in (path, first, copy))
        log.info("%s case-folds onto %s: moved to %s", path, first, copy)
        notices.append(
            f"{rel} differs only in case from {rel_first}: a Mac's or Windows' disk cannot hold "
            f"both, so it was saved as {rel_copy}; merge it into {rel_first} and delete the copy"
        )
    return notices


def twins(repo: Repo, changes: Collection[str], head: str | None) -> dict[str, str]:
    """On a case-insensitive work tree: each changed tracked path that shares its folded
    name with another tracked path -> that other path (the pair is never committed)."""
    if head is None or not changes:
        return {}
    tracked = repo.git.ls_tree(head, repo.prefix)
    groups = clashes(tracked)
    if not groups:
        return {}
    found: dict[str, str] = {}
    for group in groups.values():
        if any(p in changes for p in group):
            for path in group:
                found[path] = next(p for p in group if p != path)
    return found


def keep_twins(repo: Repo, pairs: dict[str, str], head: str, device: str) -> list[str]:
    """Write each tracked version of ``pairs`` the file on disk does not hold as a named
    conflict copy beside it (once: the copy's name is its content's); the notices."""
    tracked = repo.git.ls_tree(head, repo.prefix)
    notices = []
    for path in sorted(pairs):
        full = repo.top / path
        on_disk = full.read_bytes() if full.is_file() else None
        data = repo.git.blob(tracked[path][1])
        if data == on_disk:
            continue
        folder = posixpath.dirname(path)
        device = device_of(repo, head, path)
        plain = repo.top / copy_path(path, device, data, ())
        if plain.is_file() and plain.read_bytes() == data:
            continue  # written by an earlier cycle: the copy's name is its content's
        taken = {posixpath.join(folder, n) for n in os.listdir(repo.top / folder or ".")}
        copy = copy_path(path, device, data, taken)
        atomic_write(repo.top / copy, data)
        notices.append(
            f"{repo.root_path(path)} and {repo.root_path(pairs[path])} differ only in case and "
            f"this disk holds one file for both: {repo.root_path(path)}'s text is saved as "
            f"{repo.root_path(copy)}; merge them into one name (then delete the other) and "
            "memoryd syncs the pair again"
        )
    return notices
