"""Moving the work tree between commits, around what is the user's own.

Moving is git's own two-tree ``read-tree -m -u`` (what a fast-forward does):
it refuses, changing nothing, when a file it would replace was edited since,
and it keeps the user's staged work on paths the move does not touch. The
branch moves (compare-and-swap) only after the files did, so a kill between
the two leaves files that read as local changes equal to the remote: the next
cycle commits them and the replay sees both sides agree. Nothing here talks to
the remote (:mod:`memoryd.sync.remote` does).
"""

from __future__ import annotations

import os
import posixpath
import tempfile
from collections.abc import Callable
from pathlib import Path

from memoryd.fsutil import atomic_write
from memoryd.rootfs import STATE_FILE
from memoryd.sync import casefold, exclude
from memoryd.sync.git import EMPTY_TREE, ZERO
from memoryd.sync.repo import Repo, device_of

Aside = Callable[[str], str]  # root-relative path -> where to move a local file out of the way
Beside = Callable[[str, bytes, str], str]  # (path, incoming bytes, device) -> the copy written


def move(
    repo: Repo, old: str | None, new: str, reason: str, *, aside: Aside, beside: Beside
) -> list[str]:
    """Move work tree, index and branch from ``old`` to ``new`` (GitError: nothing moved).

    git overwrites ignored files without asking, so any untracked file under the
    root that an incoming file would replace is first renamed aside (``aside``
    names the new place); ``.state.json`` files keep this device's bytes.

    A file under the root whose local text memoryd did not commit (quarantined,
    conflict markers, over the size cap) and that the move changes keeps its
    local bytes: the work tree moves around it (git would refuse the whole move,
    on every cycle), the index and branch take ``new``, and ``beside`` saves the
    incoming version next to it.
    """
    notices, kept = _clear_the_way(repo, old, new, aside)
    repo.git.run("update-index", "-q", "--refresh", check=False)
    restat(repo)
    held = _held_back(repo, old, new)
    files = new
    if held and old is not None:
        notices += _save_beside(repo, new, held, beside)
        files = _tree_keeping(repo, new, old, held)
    try:
        repo.git.run("read-tree", "-m", "-u", old or EMPTY_TREE, files)
    finally:
        for path, data in kept.items():
            if not path.is_file() or path.read_bytes() != data:
                atomic_write(path, data)  # the local counters stay local
    repo.git.update_ref("HEAD", new, old, reason)
    if held:  # the index follows the branch; the work tree keeps the local bytes
        listing = b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in held)
        repo.git.run(
            "reset", "-q", new, "--pathspec-from-file=-", "--pathspec-file-nul",
            input=listing, env={"GIT_LITERAL_PATHSPECS": "1"},
        )  # fmt: skip
    return notices


def edited_outside(repo: Repo, old: str, new: str) -> list[str]:
    """Files outside the root that moving from ``old`` to ``new`` changes and that hold the
    user's own work: edited or staged and not committed, or untracked where a file arrives.

    A project root's branch carries the project's code: ``read-tree -m -u`` refuses to
    replace such a file (rightly), and the cycle failed on every try with git's "Entry
    'src/a.py' not uptodate. Cannot merge." An ignored file is git's to replace, as a pull
    would.
    """
    if not repo.prefix:
        return []
    inside = repo.prefix + "/"
    moving = {p for p in repo.git.changed_paths(old, new, "") if not p.startswith(inside)}
    if not moving:
        return []
    edited = set(_names(repo, "diff", "--name-only", "-z", "--no-renames", old, everywhere=True))
    edited |= set(
        _names(repo, "diff", "--cached", "--name-only", "-z", "--no-renames", old, everywhere=True)
    )
    before = repo.git.ls_tree(old, "")
    for path in moving - edited - set(before):
        if os.path.lexists(repo.top / path) and not _ignored(repo, path):
            edited.add(path)
    return sorted(moving & edited)


def restat(repo: Repo) -> None:
    """Record again the files under the root that git calls changed though their text is not.

    git takes a file whose size differs from the one its index recorded as changed without
    reading it. With ``core.autocrlf=true`` (or ``eol=crlf``) git checks a compiled file out
    with CRLF, and the recompile writes the same text with LF: ``git status`` showed it
    modified and ``read-tree -m -u`` refused every later move ("Entry 'facts/index.md' not
    uptodate. Cannot merge."). Staged again, such a file is the same blob with its stat
    data. An unmerged path is the user's and is never touched (``git diff`` lists it).
    """
    by_stat = set(_names(repo, "diff-files", "--name-only", "-z"))
    if not by_stat:
        return
    by_text = set(_names(repo, "diff", "--name-only", "-z"))
    same = sorted(by_stat - by_text)
    if same:
        listing = b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in same)
        repo.git.run("update-index", "-q", "-z", "--stdin", input=listing)


