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
import threading
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from weakref import WeakKeyDictionary

from memoryd import fingerprint as fp
from memoryd.compile import markers
from memoryd.compile.blocks import folder_of, index_path, is_ours, utf8
from memoryd.compile.listing import ScanCache, Scanned, relist, rescan
from memoryd.compile.model import RootModel, Settings
from memoryd.config.sections import Config, RootConfig
from memoryd.findings import Finding
from memoryd.fsutil import fsync_dir, write_if_changed
from memoryd.held import Held, held
from memoryd.roots import ROOT_FILE, ROOT_TEMPLATE

log = logging.getLogger(__name__)

COMPILED_LAYOUTS = ("plugin",)  # the other layouts keep their own index files
# one per process: the daemon re-parses only changed files, and keeps no object per file
_CACHE = ScanCache(slim=True, packed=True)
Expect = Callable[[Path, bytes | None], None]  # (path, the bytes it will hold; None: deleted)
_KEPT: dict[tuple[Path, bool], ScanCache] = {}
LISTINGS = "listings"  # in memoryd's cache folder


def kept_cache(cache_dir: Path, packed: bool = False) -> ScanCache:
    """A compile cache whose listings are also kept in ``cache_dir`` between processes.

    For commands, which start with no listing: compiling a root then re-parses only
    the files that changed since the last command (see memoryd.compile.listing).
    ``packed``: its listings packed by folder (a whole-root pass over a large root, as
    ``memoryd reindex --full``, holds no object per memory: memoryd.compile.packed).
    """
    folder = cache_dir / LISTINGS
    return _KEPT.setdefault((folder, packed), ScanCache(slim=True, folder=folder, packed=packed))


Seed = Callable[[RootConfig, str, fp.Fingerprint | None, dict[Any, Any]], None]


def seeder(cache: ScanCache) -> Seed:
    """Where a reconcile tells of each file it parsed (memoryd.index.reconcile's
    ``parsed``): kept in ``cache`` for the next compile of that root, which then reads
    again only what changed since (``memoryd reindex``: one pass over the files)."""

    def parsed(
        root: RootConfig, path: str, fingerprint: fp.Fingerprint | None, meta: dict[Any, Any]
    ) -> None:
        if root.layout in COMPILED_LAYOUTS:
            cache.seed(root.path, path, fingerprint, meta)

    return parsed


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
    model: RootModel
    root_md: bytes | None  # ROOT.md's new bytes (None: left alone, see problem)
    problem: str | None
    targets: list[str]  # folders whose index.md to settle


_MODELS: WeakKeyDictionary[ScanCache, dict[Path, RootModel]] = WeakKeyDictionary()
_LOCKS: WeakKeyDictionary[ScanCache, threading.Lock] = WeakKeyDictionary()
_GUARD = threading.Lock()


def compile_root(
    root: RootConfig,
    config: Config,
    changed: Collection[Path] | None = None,
    *,
    check: bool = False,
    cache: ScanCache | None = None,
    expect: Expect | None = None,
) -> CompileReport:
    """Compile one root. ``changed``: the paths of a batch (only the folders they change
    are rendered again, and ROOT.md's blocks only when what they show changed, see
    :mod:`memoryd.compile.model`). ``expect``: told of each file before it is written or
    deleted (see the module docstring).

    A missing ROOT.md stays missing in a root that holds no memory (``memoryd init``
    writes a new root's): after 'git switch' to a branch without the project's memory,
    the daemon wrote an untracked ROOT.md into what git left of ``.memory/``, and git
    refused to switch back ('untracked working tree files would be overwritten')."""
    report = CompileReport(root.path)
    if root.layout not in COMPILED_LAYOUTS or not root.path.is_dir():
        return report
    cache = _CACHE if cache is None else cache
    with _GUARD:
        lock = _LOCKS.setdefault(cache, threading.Lock())
    with lock:  # one compile of a cache's roots at a time: each follows its listing
        plan = _plan(root, config, cache, changed)
    report.problems += [_unreadable(item) for item in plan.model.unreadable()]
    blocked = set(plan.model.blocked)
    for folder in plan.targets:
        if folder not in blocked:
            path = root.path / index_path(folder)
            old = _read(path)
            data = plan.model.index(folder, old)
            _settle_index(path, old, data, check, report, expect=expect)
    if not blocked and (not plan.model.empty or (root.path / ROOT_FILE).exists()):
        _settle_root_md(root.path, plan, check, report, expect=expect)
    with lock:  # nothing reads the entries until the next compile (memoryd.compile.packed)
        plan.model.pack()
        cache.pack(root.path)
    return report


