"""Replay local changes on top of the remote, in memory, so that both sides survive.

This is the rebase of the sync cycle, done without ever putting the work tree
into a rebase: the result tree is built in a private index from the remote's
tree plus the local side's changes, resolved file by file:

- changed on one side only: that side's state;
- compiled files (index.md, CONFLICTS.md): the remote's (the root is recompiled
  afterwards); ROOT.md: its human text merged, its blocks the remote's;
- changed on both sides: a line merge (``git merge-file``); when the same lines
  changed, the remote text stays at the path and the local text is saved next
  to it as a conflict copy;
- edit against delete: the edit survives, and a notice says the delete lost;
- rename against edit: the edit lands at the new path when git sees the rename,
  else both paths stay (and a notice names the duplicate);
- a path one side deleted or renamed away after the base and then made again
  holds another file: the other side's edit follows the rename (or, with none,
  the two are kept as two files), never line-merged against a base it does not
  share.

Whatever order the paths are reached in, a last pass checks that every side's
version of every path it touched is in the result (at a path, inside a merge,
or in a conflict copy) and saves any that is not as a conflict copy: a rename
onto a path the other device also wrote cannot make a version vanish.

The caller commits the tree on top of the remote and moves the work tree to it.
"""

from __future__ import annotations

import tempfile
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from memoryd.compile import markers
from memoryd.conflicts import copy_path
from memoryd.roots import ROOT_FILE
from memoryd.sync.casefold import fold
from memoryd.sync.derived import is_fully_generated
from memoryd.sync.git import Git
from memoryd.sync.repo import Repo, device_of

Entry = tuple[str, str]  # (mode, blob sha)


@dataclass
class Replay:
    """What the replay decided; ``index`` holds the result tree."""

    index: Path
    copies: list[tuple[str, str]] = field(default_factory=list)  # (root-relative path, copy)
    notices: list[str] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)  # root-relative, line-merged cleanly


@dataclass(frozen=True)
class Sides:
    base: dict[str, Entry]
    local: dict[str, Entry]
    remote: dict[str, Entry]
    revs: tuple[str, str, str]  # the base, local and remote commits


class OutsideRoot(Exception):
    """Local commits change files outside the root: not memoryd's to rebase."""


def replay(repo: Repo, base: str, local: str, remote: str, *, index: Path, device: str) -> Replay:
    git = repo.git
    outside = [p for p in git.changed_paths(base, local, "") if not _inside(repo, p)]
    if outside:
        raise OutsideRoot(outside[0])
    revs = (base, local, remote)
    trees = [git.ls_tree(rev, repo.prefix) for rev in revs]
    sides = Sides(trees[0], trees[1], trees[2], revs)
    ours = set(git.changed_paths(base, local, repo.prefix))
    theirs = set(git.changed_paths(base, remote, repo.prefix))
    moved_here = git.renames(base, local, repo.prefix)
    moved_there = git.renames(base, remote, repo.prefix)
    git.run("read-tree", remote, index=index)
    result = Replay(index)
    writer = _Writer(repo, index=index, device=device, result=result, remote=sides.remote)
    for path in sorted(ours):
        if path not in theirs:
            writer.set(path, sides.local.get(path))
        elif sides.local.get(path) != sides.remote.get(path):
            _both(writer, path, sides, moved_here, moved_there)
    writer.part_case(sides, ours)
    writer.keep_every_version(sides, ours | theirs, remote)
    writer.flush()
    return result


def _inside(repo: Repo, path: str) -> bool:
    return not repo.prefix or path.startswith(repo.prefix + "/")


