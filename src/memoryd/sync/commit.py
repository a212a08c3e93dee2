"""Commit a root's local changes without touching the user's index or staged work.

The commit is built in a private index (``GIT_INDEX_FILE``, :mod:`memoryd.sync.kept`)
holding HEAD, limited to the root's paths, and moved in with a compare-and-swap
``update-ref``; only then are the user's index entries for those same paths
brought up to date. Files that must not travel are left out: ``.state.json``,
editor temp files, ``sync: false`` memories (kept out of ``git status`` through
``.git/info/exclude``), files over the size cap, symbolic links git would commit as
links (to a file outside the root, or by an absolute path: the other devices got a link
to a path they do not have, never the memory), and quarantined files (a secret, or
conflict markers).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from memoryd.config.sections import Config
from memoryd.conflicts import has_conflict_markers, never_synced
from memoryd.layouts import syncable
from memoryd.memory import id_for_path, parse, shown_name
from memoryd.oversize import over
from memoryd.rootfs import STATE_FILE, is_memory_name
from memoryd.sync import exclude, heal, pack
from memoryd.sync.derived import Quarantined, is_generated, scan_file
from memoryd.sync.git import ZERO, config_env
from memoryd.sync.repo import Repo
from memoryd.sync.state import CONFLICT_MARKERS

log = logging.getLogger(__name__)


@dataclass
class Batch:
    """What one cycle found under the root, sorted into what goes in and what stays out."""

    stage: list[str] = field(default_factory=list)  # repo-relative, present or deleted
    added: list[str] = field(default_factory=list)  # root-relative
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    quarantined: list[Quarantined] = field(default_factory=list)
    left_out: list[dict[str, str]] = field(default_factory=list)
    local_only: list[str] = field(default_factory=list)  # sync: false (root-relative)
    untrack: list[str] = field(default_factory=list)  # tracked .state.json (repo-relative)
    notices: list[str] = field(default_factory=list)


_OWN_TEMP = re.compile(r"^\.memoryd-tmp-[a-z0-9_]{8}$")  # what fsutil.atomic_write makes
TEMP_MAX_AGE_S = 60.0


def clean_own_temp(repo: Repo, changes: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Delete memoryd's own temp files a killed write left (untracked, over a minute old).

    Only names :func:`memoryd.fsutil.atomic_write` makes; a write in progress is
    younger than a minute. The changes without the ones deleted.
    """
    cutoff = time.time() - TEMP_MAX_AGE_S
    kept = []
    for status, path in changes:
        full = repo.top / path
        if status == "??" and _OWN_TEMP.match(full.name):
            with contextlib.suppress(OSError):
                if full.is_file() and not full.is_symlink() and full.stat().st_mtime < cutoff:
                    full.unlink()
                    log.info("removed %s, left behind by a killed write", full)
                    continue
        kept.append((status, path))
    return kept


def pending(repo: Repo, index: Path) -> list[tuple[str, str]]:
    """(status, repo-relative path) of every change under the root against ``index``."""
    raw = repo.git.run(
        "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames",
        "--", repo.pathspec, index=index,
    ).out  # fmt: skip
    found = []
    for record in raw.split(b"\0"):
        if len(record) > 3:
            found.append((record[:2].decode(), record[3:].decode("utf-8", "surrogateescape")))
    skipped = _skip_worktree(repo) if found else set()
    return [change for change in found if change[1] not in skipped]


def _skip_worktree(repo: Repo) -> set[str]:
    """Paths the user's index keeps out of this work tree (git sparse-checkout, or
    update-index --skip-worktree): absent or changed here on purpose. The private index
    knows nothing of that, so a sparse checkout's missing files were committed as deleted
    and pushed, and every device lost them."""
    if not _may_skip(repo):
        return set()
    raw = repo.git.run(
        "ls-files", "-t", "-z", "--", repo.pathspec, readonly=True,
        env={"GIT_LITERAL_PATHSPECS": "1"},
    ).out  # fmt: skip
    return {
        record[2:].decode("utf-8", "surrogateescape")
        for record in raw.split(b"\0")
        if record.startswith(b"S ")
    }


def _may_skip(repo: Repo) -> bool:
    """Can the user's index hold a skip-worktree entry? Not when it is a whole version 2
    index: git writes version 2 whenever no entry has extended flags (skip-worktree,
    intent-to-add), so a one-edit cycle at 100k memories asks no ``ls-files`` (35 ms each).
    A split index keeps entries in a shared file: asked, as any other version is."""
    try:
        with open(repo.git_dir / "index", "rb") as index:
            head = index.read(8)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    if head != b"DIRC\0\0\0\2":
        return True
    return any(any(d.glob("sharedindex.*")) for d in {repo.git_dir, repo.common_dir})


