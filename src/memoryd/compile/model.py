"""What a root's compiled files are made of, kept between compiles: one edit costs its folder.

A full compile builds a :class:`RootModel` from the whole listing (no file is read for
it: the listing holds each memory's entry). The daemon's compile after a batch then
applies only the batch's files to it: the entries of their folders change, those
folders' index.md are rendered again from the entries each folder holds, and ROOT.md's
blocks are compiled again only when something they show changed (an id, a kind, a
rule's summary, a trigger, a supersede link, or a folder gaining or losing a memory).
Otherwise the blocks of the last compile are spliced into ROOT.md as it is on disk,
which costs the size of ROOT.md (bounded, see :mod:`memoryd.compile.blocks`), not the
number of memories. A folder's index.md is rendered again in full only when its order
or an id changed: an edit that keeps a memory's place (its summary, its kind) swaps its one
line in the bytes on disk, when those are the bytes this model last gave that folder (a
digest is kept for each folder, not the bytes: a 1,000-line index.md took 8 ms to render).

The result is the bytes a full compile writes (tests/test_compile_model.py holds the
two equal over random edit sequences). What the model cannot follow from a batch, it
does not guess: when the listing it was built from is not the cache's listing any
more, or the held-back files or the root's settings changed, it is built again.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from memoryd.compile.blocks import (
    Entry,
    entry_for,
    folder_of,
    index_line,
    index_order,
    live,
    render_lines,
    root_blocks,
    utf8,
)
from memoryd.compile.listing import Scanned
from memoryd.compile.packed import PACK_EVERY, Ids, Packed, entry_from, entry_record
from memoryd.conflicts import is_conflict_copy
from memoryd.held import Held
from memoryd.memory import BINARY, looks_binary, parse
from memoryd.roots import CONFLICTS_FILE, ROOT_FILE


@dataclass(frozen=True)
class Settings:
    """What, besides the files, the compiled bytes depend on."""

    commit: bool  # the root commits: sync: false memories stay out of the compiled files
    descriptions: tuple[tuple[str, str], ...]
    held: Held


@dataclass(frozen=True, slots=True)
class Part:
    """What one file contributes: an entry, an index.md of its folder, or an unreadable file."""

    entry: Entry | None = None
    listed: bool = False  # a file of the listing that is not generated
    generated: bool = False  # an index.md (ROOT.md and CONFLICTS.md contribute nothing)
    blocked: Scanned | None = None  # unreadable: its folder and ROOT.md are left alone


def shows(commit: bool, item: Scanned) -> bool:
    """Does a readable memory appear in the compiled files?

    In a root that commits, a ``sync: false`` memory stays on this device only, so the
    committed compiled files must not mention it: another device would see a line for
    a file it never gets, and the two would rewrite each other's bytes forever (the
    files sync holds back are left out the same way, see :mod:`memoryd.held`).
    A conflict copy is listed in CONFLICTS.md only, never routed to as a memory.
    """
    if item.memory is None or is_conflict_copy(item.rel):
        return False
    return item.memory.sync or not commit


def part_of(rel: str, item: Scanned | None, settings: Settings) -> Part | None:
    """What the file at ``rel`` (``item``; None: not in this work tree) contributes."""
    listed = item is not None and not item.generated
    committed = settings.held.committed
    if item is not None and item.generated:
        return Part(generated=True) if rel not in (ROOT_FILE, CONFLICTS_FILE) else None
    if item is None or rel in committed:  # held back here: show what the others have
        data = committed.get(rel)
        # a tracked conflict copy held back here is listed nowhere, as on the others
        if data is None or looks_binary(data) or is_conflict_copy(rel):
            return Part(listed=True) if listed else None
        return _entry_part(entry_for(rel, parse(data)), listed)
    if item.error == BINARY:  # not a memory (inspect reports it): its folder compiles as usual
        return Part(listed=True)
    if item.memory is None:
        return Part(listed=True, blocked=item)
    if shows(settings.commit, item) and rel not in settings.held.hidden:
        return _entry_part(item.entry, listed)
    return Part(listed=True)


def _entry_part(entry: Entry, listed: bool) -> Part | None:
    """A memory's part; a team proposal shows nowhere (:mod:`memoryd.team`): the compiled
    files are committed, and another device's index.md must not list what it may not see."""
    if entry.proposed:
        return Part(listed=True) if listed else None
    return Part(entry, listed)


def routed(part: Part | None) -> tuple[object, ...] | None:
    """What ROOT.md's blocks show of a part: its changes, and only those, recompile them."""
    e = None if part is None else part.entry
    if e is None:
        return None
    summary = e.summary if e.kind == "rule" else None
    return (e.id, e.kind, summary, e.load_when, e.superseded_by, e.folder)