def _held_back(repo: Repo, old: str | None, new: str) -> list[str]:
    """Paths under the root the move changes whose work-tree text differs from ``old``."""
    if old is None:
        return []
    moving = set(_names(repo, "diff", "--name-only", "-z", "--no-renames", old, new))
    dirty = _names(repo, "diff", "--name-only", "-z", "--no-renames", old)
    return sorted(p for p in dirty if p in moving and (repo.top / p).is_file())


def _names(repo: Repo, *args: str, everywhere: bool = False) -> list[str]:
    raw = repo.git.run(*args, "--", "." if everywhere else repo.pathspec, readonly=True).out
    return [p.decode("utf-8", "surrogateescape") for p in raw.split(b"\0") if p]


def _save_beside(repo: Repo, new: str, held: list[str], beside: Beside) -> list[str]:
    notices = []
    incoming = repo.git.ls_tree(new, repo.prefix)
    for path in held:
        rel = repo.root_path(path)
        entry = incoming.get(path)
        if entry is None:
            notices.append(
                f"{rel} was deleted on another device; your local text stays (memoryd does "
                "not commit it as it is, see the quarantined and left-out files)"
            )
            continue
        data = repo.git.blob(entry[1])
        if (repo.top / path).read_bytes() == data:
            continue
        copy = beside(rel, data, device_of(repo, new, path))
        notices.append(
            f"{rel} holds local text memoryd does not commit, and another device changed it: "
            f"your text stays at {rel}, theirs is saved as {copy}; fix {rel} if it is held "
            "back (see the quarantined and left-out files), merge the two, delete the copy"
        )
    return notices


def _tree_keeping(repo: Repo, new: str, old: str, held: list[str]) -> str:
    """``new``'s tree with the ``held`` paths as they are in ``old`` (for the work tree)."""
    before = repo.git.ls_tree(old, repo.prefix)
    fd, name = tempfile.mkstemp(prefix="memoryd-move-", dir=repo.git_dir)
    os.close(fd)
    index = Path(name)
    index.unlink()
    try:
        repo.git.run("read-tree", new, index=index)
        lines = []
        for path in held:
            mode, sha = before.get(path, ("0", ZERO))
            lines.append(f"{mode} {sha}\t{path}".encode("utf-8", "surrogateescape") + b"\0")
        repo.git.run("update-index", "-z", "--index-info", input=b"".join(lines), index=index)
        return repo.git.run("write-tree", index=index).text.strip()
    finally:
        index.unlink(missing_ok=True)


def _clear_the_way(
    repo: Repo, old: str | None, new: str, aside: Aside
) -> tuple[list[str], dict[Path, bytes]]:
    raw = repo.git.run(
        "diff", "--name-only", "-z", "--no-renames", "--diff-filter=A", old or EMPTY_TREE, new,
        "--", repo.pathspec, readonly=True,
    ).out  # fmt: skip
    notices: list[str] = []
    kept: dict[Path, bytes] = {}
    for item in raw.split(b"\0"):
        path = item.decode("utf-8", "surrogateescape")
        full = repo.top / path
        if not path or not full.is_file() or full.is_symlink():
            continue
        twin = _case_twin(full)
        if twin is not None and old is not None:
            twin = posixpath.join(posixpath.dirname(path), twin)
            if repo.git.ls_tree(old, repo.prefix, [twin]):
                continue  # a tracked file in another case: the move replaces it, as git does
        if full.name == STATE_FILE:
            kept[full] = full.read_bytes()
            continue
        rel = repo.root_path(path)
        target = aside(rel)
        if _ignored(repo, path):  # moved aside, it keeps the privacy of where it was
            exclude.keep_private(repo.common_dir, repo.work_trees(), [repo.repo_path(target)])
        os.replace(full, repo.root / target)
        notices.append(f"{rel} arrived from another device; your local file was moved to {target}")
    return notices, kept


def _case_twin(full: Path) -> str | None:
    """The name under which a case-insensitive disk holds ``full`` when it is not ``full``'s
    own (``note.md`` found for ``Note.md``), else None."""
    names = os.listdir(full.parent)
    if full.name in names:
        return None
    key = casefold.fold(full.name)
    return next((n for n in sorted(names) if casefold.fold(n) == key), None)


def _ignored(repo: Repo, path: str) -> bool:
    done = repo.git.run("check-ignore", "-q", "--no-index", "--", path, check=False, readonly=True)
    return done.code == 0
