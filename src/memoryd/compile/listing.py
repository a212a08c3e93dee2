"""Reading a root's files for compile and inspect, re-reading only what changed.

``scan_root`` lists a root like ``roots.walk_root``, stats every file and parses the
ones whose fingerprint (size, mtime, ctime, inode) is new. With ``changed`` (the paths
of a batch) and an earlier listing of the root in the cache, it touches only those
paths: the daemon's compile after one edit costs a few syscalls, not a walk. Parsed
results are kept without their body, so a cache for 100k memories stays small. A file
whose mtime is within a couple of seconds of now is never trusted from the cache (the
racy-mtime rule of :mod:`memoryd.fingerprint`).

The daemon's compile cache is *slim*: it keeps of each memory only what the compiled
files show (its :class:`Entry`) and its sync flag, not the whole frontmatter. At 10k
memories that is about half the memory of a full listing.

A slim listing can also be kept on disk (``ScanCache(folder=...)``), so a short-lived
command need not re-parse a root: ``memoryd remember`` or a recall that saw a hand edit
starts with no listing, and compiling a root of 10k memories from nothing parses every
file (about a second). One :mod:`memoryd.cachefile` per root holds, for each readable
memory, its path, fingerprint, sync flag and compiled entry. A kept listing is never
trusted as it is: ``scan_root`` still walks the root and stats every file, and reuses an
entry only when the fingerprint is the same, so changes made by anyone since are read
again. A file of another format, memoryd, Python or root is a miss.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import posixpath
import stat
import sys
import threading
import time
import zlib
from collections import ChainMap, Counter
from collections.abc import Callable, Collection, Iterator, Mapping, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memoryd import __version__, cachefile
from memoryd import fingerprint as fp
from memoryd.compile.blocks import Entry, entry_for, is_generated
from memoryd.compile.packed import PACK_EVERY, Packed, entry_fields, entry_from, entry_record
from memoryd.memory import BINARY, NOT_REGULAR, Memory, looks_binary, parse
from memoryd.roots import listed, walk_files, walk_root, walks_into


@dataclass(frozen=True, slots=True)
class Scanned:
    """One file of a root. ``memory`` has its frontmatter and problems, not its body."""

    top: str  # the root's path, one str shared by its files (a str each cost 100 B a file)
    rel: str  # root-relative POSIX path
    size: int
    memory: Memory | None  # None when the file could not be read, or is generated
    error: str | None = None
    fingerprint: int | None = None  # fingerprint.packed; None: not to be trusted next time
    shows: Entry | None = None  # the entry, computed when the file was read

    @property
    def where(self) -> str:
        """The file's path."""
        return os.path.join(self.top, self.rel) if self.rel else self.top

    @property
    def path(self) -> Path:
        return Path(self.where)

    @property
    def generated(self) -> bool:
        return is_generated(self.rel)

    @property
    def entry(self) -> Entry:
        """What the compiled files show of it."""
        if self.shows is not None:
            return self.shows
        return entry_for(self.rel, self.memory or Memory())


Listing = dict[str, Scanned]
# A slim cache's memories: nothing but the sync flag (see Memory.sync).
SLIM_SYNCED, SLIM_LOCAL = Memory(), Memory({"sync": False})