def _both(
    w: _Writer, path: str, s: Sides, moved_here: dict[str, str], moved_there: dict[str, str]
) -> None:
    rel = w.repo.root_path(path)
    mine, theirs, base = s.local.get(path), s.remote.get(path), s.base.get(path)
    if is_fully_generated(rel):
        return  # the remote's stays; the recompile after the move rewrites it
    if mine is None and path in moved_here and theirs is not None:
        new = moved_here[path]  # renamed here, edited there: the edit goes to the new path
        if w.merge_into(new, base, s.local.get(new), theirs, rel=rel, keep_both=path):
            w.set(path, None, final=True)
        else:
            w.notices.append(f"{rel} was renamed here and edited on another device: both kept")
        return
    if mine is None:
        w.notices.append(
            f"your delete of {rel} lost to an edit on another device: the edit is kept"
        )
        return
    if theirs is None and path in moved_there:
        new = moved_there[path]  # edited here, renamed there
        if w.merge_into(new, base, mine, s.remote.get(new), rel=rel, keep_both=path):
            return
        w.set(path, mine, final=True)
        w.notices.append(f"{rel} was edited here and renamed on another device: both kept")
        return
    if theirs is None:
        w.set(path, mine, final=True)
        w.notices.append(f"the delete of {rel} on another device lost to your edit: it is kept")
        return
    if base is not None and _made_again(w, path, s):
        return
    w.merge_into(path, base, mine, theirs, rel=rel, keep_both=None)


def _made_again(w: _Writer, path: str, s: Sides) -> bool:
    """Whether one side deleted (or renamed away) ``path`` after the base and then made it
    again; if so the other side's change is placed here. A line merge against the base
    would take the new file's differences from it (an older copy's lines) as edits, and
    the other side's version would be in no file: the change follows the rename instead,
    or, with no rename, the two are kept as two files (a conflict copy)."""
    git, rel = w.repo.git, w.repo.root_path(path)
    base, mine, theirs = s.base.get(path), s.local[path], s.remote[path]
    for there, tree, rev in ((True, s.remote, s.revs[2]), (False, s.local, s.revs[1])):
        gone = git.deleted_in(s.revs[0], rev, path)
        if gone is None:
            continue
        new = git.renames(gone + "^", gone, w.repo.prefix).get(path)
        if new is not None and new in tree:
            if there and w.merge_into(new, base, mine, tree[new], rel=rel, keep_both=path):
                return True  # the file made again stays at the path
            if not there and w.merge_into(new, base, tree[new], theirs, rel=rel, keep_both=path):
                w.set(path, mine, final=True)
                return True
        w.merge_into(path, None, mine, theirs, rel=rel, keep_both=None)
        return True
    return False


