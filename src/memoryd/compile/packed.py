"""Per-file data kept packed between compiles: the daemon holds no Python object per memory.

The daemon keeps, for each root, the compile listing (a fingerprint and an entry per file)
and the compile model (the entries by folder), so that one edit costs its folder. As
objects that was about 1 KB a memory, 92 MB at 100k memories, for data that nothing
reads between two compiles. :class:`Packed` is a mapping of root-relative paths that
keeps each folder's items in buckets of about :data:`BUCKET` items, each one zlib'd
marshal blob while no compile reads it. A read opens the one bucket its path falls in (a
dict of the items, as before); :meth:`Packed.pack`, when the compile is done, closes the
open ones again. So an edit decodes and encodes a few dozen items, whatever the size of
its folder or root, and a whole-root pass decodes each bucket once, without keeping it.

:class:`Ids` counts the entries' ids the same way: a sorted array of their hashes, 8
bytes an id, not a str and a dict slot (13 MB at 100k).
"""

from __future__ import annotations

import bisect
import marshal
import posixpath
import sys
import zlib
from array import array
from collections.abc import (
    Callable,
    ItemsView,
    Iterable,
    Iterator,
    KeysView,
    MutableMapping,
    ValuesView,
)
from dataclasses import dataclass, field
from typing import Any, TypeVar

from memoryd.compile.blocks import Entry

V = TypeVar("V")
BUCKET = 16  # items a bucket holds on average; a folder's buckets double past twice that
LEVEL = 1  # zlib's fastest: a bucket is a few KB, packed again after every edit in it
# A whole root read into a Packed is packed every so many items: 100k items held at once
# (the daemon's first compile) left the few objects kept among them pinning 75 of Python's
# 1 MB arenas, freed but never given back (133 MB settled at 100k, 70 of them in arenas
# 8% used). A listing is read by folder, so a bucket is packed about once.
PACK_EVERY = 2048

Bucket = dict[str, Any]


@dataclass
class _Folder:
    buckets: list[bytes | Bucket] = field(default_factory=lambda: [b""])
    count: int = 0
    opened: bool = False  # a bucket is open (a dict), to pack when the compile is done
    clean: dict[int, bytes] = field(default_factory=dict)  # open, unchanged: their blobs