class RootModel:
    """One root's parts, by path, with what a folder's index.md and ROOT.md need of them.

    Kept lean (the daemon keeps one per root, beside the listing): the entries packed by
    folder and their ids as hashes (:mod:`memoryd.compile.packed`: :meth:`pack` when a
    compile is done); the other parts are a path in a set (index.md files, unreadable
    and local files: few), and the few counts and links the blocks need."""

    def __init__(self, settings: Settings, version: int) -> None:
        self.settings = settings
        self.version = version  # the cache listing's version this model follows
        self.entries: Packed[Entry] = Packed(entry_record, entry_from)  # by path
        self.extras: set[str] = set()  # entries of held-back files not in this work tree
        self.ids = Ids()  # the entries' ids
        self._building: list[str] | None = None  # while built: the ids, counted at the end
        self.pointing: dict[str, set[str]] = defaultdict(set)  # superseded_by -> paths
        self.generated: set[str] = set()  # the index.md files of the listing
        self.indexed: Counter[str] = Counter()  # folders with an index.md in the listing
        self.blocked: dict[str, dict[str, Scanned]] = defaultdict(dict)
        self.others: set[str] = set()  # listed files that show nowhere (binary, local...)
        self.listed = 0  # listed files that are not generated
        self.blocks: dict[str, str] | None = None  # ROOT.md's blocks, None: to compile
        # the last ROOT.md spliced: (bytes read, blocks, bytes made, why it cannot be)
        self.spliced: tuple[bytes | None, dict[str, str], bytes | None, str | None] | None = None
        self.rendered: dict[str, bytes] = {}  # folder -> digest of the index.md last given
        self.current: set[str] = set()  # folders no change touched since they were rendered
        # folder -> the lines to swap in it since (old, new); None: to render in full
        self.swaps: dict[str, list[tuple[bytes, bytes]] | None] = {}

    @classmethod
    def build(cls, listing: Mapping[str, Scanned], settings: Settings, version: int) -> RootModel:
        model, ids = cls(settings, version), set[str]()
        model._building = []
        for n, (rel, item) in enumerate(listing.items(), 1):
            model._add(rel, part_of(rel, item, settings), ids)
            if not n % PACK_EVERY:  # never every entry at once (memoryd.compile.packed)
                model.pack()
        for rel in [rel for rel in settings.held.committed if rel not in listing]:
            model._add(rel, part_of(rel, None, settings), ids)
        model.ids, model._building = Ids(model._building), None
        return model

    def pack(self) -> None:
        """The compile is done: nothing reads the entries until the next one."""
        self.entries.pack()

    def apply(self, changes: Mapping[str, Scanned | None]) -> set[str]:
        """Bring the model in line with ``changes`` (path -> its item, None: gone); the
        folders whose index.md may now read differently."""
        folders: set[str] = set()
        ids: set[str] = set()  # ids that came or went
        swapped: list[tuple[str, Entry, Entry]] = []
        had = set[str]()  # the ids of the entries changed, before
        for rel, item in changes.items():
            old = self._stored(rel)
            new = part_of(rel, item, self.settings)
            if old is not None and old.entry is not None:
                had.add(old.entry.id)
            if old is not None:
                self._remove(rel, old, ids)
            if new is not None:
                self._add(rel, new, ids)
            folders.add(folder_of(rel))
            if old is not None and old.entry is not None and new is not None and new.entry:
                swapped.append((folder_of(rel), old.entry, new.entry))
            else:
                self.swaps[folder_of(rel)] = None
            if routed(old) != routed(new):
                self.blocks = None
        for target in ids & self.pointing.keys():  # a supersede link came alive or died
            self.blocks = None
            folders |= {folder_of(rel) for rel in self.pointing[target]}
        # an id that went and came back (an edit keeps its id) leaves every other line as it was
        came_or_went = ids - {i for i in had if i in self.ids}
        self._swap(swapped, came_or_went, folders)
        self.current -= folders
        return folders

    def _swap(
        self, swapped: list[tuple[str, Entry, Entry]], ids: set[str], folders: set[str]
    ) -> None:
        """Record the line each edited entry swaps in its folder's index.md; a folder where
        an id came or went (a line elsewhere may read differently) or an entry's place moved
        is rendered in full."""
        if ids:
            self.swaps.update(dict.fromkeys(folders))
            return
        for folder, old, new in swapped:
            was, now = live(old, self.ids), live(new, self.ids)
            lines = self.swaps.setdefault(folder, [])
            if lines is None or index_order(was) != index_order(now):
                self.swaps[folder] = None
            else:
                lines.append((utf8(index_line(was)), utf8(index_line(now))))

    def _stored(self, rel: str) -> Part | None:
        """The part the model holds for ``rel``."""
        folder = folder_of(rel)
        entry = self.entries.get(rel)
        if entry is not None:
            return Part(entry, listed=rel not in self.extras)
        if rel in self.generated:
            return Part(generated=True)
        item = self.blocked[folder].get(rel) if folder in self.blocked else None
        if item is not None:
            return Part(listed=True, blocked=item)
        return Part(listed=True) if rel in self.others else None

    def _add(self, rel: str, part: Part | None, ids: set[str]) -> None:
        if part is None:
            return
        self.listed += part.listed
        folder = folder_of(rel)
        if part.generated:
            self.generated.add(rel)
            self.indexed[folder] += 1
        elif part.blocked is not None:
            self.blocked[folder][rel] = part.blocked
        elif part.entry is not None:
            e = part.entry
            self.entries[rel] = e
            if not part.listed:
                self.extras.add(rel)
            if self._building is not None:
                self._building.append(e.id)
            elif self.ids.add(e.id):
                ids.add(e.id)
            if e.superseded_by is not None:
                self.pointing[e.superseded_by].add(rel)
        else:
            self.others.add(rel)

    def _remove(self, rel: str, part: Part, ids: set[str]) -> None:
        self.listed -= part.listed
        folder = folder_of(rel)
        if part.generated:
            self.generated.discard(rel)
            self.indexed[folder] -= 1
            if not self.indexed[folder]:
                del self.indexed[folder]
        elif part.blocked is not None:
            del self.blocked[folder][rel]
            if not self.blocked[folder]:
                del self.blocked[folder]
        elif part.entry is not None:
            e = part.entry
            del self.entries[rel]
            self.extras.discard(rel)
            if self.ids.remove(e.id):
                ids.add(e.id)
            if e.superseded_by is not None:
                self.pointing[e.superseded_by].discard(rel)
                if not self.pointing[e.superseded_by]:
                    del self.pointing[e.superseded_by]
        else:
            self.others.discard(rel)

    # -- what the compiled files read ---------------------------------------------------

    def known_folders(self) -> set[str]:
        """Folders with a memory, an index.md or an unreadable file."""
        return set(self.entries.folders()) | set(self.indexed) | set(self.blocked)

    def unreadable(self) -> list[Scanned]:
        """The files that cannot be read, by path."""
        found = [item for items in self.blocked.values() for item in items.values()]
        return sorted(found, key=lambda item: item.rel)

    @property
    def empty(self) -> bool:
        """The root holds no memory file at all (generated files aside)."""
        return not self.entries and not self.listed

    def index(self, folder: str, on_disk: bytes | None = None) -> bytes | None:
        """The bytes of ``folder``'s index.md (None: the folder holds no memory), from
        ``on_disk`` (its bytes now) with the edited lines swapped when those are the bytes
        this model last gave it, else rendered in full. A folder no change touched since
        (a whole-root compile settles every folder) keeps those bytes as they are."""
        swaps = self.swaps.pop(folder, None)
        if folder not in self.entries.folders():
            self.rendered.pop(folder, None)
            self.current.discard(folder)
            return None
        data = None
        last = self.rendered.get(folder)
        if on_disk is not None and last == _digest(on_disk):
            if swaps is None and folder in self.current:
                return on_disk
            if swaps is not None:
                data = _swapped(on_disk, swaps)
        if data is None:
            entries = self.entries.in_folder(folder)  # only now: a folder's every entry
            ordered = sorted((live(e, self.ids) for e in entries), key=index_order)
            data = render_lines(folder, [index_line(e) for e in ordered])
        self.rendered[folder] = _digest(data)
        self.current.add(folder)
        return data

    def root(self) -> dict[str, str]:
        """ROOT.md's blocks, compiled again only when something they show changed."""
        if self.blocks is None:  # a folder's entries at a time, never every one at once
            by_folder = (
                (folder, [live(e, self.ids) for e in self.entries.in_folder(folder)])
                for folder in list(self.entries.folders())
            )
            descriptions = dict(self.settings.descriptions)
            self.blocks = root_blocks(by_folder, descriptions, self.ids.alone)
        return self.blocks


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def _swapped(data: bytes, swaps: list[tuple[bytes, bytes]]) -> bytes | None:
    """``data`` with each old line replaced by its new one, in order; None when a line is
    not there exactly once (then the folder is rendered in full)."""
    for old, new in swaps:
        was = b"\n" + old + b"\n"
        if data.count(was) != 1:
            return None
        data = data.replace(was, b"\n" + new + b"\n")
    return data