def _plan(
    root_config: RootConfig, config: Config, cache: ScanCache, changed: Collection[Path] | None
) -> _Plan:
    root = root_config.path
    settings = Settings(
        root_config.sync.commit,
        tuple(sorted(config.compile.folder_descriptions.items())),
        held(root) if root_config.sync.commit else Held(),
    )
    models = _MODELS.setdefault(cache, {})
    model = models.get(root)
    rescanned = None
    if model is not None and model.settings == settings and model.version == cache.version(root):
        rescanned = rescan(root, cache, changed)  # changed None: a walk, the changes applied
    if rescanned is not None and model is not None:
        changes, model.version = rescanned
        folders = model.apply(changes)
        if changed is None:  # every folder settled, as a whole compile does
            targets = folders | model.known_folders()
        else:
            targets = folders | affected(root, changed, model.known_folders())
    else:
        listing = relist(root, cache, changed)
        stale = model is not None
        model = models[root] = RootModel.build(listing, settings, cache.version(root))
        folders = model.known_folders()
        # a kept model that no longer applies (held-back files or settings changed, another
        # scan moved the listing) may have left any folder behind: all are settled
        targets = folders if changed is None or stale else affected(root, changed, folders)
    return _Plan(model, *_spliced(model, _read(root / ROOT_FILE)), sorted(targets))


def _spliced(model: RootModel, old: bytes | None) -> tuple[bytes | None, str | None]:
    """ROOT.md's bytes with the model's blocks in them, or None and why it must be left
    alone. Splicing the same blocks into the bytes of the last compile again (a rules
    block of 20k iron rules is 20k lines to look through) gives the same bytes."""
    blocks = model.root()
    last = model.spliced
    if last is not None and last[1] is blocks and old in (last[0], last[2]):
        return last[2], last[3]
    new, problem = _splice(old, blocks)
    model.spliced = (old, blocks, new, problem)  # the next compile reads ``old`` or ``new``
    return new, problem


def _splice(old: bytes | None, blocks: dict[str, str]) -> tuple[bytes | None, str | None]:
    try:
        text = ROOT_TEMPLATE if old is None else old.decode("utf-8")
        return utf8(markers.splice(text, blocks)), None
    except UnicodeDecodeError:
        return None, "not valid UTF-8, so its blocks cannot be compiled"
    except markers.DamagedMarkers as exc:
        return None, f"damaged markers, {exc}"


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
    path: Path,
    old: bytes | None,
    data: bytes | None,
    check: bool,
    r: CompileReport,
    *,
    expect: Expect | None,
) -> None:
    """Write (or delete) the index.md at ``path``, which holds ``old`` now, to ``data``."""
    if data is not None:
        if old is not None and not is_ours(old):  # a person's own index.md: never replaced
            r.problems.append(_own_index(path))
            return
        if check:
            if old != data:
                r.stale.append(path)
        elif _write(path, data, expect):
            r.written.append(path)
        return
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
    root: Path, plan: _Plan, check: bool, r: CompileReport, *, expect: Expect | None
) -> None:
    path = root / ROOT_FILE
    if plan.root_md is None:
        r.problems.append(
            Finding(
                path,
                plan.problem or "cannot be compiled",
                "repair the memoryd marker comments by hand (every begin needs its end, each "
                "block once) or delete them all to get fresh blocks, then run 'memoryd compile'",
            )
        )
    elif check:
        if _read(path) != plan.root_md:
            r.stale.append(path)
    elif _write(path, plan.root_md, expect):
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