class ScanCache:
    """The last listing of each root, with parsed frontmatter; shared between threads.

    ``slim``: keep only what compile reads of each memory (its entry and sync flag).
    ``folder`` (slim caches): also keep each root's listing there for the next process
    (see the module docstring); a listing from there is trusted file by file only.
    ``packed`` (slim caches: the daemon's): each listing packed by folder between
    compiles (:mod:`memoryd.compile.packed`, :meth:`pack`), no object per file kept.
    """

    def __init__(
        self, slim: bool = False, folder: Path | None = None, packed: bool = False
    ) -> None:
        self._lock = threading.Lock()
        self._listings: dict[Path, MutableMapping[str, Scanned]] = {}
        self._folders: dict[Path, Counter[str]] = {}  # each listing's folders: files in each
        self._versions: dict[Path, int] = {}  # bumped on every change of a root's listing
        self._seeds: dict[Path, Packed[Scanned]] = {}  # files read by someone else: see seed
        self.slim = slim
        self.folder = folder if slim else None
        self.packed = packed and slim
        self.parsed = 0  # how many files were read and parsed (for tests and benchmarks)

    def listing_view(self, root: Path) -> Mapping[str, Scanned] | None:
        """``root``'s listing itself, not a copy: read it only on the thread that compiles
        (the one that changes it)."""
        with self._lock:
            return self._listings.get(root)

    def listing(self, root: Path) -> Listing | None:
        with self._lock:
            found = self._listings.get(root)
            return None if found is None else dict(found.items())

    def kept(self, root: Path) -> MutableMapping[str, Scanned] | None:
        """The listing an earlier process kept in ``folder``, if any."""
        if self.folder is None:
            return None
        items = cachefile.read_list(listing_file(self.folder, root), (*KEPT_KEY, str(root)))
        found = self.fresh(root)
        try:
            top = top_of(root)
            for n, item in enumerate(items or (), 1):
                found[item[0]] = _unkept(top, item)
                if not n % PACK_EVERY and isinstance(found, Packed):
                    found.pack()
        except (ValueError, TypeError):  # another shape under the same key: a miss
            return None
        return found or None

    def seed(
        self, root: Path, path: str, fingerprint: fp.Fingerprint | None, meta: dict[Any, Any]
    ) -> None:
        """Take the frontmatter a reindex just parsed (a file of ``root`` with this
        ``fingerprint``) for the next :func:`scan_root` of ``root``, which then reads only
        the files whose fingerprint is not that one any more: one pass over the files, not
        two. An untrusted fingerprint (None) is no use to it and dropped, and so is every
        seed of a full cache: it keeps each memory's problems, which a seed does not hold.
        The seeds are packed as they come (:mod:`memoryd.compile.packed`): a reindex of 300k
        held 195 MB of them while its index pass was still writing."""
        rel = _rel(root, path)
        if not self.slim or fingerprint is None or rel in (None, ".", "") or is_generated(rel):
            return
        packed, memory = fp.pack(fingerprint), Memory(meta)
        item = _item(top_of(root), rel, fingerprint[0], packed, memory, self.slim)
        with self._lock:
            seeds = self._seeds.get(root)
            if seeds is None:
                seeds = self._seeds[root] = _packed(root)
            seeds[rel] = item
            if not len(seeds) % PACK_EVERY:
                seeds.pack()

    def _take_seeds(self, root: Path) -> Packed[Scanned] | None:
        with self._lock:
            return self._seeds.pop(root, None)

    def version(self, root: Path) -> int:
        """The version of ``root``'s listing: another one, another listing."""
        with self._lock:
            return self._versions.get(root, 0)

    def store(self, root: Path, listing: MutableMapping[str, Scanned], keep: bool = True) -> None:
        """Remember ``listing``; with ``keep`` (it changed), also in ``folder``."""
        if isinstance(listing, Packed):
            folders = Counter(listing.counts())
        else:
            folders = Counter(posixpath.dirname(rel) for rel in listing)
        kept = listing
        if self.packed:  # packed at once: the model is built from it a bucket at a time
            if not isinstance(kept, Packed):
                kept = self.fresh(root)
                kept.update(listing)
            assert isinstance(kept, Packed)
            kept.pack()
        with self._lock:
            self._listings[root] = kept
            self._folders[root] = folders
            self._versions[root] = self._versions.get(root, 0) + 1
        self._keep(root, listing, keep)

    def _keep(self, root: Path, listing: Mapping[str, Scanned], keep: bool) -> None:
        if self.folder is not None and keep:
            key = (*KEPT_KEY, str(root))
            cachefile.write_list(listing_file(self.folder, root), key, _kept_items(listing))

    def fresh(self, root: Path) -> MutableMapping[str, Scanned]:
        """An empty listing for ``root``, packed in a packed cache."""
        return _packed(root) if self.packed else {}

    def pack(self, root: Path) -> None:
        """A compile of ``root`` is done: its listing packed again (``packed`` caches)."""
        with self._lock:
            found = self._listings.get(root)
        if isinstance(found, Packed):
            found.pack()

    def _update(
        self, root: Path, changes: Mapping[str, Scanned | None]
    ) -> tuple[MutableMapping[str, Scanned], int]:
        """Apply ``changes`` (path -> its item, None: gone) to ``root``'s listing in place."""
        with self._lock:
            listing, folders = self._listings[root], self._folders[root]
            for rel, item in changes.items():
                folder = posixpath.dirname(rel)
                if listing.pop(rel, None) is not None:
                    folders[folder] -= 1
                    if not folders[folder]:
                        del folders[folder]
                if item is not None:
                    listing[rel] = item
                    folders[folder] += 1
            self._versions[root] += 1
            return listing, self._versions[root]

    def _holds_under(self, root: Path, rel: str) -> bool:
        """Does ``root``'s listing hold a file in the folder ``rel`` or below it?"""
        with self._lock:
            folders = self._folders.get(root, ())
            return any(f == rel or f.startswith(rel + "/") for f in folders) or rel == ""


