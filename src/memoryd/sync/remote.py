"""Talking to the remote (fetch, push) and moving the work tree between commits.

Moving is git's own two-tree ``read-tree -m -u`` (what a fast-forward does):
it refuses, changing nothing, when a file it would replace was edited since,
and it keeps the user's staged work on paths the move does not touch. The
branch moves (compare-and-swap) only after the files did, so a kill between
the two leaves files that read as local changes equal to the remote: the next
cycle commits them and the replay sees both sides agree.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memoryd.fsutil import atomic_write
from memoryd.roots import STATE_FILE
from memoryd.sync.git import NET_TIMEOUT_S, GitError
from memoryd.sync.repo import Repo

Aside = Callable[[str], str]  # root-relative path -> where to move a local file out of the way


class Offline(Exception):
    """The remote could not be reached (or refused us); git's message says why."""


@dataclass
class Target:
    remote: str
    branch: str  # local branch
    remote_branch: str
    last_rejection: str = ""

    @property
    def tracking(self) -> str:
        return f"refs/remotes/{self.remote}/{self.remote_branch}"


def target(repo: Repo, remote: str, branch: str) -> Target | None:
    """Where the branch syncs to; None when the repository has no such remote."""
    if remote not in repo.git.remotes():
        return None
    merge = repo.git.config_get(f"branch.{branch}.merge")
    upstream_remote = repo.git.config_get(f"branch.{branch}.remote")
    name = branch
    if merge and upstream_remote == remote and merge.startswith("refs/heads/"):
        name = merge[len("refs/heads/") :]
    return Target(remote, branch, name)


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "unknown error"


def fetch(repo: Repo, t: Target) -> str | None:
    """Fetch the remote branch; its commit, or None when it does not exist yet."""
    spec = f"+refs/heads/{t.remote_branch}:{t.tracking}"
    try:
        done = repo.git.run(
            "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", t.remote, spec,
            check=False, timeout=NET_TIMEOUT_S,
        )  # fmt: skip
    except subprocess.TimeoutExpired as exc:
        raise Offline(f"git fetch {t.remote} timed out") from exc
    if done.code != 0:
        if "couldn't find remote ref" in done.err:
            with contextlib.suppress(GitError):
                repo.git.run("update-ref", "-d", t.tracking)
            return None
        raise Offline(f"git fetch {t.remote}: {_last_line(done.err)}")
    return repo.git.rev(t.tracking)


def push(repo: Repo, t: Target, commit: str) -> bool:
    """Push ``commit`` to the remote branch; False when rejected (the remote moved on)."""
    dest = f"{commit}:refs/heads/{t.remote_branch}"
    try:
        done = repo.git.run("push", "--porcelain", "--quiet", t.remote, dest, check=False,
                            timeout=NET_TIMEOUT_S)  # fmt: skip
    except subprocess.TimeoutExpired as exc:
        raise Offline(f"git push {t.remote} timed out") from exc
    if done.code == 0:
        repo.git.run("update-ref", t.tracking, commit)
        return True
    said = done.text + done.err
    if any(word in said for word in ("[rejected]", "[remote rejected]", "non-fast-forward")):
        # someone else pushed first, or holds the remote's ref lock right now: fetch, go again
        rejected = [line for line in said.splitlines() if "rejected]" in line]
        t.last_rejection = (rejected or [_last_line(said)])[0].strip()
        return False
    raise Offline(f"git push {t.remote}: {_last_line(done.err)}")


EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


def move(repo: Repo, old: str | None, new: str, reason: str, aside: Aside) -> list[str]:
    """Move work tree, index and branch from ``old`` to ``new`` (GitError: nothing moved).

    git overwrites ignored files without asking, so any untracked file under the
    root that an incoming file would replace is first renamed aside (``aside``
    names the new place); ``.state.json`` files keep this device's bytes.
    """
    notices, kept = _clear_the_way(repo, old, new, aside)
    repo.git.run("update-index", "-q", "--refresh", check=False)
    try:
        repo.git.run("read-tree", "-m", "-u", old or EMPTY_TREE, new)
    finally:
        for path, data in kept.items():
            if not path.is_file() or path.read_bytes() != data:
                atomic_write(path, data)  # the local counters stay local
    repo.git.update_ref("HEAD", new, old, reason)
    return notices


def _clear_the_way(
    repo: Repo, old: str | None, new: str, aside: Aside
) -> tuple[list[str], dict[Path, bytes]]:
    raw = repo.git.run(
        "diff", "--name-only", "-z", "--diff-filter=A", old or EMPTY_TREE, new,
        "--", repo.pathspec, readonly=True,
    ).out  # fmt: skip
    notices: list[str] = []
    kept: dict[Path, bytes] = {}
    for item in raw.split(b"\0"):
        path = item.decode("utf-8", "surrogateescape")
        full = repo.top / path
        if not path or not full.is_file() or full.is_symlink():
            continue
        if full.name == STATE_FILE:
            kept[full] = full.read_bytes()
            continue
        rel = repo.root_path(path)
        target = aside(rel)
        os.replace(full, repo.root / target)
        notices.append(f"{rel} arrived from another device; your local file was moved to {target}")
    return notices, kept


def backup(repo: Repo, device: str, stamp: str, commit: str) -> str:
    """Keep ``commit`` reachable under ``refs/memoryd/backup/<device>/<stamp>``."""
    ref = f"refs/memoryd/backup/{device}/{stamp}"
    number = 2
    while repo.git.rev(ref) is not None:
        ref = f"refs/memoryd/backup/{device}/{stamp}-{number}"
        number += 1
    repo.git.update_ref(ref, commit, None, "memoryd: backup before replay")
    return ref