class Packed(MutableMapping[str, V]):
    """Path -> item, packed by folder (see the module docstring). ``encode`` turns an item
    into what marshal keeps (its path aside), ``decode`` takes the path and that back."""

    def __init__(
        self,
        encode: Callable[[str, V], Any],
        decode: Callable[[str, Any], V],
        items: Iterable[tuple[str, V]] = (),
    ) -> None:
        self._encode, self._decode = encode, decode
        self._folders: dict[str, _Folder] = {}
        self._len = 0
        self._records: dict[bytes, dict[str, Any]] = {}  # packed buckets' records, by blob
        for rel, item in items:
            self[rel] = item

    # -- the mapping
    def __getitem__(self, rel: str) -> V:
        bucket = self._bucket(rel)
        if bucket is None:
            raise KeyError(rel)
        item: V = bucket[rel]
        return item

    def __contains__(self, rel: object) -> bool:
        if not isinstance(rel, str):
            return False
        bucket = self._bucket(rel)
        return bucket is not None and rel in bucket

    def __setitem__(self, rel: str, item: V) -> None:
        name = folder_of(rel)
        folder = self._folders.get(name)
        if folder is None:
            folder = self._folders[name] = _Folder()
        bucket = self._open(folder, rel, change=True)
        if rel not in bucket:
            folder.count += 1
            self._len += 1
        bucket[rel] = item
        if folder.count > 2 * BUCKET * len(folder.buckets):
            self._grow(folder)

    def __delitem__(self, rel: str) -> None:
        name = folder_of(rel)
        folder = self._folders.get(name)
        bucket = None if folder is None else self._open(folder, rel)
        if folder is None or bucket is None or rel not in bucket:
            raise KeyError(rel)
        self._open(folder, rel, change=True)
        del bucket[rel]
        folder.count -= 1
        self._len -= 1
        if not folder.count:
            del self._folders[name]

    def __iter__(self) -> Iterator[str]:
        """The paths, no item decoded (a packed bucket's records are read, not kept)."""
        for rel, _record in self.records():
            yield rel

    def __len__(self) -> int:
        return self._len

    def items(self) -> ItemsView[str, V]:
        """Every item, each bucket read once and left as it was (a whole-root pass)."""
        return _Items(self)

    def values(self) -> ValuesView[V]:
        """Every item, each bucket read once and left as it was (as :meth:`items`)."""
        return _Values(self)

    def pairs(self) -> Iterator[tuple[str, V]]:
        for folder in list(self._folders.values()):
            for bucket in list(folder.buckets):
                yield from list(self._read(bucket).items())

    def records(self) -> Iterator[tuple[str, Any]]:
        """Every path with what ``encode`` makes of its item (a packed bucket's records as
        they are kept: no item made of them, as a whole-root pass that copies them out)."""
        for folder in list(self._folders.values()):
            for bucket in list(folder.buckets):
                if isinstance(bucket, bytes):
                    yield from marshal.loads(zlib.decompress(bucket)) if bucket else ()
                else:
                    yield from [(rel, self._encode(rel, item)) for rel, item in bucket.items()]

    def record(self, rel: str) -> Any:
        """What ``encode`` made of the item at ``rel`` (None: no such item), without
        making the item of it: a whole-root pass that only compares (memoryd.compile.listing)
        decodes no item it leaves as it is. The records of a packed bucket read so are
        kept until :meth:`pack`."""
        folder = self._folders.get(folder_of(rel))
        if folder is None:
            return None
        bucket = folder.buckets[hash(rel) & (len(folder.buckets) - 1)]
        if isinstance(bucket, dict):
            item = bucket.get(rel)
            return None if item is None else self._encode(rel, item)
        records = self._records.get(bucket)
        if records is None:
            records = self._records[bucket] = dict(
                marshal.loads(zlib.decompress(bucket)) if bucket else ()
            )
        return records.get(rel)

    # -- by folder
    def folders(self) -> KeysView[str]:
        """The folders holding an item."""
        return self._folders.keys()

    def counts(self) -> dict[str, int]:
        """How many items each folder holds."""
        return {name: folder.count for name, folder in self._folders.items()}

    def in_folder(self, name: str) -> list[V]:
        """The items of the folder ``name`` (decoded, not kept open)."""
        folder = self._folders.get(name)
        if folder is None:
            return []
        return [item for bucket in folder.buckets for item in self._read(bucket).values()]

    def pack(self) -> None:
        """Close every open bucket: the compile that read them is done."""
        self._records.clear()
        for folder in self._folders.values():
            if folder.opened:
                clean = folder.clean
                folder.buckets = [
                    clean.get(i) or self._dump(b) for i, b in enumerate(folder.buckets)
                ]
                folder.opened = False
                clean.clear()

    # -- buckets
    def _bucket(self, rel: str) -> Bucket | None:
        folder = self._folders.get(folder_of(rel))
        return None if folder is None else self._open(folder, rel)

    def _open(self, folder: _Folder, rel: str, change: bool = False) -> Bucket:
        """The bucket of ``rel``, open; ``change``: it is about to change (packed anew)."""
        at = hash(rel) & (len(folder.buckets) - 1)
        bucket = folder.buckets[at]
        if isinstance(bucket, bytes):
            folder.buckets[at], folder.opened = self._load(bucket), True
            if bucket and not change:  # read only, so far: its blob is still good
                folder.clean[at] = bucket
            bucket = folder.buckets[at]
            assert isinstance(bucket, dict)
        elif change:
            folder.clean.pop(at, None)
        return bucket

    def _read(self, bucket: bytes | Bucket) -> Bucket:
        return self._load(bucket) if isinstance(bucket, bytes) else bucket

    def _load(self, blob: bytes) -> Bucket:
        if not blob:
            return {}
        records = marshal.loads(zlib.decompress(blob))
        return {rel: self._decode(rel, record) for rel, record in records}

    def _dump(self, bucket: bytes | Bucket) -> bytes:
        if isinstance(bucket, bytes):
            return bucket
        if not bucket:
            return b""
        records = tuple((rel, self._encode(rel, item)) for rel, item in bucket.items())
        return zlib.compress(marshal.dumps(records), LEVEL)

    def _grow(self, folder: _Folder) -> None:
        """Twice as many buckets for a folder that outgrew its own (all left open)."""
        items = [kv for bucket in folder.buckets for kv in self._read(bucket).items()]
        buckets: list[bytes | Bucket] = [{} for _ in range(2 * len(folder.buckets))]
        for rel, item in items:
            bucket = buckets[hash(rel) & (len(buckets) - 1)]
            assert isinstance(bucket, dict)
            bucket[rel] = item
        folder.buckets, folder.opened = buckets, True
        folder.clean.clear()