class _Writer:
    """Collects index updates and does the three-way merges."""

    def __init__(
        self, repo: Repo, *, index: Path, device: str, result: Replay,
        remote: dict[str, Entry],
    ) -> None:  # fmt: skip
        self.repo, self.index, self.device = repo, index, device
        self.result, self.remote = result, remote
        self.taken: dict[str, str] = {path: entry[1] for path, entry in remote.items()}
        self.notices = result.notices
        self.entries: dict[str, Entry | None] = {}
        self.final: set[str] = set()
        self.holds: dict[str, set[str]] = {}  # merged blob -> the blobs whose text it holds

    def set(self, path: str, entry: Entry | None, final: bool = False) -> None:
        """Put ``entry`` at ``path`` (None removes it); a merge result is never overridden."""
        if path in self.final:
            return
        self.entries[path] = entry
        self.taken[path] = entry[1] if entry is not None else ""
        if final:
            self.final.add(path)

    def merge_into(
        self, path: str, base: Entry | None, mine: Entry | None, theirs: Entry | None, *,
        rel: str, keep_both: str | None,
    ) -> bool:  # fmt: skip
        """Merge ``mine`` into ``theirs`` at ``path``; a conflict copy (or False) on clashes.

        A path another rename already settled is not merged into again: False with
        ``keep_both`` (the caller keeps both paths), else the last pass keeps whatever
        version is then in no file.
        """
        if path in self.final:
            return keep_both is None
        if mine is None or theirs is None or mine == theirs:
            self.set(path, mine or theirs, final=True)
            return True
        texts = [self.repo.git.blob(e[1]) if e else b"" for e in (base, mine, theirs)]
        merged = _merge_text(self.repo.git, texts, generated=rel == ROOT_FILE)
        if merged is not None:
            sha = self.repo.git.hash_blob(merged)
            self.holds[sha] = {sha, mine[1], theirs[1]}
            self.set(path, (theirs[0], sha), final=True)
            self.result.merged.append(self.repo.root_path(path))
            return True
        if keep_both is not None:
            return False
        self.set(path, theirs, final=True)
        self._copy(path, texts[1], mine[0])
        return True

    def _copy(self, path: str, data: bytes, mode: str, device: str | None = None) -> str:
        """Save ``data`` (exact bytes) as a conflict copy of ``path``; the copy's path."""
        copy = copy_path(path, device or self.device, data, self.taken)
        rel, rel_copy = self.repo.root_path(path), self.repo.root_path(copy)
        self.set(copy, (mode, self.repo.git.hash_blob(data)), final=True)
        self.result.copies.append((rel, rel_copy))
        return rel_copy

    def part_case(self, s: Sides, ours: Collection[str]) -> None:
        """A path added here whose name case-folds onto one the remote has (another device
        added ``Note.md`` as this one added ``note.md``): saved as a conflict copy of that
        path, never pushed beside it (one file on a Mac's disk: see memoryd.sync.casefold)."""
        result = {p for p, e in {**self.remote, **self.entries}.items() if e is not None}
        theirs = {fold(p): p for p in sorted(self.remote) if p in result}
        for path in sorted(ours):
            mine = self.entries.get(path)
            twin = theirs.get(fold(path))
            if mine is None or twin is None or twin == path or path in s.base:
                continue
            self.entries[path] = None  # not final: a merge never wrote it
            copy = self._copy(twin, self.repo.git.blob(mine[1]), mine[0])
            self.notices.append(
                f"{self.repo.root_path(path)} differs only in case from "
                f"{self.repo.root_path(twin)}, which another device added: a Mac's or Windows' "
                f"disk cannot hold both, so it was saved as {copy}; merge the two"
            )

    def keep_every_version(self, s: Sides, paths: Collection[str], remote: str) -> None:
        """Save as a conflict copy each side's version of ``paths`` that is in no file."""
        result = {**self.remote, **self.entries}
        present: set[str] = set()
        for entry in result.values():
            if entry is not None:
                present |= self.holds.get(entry[1], {entry[1]})
        for path in sorted(paths):
            rel = self.repo.root_path(path)
            if is_fully_generated(rel):
                continue
            for side, tree in (("local", s.local), ("remote", s.remote)):
                entry = tree.get(path)
                if entry is None or entry == s.base.get(path) or entry[1] in present:
                    continue
                device = self.device if side == "local" else device_of(self.repo, remote, path)
                copy = self._copy(path, self.repo.git.blob(entry[1]), entry[0], device)
                present.add(entry[1])
                self.notices.append(
                    f"{rel}: {device}'s version could not stay at its path (a rename met "
                    f"another change there): saved as {copy}"
                )

    def flush(self) -> None:
        lines = []
        for path, entry in sorted(self.entries.items()):
            mode, sha = entry if entry is not None else ("0", "0" * 40)
            lines.append(f"{mode} {sha}\t{path}".encode("utf-8", "surrogateescape") + b"\0")
        if lines:
            self.repo.git.run(
                "update-index", "-z", "--index-info", input=b"".join(lines), index=self.index
            )


def _merge_text(git: Git, texts: list[bytes], *, generated: bool) -> bytes | None:
    """A clean line merge, or None when the same lines changed (or the files are binary)."""
    base, mine, theirs = texts
    blocks: dict[str, str] = {}
    if generated:
        stripped = [markers.strip(t.decode("utf-8", "replace")) for t in (base, mine, theirs)]
        base, mine, theirs = (t[0].encode("utf-8") for t in stripped)
        blocks = stripped[2][1]
    with tempfile.TemporaryDirectory(prefix="memoryd-merge-") as folder:
        files = []
        for name, data in (("mine", mine), ("base", base), ("theirs", theirs)):
            file = Path(folder) / name
            file.write_bytes(data)
            files.append(str(file))
        done = git.run(
            "merge-file", "-p", "-L", "local", "-L", "base", "-L", "remote", *files, check=False
        )
    if done.code != 0:
        return None
    if generated:
        return markers.fill(done.text, blocks).encode("utf-8")
    return done.out