KEPT_FORMAT = 4  # 3: the fingerprint packed in one int; 4: written a part at a time
_ENTRY_FIELDS = tuple(f.name for f in dataclasses.fields(Entry))
KEPT_KEY = (KEPT_FORMAT, __version__, sys.hexversion, _ENTRY_FIELDS)


def listing_file(folder: Path, root: Path) -> Path:
    """The file in ``folder`` that keeps ``root``'s slim listing."""
    return folder / f"{zlib.crc32(os.fsencode(root)):08x}.listing"


def _kept_items(listing: Mapping[str, Scanned]) -> Iterator[tuple[Any, ...]]:
    """The trusted, readable memories of ``listing``, as marshal can keep them (a packed
    listing's from its records, no item made: a reindex of 300k writes them all)."""
    if isinstance(listing, Packed):
        for rel, (size, sync, _error, fingerprint, entry) in listing.records():
            if sync is not None and fingerprint is not None and entry is not None:
                yield (rel, size, fingerprint, sync, entry_fields(rel, entry))
        return
    for s in listing.values():
        if s.memory is not None and _keepable(s):
            entry = tuple(getattr(s.shows, name) for name in _ENTRY_FIELDS)
            yield (s.rel, s.size, s.fingerprint, s.memory.sync, entry)


def _record(rel: str, s: Scanned) -> tuple[Any, ...]:
    """What a packed listing keeps of ``s`` (a slim cache's: its memory is its sync flag)."""
    sync = None if s.memory is None else s.memory.sync
    entry = None if s.shows is None else entry_record(rel, s.shows)
    return (s.size, sync, s.error, s.fingerprint, entry)


def _packed(root: Path) -> Packed[Scanned]:
    """An empty listing of ``root``, packed by folder."""
    return Packed(_record, lambda rel, record: _unpacked(top_of(root), rel, record))


def _unpacked(top: str, rel: str, record: tuple[Any, ...]) -> Scanned:
    size, sync, error, fingerprint, entry = record
    memory = None if sync is None else SLIM_SYNCED if sync else SLIM_LOCAL
    shows = None if entry is None else entry_from(rel, entry)
    return Scanned(top, rel, size, memory, error, fingerprint, shows)


def _unkept(top: str, item: tuple[Any, ...]) -> Scanned:
    rel, size, fingerprint, sync, entry = item
    memory = SLIM_SYNCED if sync else SLIM_LOCAL
    return Scanned(top, rel, size, memory, None, fingerprint, Entry(*entry))


_TOPS: dict[Path, str] = {}


def top_of(root: Path) -> str:
    """``str(root)``, the same object each time: every Scanned of a root shares it."""
    found = _TOPS.get(root)
    if found is None:
        found = _TOPS[root] = str(root)
    return found


def scan_root(
    root: Path, cache: ScanCache | None = None, changed: Collection[Path] | None = None
) -> list[Scanned]:
    """Every memory-named file of ``root``, sorted by path; generated ones are not parsed."""
    cache = cache if cache is not None else ScanCache()
    new = relist(root, cache, changed)
    return [new[rel] for rel in sorted(new)]


