"""The mass-delete guard: a cycle that would delete most of a root's memories commits
nothing and pauses the root (docs/sync.md). Beside :mod:`memoryd.sync.commit`, which
sorts the batch it looks at."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memoryd.sync.commit import Batch, is_memory
from memoryd.sync.repo import Repo


@dataclass(frozen=True)
class MassDelete:
    deleted: int
    total: int


def mass_delete(
    repo: Repo, head: str | None, batch: Batch, share: float, floor: int, *,
    index: Path, agreed: Callable[[], str | None] = lambda: None,
) -> MassDelete | None:  # fmt: skip
    """A deletion of more than ``share`` of the root's memories (and at least ``floor``).

    ``index`` holds the staged batch: a memory git sees moved (renamed, maybe edited)
    is not deleted. Nor is one also gone from ``agreed()`` (the remote as last fetched):
    a cycle killed after moving the work tree to the remote, before the branch, leaves
    the other device's deletes on disk, and they are not this device's to guard. git is
    asked none of this unless at least ``floor`` memories are gone (an edit's cycle).
    """
    removed = [r for r in batch.removed if is_memory(r)]
    if head is None or len(removed) < max(floor, 1):
        return None
    moved = set(renamed_from(repo, head, index))
    gone: set[str] = set()
    remote = agreed()
    base = repo.git.merge_base(head, remote) if remote is not None else None
    if remote is not None and base is not None and base != remote:  # the remote deleted them
        there = {repo.root_path(p) for p in repo.git.ls_tree(remote, repo.prefix)}
        before = {repo.root_path(p) for p in repo.git.ls_tree(base, repo.prefix)}
        gone = {r for r in removed if r in before and r not in there}
    deleted = [r for r in removed if r not in moved and r not in gone]
    if len(deleted) < max(floor, 1):
        return None
    total = sum(1 for p in repo.git.ls_tree(head, repo.prefix) if is_memory(repo.root_path(p)))
    if total and len(deleted) > share * total:
        return MassDelete(len(deleted), total)
    return None


def renamed_from(repo: Repo, head: str, index: Path) -> list[str]:
    """Root-relative old paths of the renames git sees between ``head`` and ``index``."""
    raw = repo.git.run(
        "diff", "--cached", "--name-status", "-z", "-M", "--diff-filter=R", head,
        "--", repo.pathspec, index=index, readonly=True,
    ).out  # fmt: skip
    items = [p.decode("utf-8", "surrogateescape") for p in raw.split(b"\0") if p]
    return [repo.root_path(items[i + 1]) for i in range(0, len(items) - 2, 3)]