def sort_batch(
    repo: Repo, config: Config, changes: list[tuple[str, str]], layout: str = "plugin"
) -> Batch:
    batch = Batch()
    layout = _layout(config, repo.root)
    for status, path in changes:
        rel = repo.root_path(path)
        if never_synced(rel) or not syncable(layout, rel):
            continue
        full = repo.top / path
        if not full.exists() and not full.is_symlink():
            batch.stage.append(path)
            batch.removed.append(rel)
            continue
        why = _left_out(full, rel, config, batch, repo.root, tracked=status != "??")
        if why is not None:
            continue
        batch.stage.append(path)
        (batch.added if status == "??" else batch.changed).append(rel)
    return batch


LINK_WHY = "a symbolic link to {}: git syncs the link, not the memory"


def _link_left_out(full: Path, root: Path) -> str | None:
    """Why a symbolic link stays out of the commit, or None for one every device can follow
    (a relative link to a file inside the root). git commits a link as its target's path:
    one leading out of the root, or an absolute one, reached every other device as a link to
    a path it does not have, and the memory itself never travelled."""
    if not full.is_symlink():
        return None
    try:
        target = os.readlink(full)
        resolved = full.resolve()
    except (OSError, RuntimeError):  # a loop
        return LINK_WHY.format("itself (a loop)")
    inside = resolved.is_relative_to(root.resolve()) and resolved.is_file()
    return None if inside and not os.path.isabs(target) else LINK_WHY.format(target)


def _layout(config: Config, root: Path) -> str:
    """The layout of the root being synced (layered sessions/ and claude transcripts stay)."""
    found = config.root_for(root)
    return found.layout if found is not None and found.path == root else "plugin"


def _left_out(
    full: Path, rel: str, config: Config, batch: Batch, root: Path, *, tracked: bool
) -> str | None:
    """Why a present file stays out of the commit (recorded on ``batch``), or None."""
    link = _link_left_out(full, root)
    if link is not None:
        batch.left_out.append({"path": rel, "why": link})
        return link
    try:
        size = full.stat().st_size
        data = full.read_bytes() if size <= config.search.max_file_bytes else b""
    except OSError as exc:
        batch.left_out.append({"path": rel, "why": f"unreadable: {exc.strerror}"})
        return "unreadable"
    if size > config.search.max_file_bytes:
        why = over(size, config.search.max_file_bytes)
        batch.left_out.append({"path": rel, "why": why})
        return why
    if rel.endswith(".md") and b"sync:" in data and not parse(data).sync:
        if not tracked:
            batch.local_only.append(rel)
            return "sync: false"
        batch.notices.append(
            f"{rel} says sync: false but git already tracks it, so its changes still sync; "
            f"to keep it on this machine only: git -C {root} rm --cached {rel}"
        )
    if has_conflict_markers(data):
        marked = Quarantined(rel, _marker_line(data), CONFLICT_MARKERS, "<<<<<<<")
        batch.quarantined.append(marked)
        return "conflict markers"
    findings = scan_file(full, root)
    if findings:
        batch.quarantined.extend(findings)
        return "secret"
    return None


def _marker_line(data: bytes) -> int:
    for number, line in enumerate(data.splitlines(), start=1):
        if line.startswith(b"<<<<<<< "):
            return number
    return 1


def is_memory(rel: str) -> bool:
    return is_memory_name(Path(rel).name) and not is_generated(rel)


def tracked_state_files(repo: Repo, head: str | None) -> list[str]:
    if head is None:
        return []
    return list(repo.git.ls_tree(head, repo.repo_path(STATE_FILE)))


def stage(repo: Repo, index: Path, batch: Batch) -> None:
    """Put ``batch`` into the private index (nothing is committed yet); a bulk change's
    blobs go into a pack first (see :mod:`memoryd.sync.pack`)."""
    for chunk in pack.chunks(repo, batch.stage):
        listing = b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in chunk)
        repo.git.run(
            "update-index", "--add", "--remove", "-z", "--stdin", input=listing, index=index
        )
    if batch.untrack:
        listing = b"".join(p.encode() + b"\0" for p in batch.untrack)
        repo.git.run("update-index", "--force-remove", "-z", "--stdin", input=listing, index=index)


def commit(repo: Repo, index: Path, head: str | None, batch: Batch, device: str) -> str | None:
    """Commit the staged private index; the new HEAD or None (no change)."""
    tree = repo.git.run("write-tree", index=index).text.strip()
    if head is not None and tree == repo.git.tree_of(head):
        return None
    message = commit_message(device, batch)
    heal.keep(repo, tree)  # a prune run by hand now leaves it be (see memoryd.sync.heal)
    moved = False
    try:
        new = repo.git.commit_tree(tree, [head] if head else [], message)
        heal.keep(repo, new)
        # the user's index first: after the branch moved, an index without these entries (a
        # new root has none) showed every memory staged for deletion until it was refreshed
        refresh_user_index(repo, batch.stage + batch.untrack, new)
        reason = f"memoryd: commit from {device}"
        repo.git.update_ref("HEAD", new, head, reason, dropping=heal.keep_ref(repo))
        moved = True  # the keep ref went with it
    finally:
        if not moved:
            heal.release(repo)
    return new


def _shown(rel: str) -> str:
    """A memory's id for a commit message, on one line: bytes of a non-UTF-8 name as
    ``\\xe9``, a newline of a name as ``\\x0a``."""
    return shown_name(id_for_path(rel))


