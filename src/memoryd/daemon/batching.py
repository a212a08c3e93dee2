"""Debounced batches of file changes: pure merging of events per path.

Events are hints, not the truth. A batch only has to name every path whose
state may have changed and say whether it exists afterwards; the index then
looks at the disk. The merge rules keep editors' dances down to one change:

* created then deleted: nothing (it never existed as far as the index knows);
* deleted then created: modified (vim's backup dance, ``rm`` + rewrite);
* a move deletes its source and replaces its destination, so a temp file
  written and renamed over ``note.md`` (an atomic save) is one modification.

A folder created, deleted or moved, or a lost event stream, cannot be followed
file by file: the batch asks for a rescan of that folder's root instead.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path


class Op(enum.Enum):
    CREATED = "created"  # did not exist when the batch opened, exists now
    MODIFIED = "modified"  # exists now; may or may not have existed before
    DELETED = "deleted"  # does not exist now


class Kind(enum.Enum):
    CREATED = "created"
    MODIFIED = "modified"
    DELETED = "deleted"
    MOVED = "moved"  # path -> dest, both memory files
    MOVED_IN = "moved_in"  # something not watched was renamed to ``path``
    RESCAN = "rescan"  # a folder changed wholesale: rescan the root holding it
    ROOT_GONE = "root_gone"  # the root folder itself was deleted or moved away


@dataclass(frozen=True)
class Change:
    """One filtered file-system event, in the daemon's terms."""

    kind: Kind
    path: Path
    dest: Path | None = None


# (state so far, new op) -> state afterwards; None means "no change at all".
_MERGE: dict[tuple[Op | None, Op], Op | None] = {
    (None, Op.CREATED): Op.CREATED,
    (None, Op.MODIFIED): Op.MODIFIED,
    (None, Op.DELETED): Op.DELETED,
    (Op.CREATED, Op.CREATED): Op.CREATED,
    (Op.CREATED, Op.MODIFIED): Op.CREATED,
    (Op.CREATED, Op.DELETED): None,
    (Op.MODIFIED, Op.CREATED): Op.MODIFIED,
    (Op.MODIFIED, Op.MODIFIED): Op.MODIFIED,
    (Op.MODIFIED, Op.DELETED): Op.DELETED,
    (Op.DELETED, Op.CREATED): Op.MODIFIED,
    (Op.DELETED, Op.MODIFIED): Op.MODIFIED,
    (Op.DELETED, Op.DELETED): Op.DELETED,
}


def merge(before: Op | None, new: Op) -> Op | None:
    """The net effect of ``before`` followed by ``new`` on one path."""
    return _MERGE[(before, new)]


def moved_in(before: Op | None) -> Op:
    """A path something was renamed onto: it exists; "created" only if it was new."""
    return Op.CREATED if before is Op.CREATED else Op.MODIFIED


@dataclass
class Batch:
    """The changes collected since the batch opened."""

    ops: dict[Path, Op] = field(default_factory=dict)
    rescan: set[Path] = field(default_factory=set)  # folders (or roots) to rescan whole
    gone: set[Path] = field(default_factory=set)  # roots that disappeared
    events: int = 0

    def add(self, change: Change) -> None:
        self.events += 1
        if change.kind is Kind.MOVED:
            assert change.dest is not None
            self._set(change.path, merge(self.ops.get(change.path), Op.DELETED))
            self._set(change.dest, moved_in(self.ops.get(change.dest)))
        elif change.kind is Kind.MOVED_IN:
            self._set(change.path, moved_in(self.ops.get(change.path)))
        elif change.kind is Kind.RESCAN:
            self.rescan.add(change.path)
        elif change.kind is Kind.ROOT_GONE:
            self.gone.add(change.path)
        else:
            op = Op(change.kind.value)
            self._set(change.path, merge(self.ops.get(change.path), op))

    def _set(self, path: Path, op: Op | None) -> None:
        if op is None:
            self.ops.pop(path, None)
        else:
            self.ops[path] = op

    def collapse(self, roots: list[Path]) -> None:
        """Too many files to follow one by one: rescan their roots instead."""
        for path in self.ops:
            root = root_of(path, roots)
            if root is not None:
                self.rescan.add(root)
        self.ops.clear()

    def __bool__(self) -> bool:
        return bool(self.ops or self.rescan or self.gone)

    def __len__(self) -> int:
        return len(self.ops) + len(self.rescan) + len(self.gone)


def batch_of(changes: list[Change]) -> Batch:
    """Merge a sequence of changes (pure convenience for tests and callers)."""
    batch = Batch()
    for change in changes:
        batch.add(change)
    return batch


def root_of(path: Path, roots: list[Path]) -> Path | None:
    """The deepest of ``roots`` that holds ``path``."""
    best: Path | None = None
    for root in roots:
        if (path == root or root in path.parents) and (
            best is None or len(root.parts) > len(best.parts)
        ):
            best = root
    return best