def relist(
    root: Path, cache: ScanCache, changed: Collection[Path] | None = None
) -> Mapping[str, Scanned]:
    """:func:`scan_root`'s listing, stored in ``cache``. A packed cache's is packed as it
    is made (:data:`memoryd.compile.packed.PACK_EVERY`), never held whole: the daemon's
    first compile held 100k items at once, and the few objects kept among them pinned
    Python's arenas, freed but never given back."""
    old: Mapping[str, Scanned] | None = cache.listing(root)
    walk = old is None or changed is None
    if old is None:  # a kept listing spares parsing unchanged files, never the walk
        old = cache.kept(root) or {}
    seeds = cache._take_seeds(root)  # files read just now: a walk checks each, a batch not
    parsed = cache.parsed
    new: MutableMapping[str, Scanned]
    if walk:
        if seeds:  # each seed a file read anew: the listing is kept again
            old, parsed = ChainMap(seeds, old), parsed - len(seeds)  # type: ignore[arg-type]
        new = _walk(root, cache, old, seeds)
    else:
        new, changes = dict(old.items()), dict[str, Scanned | None]()
        for path in changed or ():
            _changes(root, path, old, cache, changes)
        for rel, item in changes.items():
            if item is None:
                new.pop(rel, None)
            else:
                new[rel] = item
    cache.store(root, new, keep=cache.parsed != parsed or _kept_keys(new) != _kept_keys(old))
    return new


def _walk(
    root: Path, cache: ScanCache, old: Mapping[str, Scanned], seeds: Packed[Scanned] | None
) -> MutableMapping[str, Scanned]:
    """``root``'s listing from a walk, each file looked up in ``old`` first. In a packed
    cache the ``seeds`` become the listing: a seed the walk finds as it is stays packed as
    it is (a reindex of 300k packed every item again)."""
    new = seeds if seeds and cache.packed else cache.fresh(root)
    sown, met = len(seeds or ()), 0
    same = None if new is not seeds else functools.partial(_same_record, new)
    for n, found in enumerate(walk_files(root), 1):
        scanned = _scan(root, found, old, cache, same)
        if scanned is SAME:  # a seed as it is: left packed
            met += 1
        else:
            was = new.get(scanned.rel) if new is seeds else None
            met += was is not None
            if was is not scanned:
                new[scanned.rel] = scanned
        if not n % PACK_EVERY:  # what the walk opened, closed again
            _pack(new, seeds, old)
    if new is seeds and met != sown:  # a seed's file gone since: out of the listing
        walked = {_rel(root, found) or os.path.basename(found) for found in walk_files(root)}
        for rel in [rel for rel in new if rel not in walked]:
            del new[rel]
    return new


def _same_record(listing: Packed[Scanned], rel: str, fingerprint: int) -> bool:
    """Does ``listing`` hold the readable memory at ``rel`` with this ``fingerprint``, as
    :func:`_scan` would take it (:func:`_record`: its sync flag and fingerprint)?"""
    record = listing.record(rel)
    return record is not None and record[1] is not None and record[3] == fingerprint


def _pack(*listings: object) -> None:
    """Every packed listing of ``listings`` (or of a ChainMap of them) packed again."""
    for listing in listings:
        if isinstance(listing, ChainMap):
            _pack(*listing.maps)
        elif isinstance(listing, Packed):
            listing.pack()


def rescan(
    root: Path, cache: ScanCache, changed: Collection[Path] | None
) -> tuple[dict[str, Scanned | None], int] | None:
    """Bring the cache's listing of ``root`` in line with ``changed`` without a walk (None:
    with a walk of the whole root, each file stat'ed and only new fingerprints parsed):
    each path that changed, with its new item (None: gone), and the listing's new version.
    None when the cache holds no listing of ``root`` yet (:func:`scan_root` walks)."""
    old = cache.listing_view(root)
    if old is None:
        return None
    cache._take_seeds(root)  # a whole listing's worth, for scan_root: not for a batch
    parsed = cache.parsed
    changes: dict[str, Scanned | None] = {}
    if changed is None:
        found = {item.rel: item for item in (_scan(root, p, old, cache) for p in walk_files(root))}
        changes = {rel: None for rel in old if rel not in found}
        changes.update(found)
    for path in changed or ():
        _changes(root, path, old, cache, changes)
    changes = {rel: item for rel, item in changes.items() if not _same(old.get(rel), item)}
    listing, version = cache._update(root, changes)
    if changes:
        cache._keep(
            root,
            listing,
            cache.parsed != parsed
            or any(
                _keepable(item) if item is not None else rel in old for rel, item in changes.items()
            ),
        )
    return changes, version