def commit_message(device: str, batch: Batch) -> str:
    """Subject and body name the memories; compiled files are listed apart, not counted."""
    verbs = (("add", batch.added), ("change", batch.changed), ("remove", batch.removed))
    kinds = {verb: [i for i in items if is_memory(i)] for verb, items in verbs}
    compiled = sorted(i for _verb, items in verbs for i in items if not is_memory(i))
    parts = [
        f"{verb} " + ", ".join(_shown(i) for i in items) for verb, items in kinds.items() if items
    ]
    fallback = "update compiled files" if compiled else "untrack .state.json"
    subject = f"memoryd({device}): " + ("; ".join(parts) or fallback)
    if len(subject) > 72:
        counts = f"+{len(kinds['add'])} ~{len(kinds['change'])} -{len(kinds['remove'])}"
        subject = f"memoryd({device}): {counts} memories"
    lines = [subject, ""]
    for title, items in zip(("added", "changed", "removed"), kinds.values(), strict=True):
        lines += [f"{title}:", *(f"  {_shown(i)}" for i in items)] if items else []
    if compiled:
        lines.append("compiled: " + ", ".join(shown_name(i) for i in compiled))
    if batch.untrack:
        lines.append("untracked: " + ", ".join(batch.untrack))
    lines += ["", f"Memoryd-Device: {device}"]
    return "\n".join(lines) + "\n"


FEW_PATHS = 16  # paths refresh_user_index reads from the tree and refreshes by name
# git's preload starts threads that each match their share of every index entry against the
# pathspec, twice in an 'add --refresh' of a few paths: 3 of its 10 ms at 10k memories
NO_PRELOAD = config_env({"core.preloadIndex": "false"})


def refresh_user_index(repo: Repo, paths: list[str], rev: str = "HEAD") -> None:
    """Make the user's index agree with ``rev`` for ``paths`` (their other staged work stays).

    HEAD's entries go in by name (``update-index --index-info``), then git re-reads their
    stat data: of those paths alone when they are few (``add --refresh``; a whole-index
    ``update-index --refresh`` stat()ed all 100k files, a third of a one-edit cycle), else
    of the whole index (a path given is matched against every entry). ``git reset -q HEAD
    --pathspec-from-file`` matched every index entry against every path given, quadratic in
    a first commit's size (5k paths 0.24 s CPU, 40k 12 s, 100k ~75 s: past git's timeout,
    on every cycle).
    """
    inside = sorted({p for p in paths if not repo.prefix or p.startswith(repo.prefix + "/")})
    if not inside:
        return
    few = len(inside) <= FEW_PATHS
    tree = repo.git.ls_tree(rev, repo.prefix, inside if few else ())
    lines = []
    for path in inside:
        mode, sha = tree.get(path, ("0", ZERO))
        lines.append(f"{mode} {sha}\t{path}".encode("utf-8", "surrogateescape") + b"\0")
    repo.git.run("update-index", "-z", "--index-info", input=b"".join(lines))
    present = [p for p in inside if p in tree]
    if not few:
        repo.git.run("update-index", "-q", "--refresh", check=False)
    elif present:  # only these entries' stat data: a whole refresh stat()ed every file
        listing = b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in present)
        repo.git.run(
            "add", "--refresh", "--pathspec-from-file=-", "--pathspec-file-nul",
            input=listing, check=False, env={"GIT_LITERAL_PATHSPECS": "1", **NO_PRELOAD},
        )  # fmt: skip


def prune_exclude(repo: Repo) -> None:
    exclude.keep_out(repo.common_dir, repo.work_trees(), [])
    exclude.keep_private(repo.common_dir, repo.work_trees(), [])


def held_back(repo: Repo, batch: Batch, head: str | None) -> tuple[list[str], dict[str, bytes]]:
    """Root-relative files git sees that stay on this device (for the compiled files),
    and the committed text of those git tracks (what the other devices have)."""
    found = {q.path for q in batch.quarantined} | {item["path"] for item in batch.left_out}
    text = ""
    with contextlib.suppress(OSError, UnicodeDecodeError):
        text = exclude.exclude_file(repo.common_dir).read_text(encoding="utf-8")
    for path in exclude.split(text, exclude.PRIVATE_BEGIN)[1]:
        if not repo.prefix or path.startswith(repo.prefix + "/"):
            found.add(repo.root_path(path))
    # out of this work tree on purpose (sparse checkout): compiled as the others have them
    found |= {repo.root_path(p) for p in _skip_worktree(repo) if not (repo.top / p).exists()}
    tracked = repo.git.ls_tree(head, repo.prefix) if head and found else {}
    committed = {
        rel: repo.git.blob(tracked[repo.repo_path(rel)][1])
        for rel in found
        if repo.repo_path(rel) in tracked
    }
    return sorted(found), committed


def update_exclude(repo: Repo, batch: Batch) -> None:
    exclude.keep_out(
        repo.common_dir, repo.work_trees(), [repo.repo_path(r) for r in batch.local_only]
    )
