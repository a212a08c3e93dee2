"""Compiling a root on disk: read its files, write ROOT.md and index.md when bytes change.

``compile_root`` is what the CLI, the daemon, sync and the agent tools call. It writes
with ``write_if_changed`` (atomic, and nothing at all when the bytes are equal, so a
watcher sees no event and git no change), deletes the index.md of a folder that lost its
last memory, and reports the paths it wrote. ``expect`` hears of every write and deletion
just before it happens: the daemon must know its own writes before its watcher can report
them, which is at the rename, long before a compile of several files returns.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memoryd.compile.blocks import (
    Compiled,
    Entry,
    compile_entries,
    entry_for,
    folder_of,
    index_path,
    is_ours,
)
from memoryd.compile.listing import ScanCache, Scanned, scan_root
from memoryd.config.sections import Config, RootConfig
from memoryd.conflicts import is_conflict_copy
from memoryd.findings import Finding
from memoryd.fsutil import fsync_dir, write_if_changed
from memoryd.held import Held, held
from memoryd.memory import BINARY, looks_binary, parse
from memoryd.roots import ROOT_FILE

log = logging.getLogger(__name__)

COMPILED_LAYOUTS = ("plugin",)  # the other layouts keep their own index files
_CACHE = ScanCache(slim=True)  # one per process: the daemon re-parses only changed files
Expect = Callable[[Path, bytes | None], None]  # (path, the bytes it will hold; None: deleted)
_KEPT: dict[Path, ScanCache] = {}
LISTINGS = "listings"  # in memoryd's cache folder


def kept_cache(cache_dir: Path) -> ScanCache:
    """A compile cache whose listings are also kept in ``cache_dir`` between processes.

    For commands, which start with no listing: compiling a root then re-parses only
    the files that changed since the last command (see memoryd.compile.listing).
    """
    folder = cache_dir / LISTINGS
    return _KEPT.setdefault(folder, ScanCache(slim=True, folder=folder))


@dataclass
class CompileReport:
    root: Path
    written: list[Path] = field(default_factory=list)  # files actually written
    removed: list[Path] = field(default_factory=list)  # index.md files deleted
    stale: list[Path] = field(default_factory=list)  # with check=True: files a compile would change
    problems: list[Finding] = field(default_factory=list)

    @property
    def touched(self) -> list[Path]:
        """Every file this compile wrote or deleted: what the index must look at again."""
        return [*self.written, *self.removed]

    def as_dict(self) -> dict[str, Any]:
        return {
            "root": str(self.root),
            "written": [str(p) for p in self.written],
            "removed": [str(p) for p in self.removed],
            "stale": [str(p) for p in self.stale],
            "problems": [p.as_dict() for p in self.problems],
        }


@dataclass(frozen=True)
class _Plan:
    compiled: Compiled
    targets: list[str]  # folders whose index.md to settle
    blocked: set[str]  # folders holding an unreadable memory: their index.md is left alone
    empty: bool  # the root holds no memory file at all


def compile_root(
    root: RootConfig,
    config: Config,
    changed: Collection[Path] | None = None,
    *,
    check: bool = False,
    cache: ScanCache | None = None,
    expect: Expect | None = None,
) -> CompileReport:
    """Compile one root. ``changed``: the paths of a batch (only their folders' index.md).
    ``expect``: told of each file before it is written or deleted (see the module docstring).

    A missing ROOT.md stays missing in a root that holds no memory (``memoryd init``
    writes a new root's): after 'git switch' to a branch without the project's memory,
    the daemon wrote an untracked ROOT.md into what git left of ``.memory/``, and git
    refused to switch back ('untracked working tree files would be overwritten')."""
    report = CompileReport(root.path)
    if root.layout not in COMPILED_LAYOUTS or not root.path.is_dir():
        return report
    files = scan_root(root.path, _CACHE if cache is None else cache, changed)
    plan = _plan(root, files, config, changed, report)
    for folder in plan.targets:
        if folder not in plan.blocked:
            _settle_index(root.path, folder, plan.compiled, check, report, expect=expect)
    if not plan.blocked and (not plan.empty or (root.path / ROOT_FILE).exists()):
        _settle_root_md(root.path, plan.compiled, check, report, expect=expect)
    return report


def _plan(
    root_config: RootConfig,
    files: list[Scanned],
    config: Config,
    changed: Collection[Path] | None,
    report: CompileReport,
) -> _Plan:
    root = root_config.path
    entries: list[Entry] = []
    blocked: set[str] = set()
    indexed: set[str] = set()
    kept = held(root) if root_config.sync.commit else Held()
    for item in files:
        if item.rel == ROOT_FILE:
            continue
        if item.generated:
            indexed.add(folder_of(item.rel))
        elif item.rel in kept.committed:  # held back here: show what the others have
            # (a tracked conflict copy held back here is listed nowhere, as on the others)
            if not looks_binary(kept.committed[item.rel]) and not is_conflict_copy(item.rel):
                entries.append(entry_for(item.rel, parse(kept.committed[item.rel])))
        elif item.error == BINARY:
            continue  # not a memory (inspect reports it): its folder compiles as usual
        elif item.memory is None:
            blocked.add(folder_of(item.rel))
            report.problems.append(_unreadable(item))
        elif shown(root_config, item) and item.rel not in kept.hidden:
            entries.append(item.entry)
    on_disk = {item.rel for item in files}
    for rel, data in sorted(kept.committed.items()):  # not in this work tree (sparse checkout)
        if rel not in on_disk and not looks_binary(data) and not is_conflict_copy(rel):
            entries.append(entry_for(rel, parse(data)))
    folders = {e.folder for e in entries} | indexed | blocked
    targets = folders if changed is None else affected(root, changed, folders)
    compiled = compile_entries(
        entries, _read(root / ROOT_FILE), config.compile.folder_descriptions, targets
    )
    empty = not entries and all(item.generated for item in files)
    return _Plan(compiled, sorted(targets), blocked, empty)


def shown(root: RootConfig, item: Scanned) -> bool:
    """Does a readable memory appear in the compiled files?

    In a root that commits, a ``sync: false`` memory stays on this device only, so the
    committed compiled files must not mention it: another device would see a line for
    a file it never gets, and the two would rewrite each other's bytes forever (the
    files sync holds back are left out the same way, see :mod:`memoryd.held`).
    A conflict copy is listed in CONFLICTS.md only, never routed to as a memory.
    """
    if item.memory is None or is_conflict_copy(item.rel):
        return False
    return item.memory.sync or not root.sync.commit


def affected(root: Path, changed: Collection[Path], folders: set[str]) -> set[str]:
    """The folders whose index.md a batch of changed paths can change."""
    result: set[str] = set()
    for path in changed:
        full = path if path.is_absolute() else root / path
        try:
            rel = full.relative_to(root).as_posix()
        except ValueError:
            continue
        if rel == ".":
            return set(folders)
        result.add(folder_of(rel))
        result |= {f for f in folders if f == rel or f.startswith(rel + "/")}
    return result


def _settle_index(
    root: Path,
    folder: str,
    compiled: Compiled,
    check: bool,
    r: CompileReport,
    *,
    expect: Expect | None,
) -> None:
    path = root / index_path(folder)
    data = compiled.indexes.get(folder)
    if data is not None:
        old = _read(path)
        if old is not None and not is_ours(old):  # a person's own index.md: never replaced
            r.problems.append(_own_index(path))
            return
        if check:
            if _read(path) != data:
                r.stale.append(path)
        elif _write(path, data, expect):
            r.written.append(path)
        return
    old = _read(path)
    if old is None:
        return
    if not is_ours(old):
        r.problems.append(_foreign_index(path))
    elif check:
        r.stale.append(path)
    else:
        if expect is not None:
            expect(path, None)
        _remove(path)
        r.removed.append(path)


def _write(path: Path, data: bytes, expect: Expect | None) -> bool:
    """``write_if_changed``, with ``expect`` told first."""
    if expect is not None:
        expect(path, data)
    return write_if_changed(path, data)


def _settle_root_md(
    root: Path, compiled: Compiled, check: bool, r: CompileReport, *, expect: Expect | None
) -> None:
    path = root / ROOT_FILE
    if compiled.root_md is None:
        r.problems.append(
            Finding(
                path,
                compiled.problem or "cannot be compiled",
                "repair the memoryd marker comments by hand (every begin needs its end, each "
                "block once) or delete them all to get fresh blocks, then run 'memoryd compile'",
            )
        )
    elif check:
        if _read(path) != compiled.root_md:
            r.stale.append(path)
    elif _write(path, compiled.root_md, expect):
        r.written.append(path)


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None


def _remove(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        return
    fsync_dir(path.parent)
    log.info("removed %s: its folder holds no memory any more", path)


def _unreadable(item: Scanned) -> Finding:
    return Finding(
        item.path,
        f"cannot be read ({item.error}); its folder's index.md and ROOT.md are left as they are",
        f"make it readable (chmod u+r {item.path}) or move it out of the root",
    )


def _own_index(path: Path) -> Finding:
    return Finding(
        path,
        "index.md was not written by memoryd, so it is left as it is and this folder's "
        "memories get no compiled index",
        f"rename it to keep its text (memoryd compiles index.md in every folder that holds "
        f"memories), or delete {path}",
    )


def _foreign_index(path: Path) -> Finding:
    return Finding(
        path,
        "this folder holds no memory and its index.md was not written by memoryd",
        f"move its text into a memory, then delete {path}",
    )