def _same(old: Scanned | None, new: Scanned | None) -> bool:
    """Is ``new`` what the listing holds already? An index.md is a new item at each look,
    and a whole-root pass found every folder changed (each rendered again: 1 s at 100k)."""
    return old is new or (old is not None and new is not None and old == new)


def _changes(
    root: Path,
    path: Path,
    old: Mapping[str, Scanned],
    cache: ScanCache,
    changes: dict[str, Scanned | None],
) -> None:
    """What one changed path (a file or a folder, or gone) changes in the listing."""
    full = path if path.is_absolute() else root / path
    rel = _rel(root, full)
    if rel is None or rel.startswith("../"):
        return
    if rel == ".":
        rel, full = "", root
    if rel in old:
        changes[rel] = None
    elif cache._holds_under(root, rel):  # a folder (or one that was): what it held is gone
        prefix = rel + "/" if rel else ""
        changes.update((key, None) for key in old if key.startswith(prefix))
    if full.is_dir() and not full.is_symlink():
        if walks_into(root, full):
            for found in walk_root(full):
                item = _scan(root, found, old, cache)
                changes[item.rel] = item
    elif rel and listed(root, full):
        changes[rel] = _scan(root, full, old, cache)


def _kept_keys(listing: Mapping[str, Scanned]) -> set[str]:
    """The files of ``listing`` that a kept listing holds (:func:`_kept_items`): comparing
    every key wrote the kept listing again after every scan of a root with an index.md,
    which a kept listing never holds (20% of compiling 10k unchanged memories)."""
    return {rel for rel, s in listing.items() if _keepable(s)}


def _keepable(s: Scanned) -> bool:
    return s.memory is not None and s.fingerprint is not None and s.shows is not None


def _rel(root: Path, path: Path | str) -> str | None:
    text, base = str(path), str(root)
    if text == base:
        return "."
    if not text.startswith(base.rstrip(os.sep) + os.sep):
        return None
    rel = text[len(base.rstrip(os.sep)) + 1 :]
    return rel.replace(os.sep, "/") if os.sep != "/" else rel


# what _scan gives for a file ``same`` says the listing holds as it is
SAME = Scanned("", "", 0, None, "the listing's own")


def _scan(
    root: Path,
    path: Path | str,
    old: Mapping[str, Scanned],
    cache: ScanCache,
    same: Callable[[str, int], bool] | None = None,
) -> Scanned:
    """``path``'s item: ``old``'s when its fingerprint is the file's, else read anew;
    :data:`SAME` when ``same`` says the listing holds it as it is (nothing made)."""
    rel = _rel(root, path) or os.path.basename(path)
    where, top = str(path), top_of(root)
    if is_generated(rel):
        return Scanned(top, rel, 0, None)
    try:
        st = os.stat(where)
    except OSError as exc:
        return Scanned(top, rel, 0, None, _reason(exc))
    if not stat.S_ISREG(st.st_mode):  # a FIFO or device named like a memory: never open it
        return Scanned(top, rel, 0, None, NOT_REGULAR)
    fingerprint = fp.packed(st)
    if same is not None and same(rel, fingerprint):
        return SAME
    known = old.get(rel)
    if known is not None and known.fingerprint == fingerprint and known.memory is not None:
        return known
    try:
        with open(where, "rb") as handle:
            raw = handle.read()
    except OSError as exc:
        return Scanned(top, rel, st.st_size, None, _reason(exc))
    if looks_binary(raw):  # not a memory: never listed or counted, inspect reports it
        return Scanned(top, rel, st.st_size, None, BINARY)
    parsed = parse(raw)
    cache.parsed += 1
    trusted = fingerprint if fp.settled(st.st_mtime_ns, time.time_ns()) else None
    memory = Memory(parsed.meta, problems=parsed.problems)
    return _item(top, rel, st.st_size, trusted, memory, cache.slim)


def _item(  # noqa: PLR0917 - a Scanned's parts
    top: str, rel: str, size: int, fingerprint: int | None, memory: Memory, slim: bool
) -> Scanned:
    """The listing's item of a memory of ``size`` bytes parsed from a file with
    ``fingerprint`` (None: not to be trusted next time)."""
    entry = entry_for(rel, memory)
    if slim:
        memory = SLIM_SYNCED if memory.sync else SLIM_LOCAL
    return Scanned(top, rel, size, memory, None, fingerprint, entry)


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__