class _Items(ItemsView[str, V]):
    def __init__(self, packed: Packed[V]) -> None:
        super().__init__(packed)
        self._packed = packed

    def __iter__(self) -> Iterator[tuple[str, V]]:
        return self._packed.pairs()


class _Values(ValuesView[V]):
    def __init__(self, packed: Packed[V]) -> None:
        super().__init__(packed)
        self._packed = packed

    def __iter__(self) -> Iterator[V]:
        return (item for _rel, item in self._packed.pairs())


class Ids:
    """How many entries hold each id, as a sorted array of the ids' hashes (see the module
    docstring). Two ids of one hash would count as one: a chance of 1 in 10^9 at 100k ids
    (64-bit hashes), and then an index.md line's supersede link would follow the other."""

    def __init__(self, ids: Iterable[str] = ()) -> None:
        self._hashes = array("q", sorted(hash(i) for i in ids))

    def add(self, id_: str) -> bool:
        """One more entry holds ``id_``; True if it is the first."""
        h = hash(id_)
        at = bisect.bisect_left(self._hashes, h)
        first = at == len(self._hashes) or self._hashes[at] != h
        self._hashes.insert(at, h)
        return first

    def remove(self, id_: str) -> bool:
        """One entry less holds ``id_``; True if it was the last."""
        h = hash(id_)
        at = bisect.bisect_left(self._hashes, h)
        del self._hashes[at]
        return at == len(self._hashes) or self._hashes[at] != h

    def alone(self, id_: str) -> bool:
        """Is ``id_`` held by exactly one entry? (Another id of its hash counts as another
        entry: then the caller treats it as shared, which is never wrong.)"""
        hashes, h = self._hashes, hash(id_)
        at = bisect.bisect_left(hashes, h)
        end = len(hashes)
        return at < end and hashes[at] == h and (at + 1 == end or hashes[at + 1] != h)

    def __contains__(self, id_: object) -> bool:
        h = hash(id_)
        at = bisect.bisect_left(self._hashes, h)
        return at < len(self._hashes) and self._hashes[at] == h


def entry_record(rel: str, e: Entry) -> tuple[Any, ...]:
    """What :class:`Packed` keeps of the entry of the file at ``rel`` (its path and folder
    are ``rel``'s, unless they differ)."""
    where = None if e.path == rel and e.folder == folder_of(rel) else (e.path, e.folder)
    return (e.id, e.kind, e.summary, e.load_when, e.superseded_by, e.proposed, where)


def entry_from(rel: str, record: tuple[Any, ...]) -> Entry:
    """:func:`entry_record` back (kinds and folders shared again, as entry_for shares them)."""
    path, id_, kind, summary, load_when, superseded_by, folder, proposed = entry_fields(rel, record)
    kind = None if kind is None else sys.intern(kind)
    return Entry(path, id_, kind, summary, load_when, superseded_by, sys.intern(folder), proposed)


def entry_fields(rel: str, record: tuple[Any, ...]) -> tuple[Any, ...]:
    """The fields of the :class:`Entry` that :func:`entry_record` made ``record`` of, in
    their order, no Entry made."""
    id_, kind, summary, load_when, superseded_by, proposed, where = record
    path, folder = (rel, folder_of(rel)) if where is None else where
    return (path, id_, kind, summary, load_when, superseded_by, folder, proposed)


def folder_of(rel: str) -> str:
    """blocks.folder_of (posixpath.dirname), five times quicker for a path with no doubled
    slash: 300k of them in a whole-root pass at 100k memories."""
    head = rel.rpartition("/")[0]
    return posixpath.dirname(rel) if head.endswith("/") else head
