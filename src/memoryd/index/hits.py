"""Per-root hit counters in ``<root>/.state.json`` (git-ignored, never synced).

``{"hits": {"<memory id>": <count>, ...}}``; other keys are kept as they are.
A bump is read-modify-write under an exclusive ``flock`` on the root folder
itself, so two processes recalling at once never lose a count, and no lock
file appears in the root (nothing for git or the watcher to see). The new
content replaces the file atomically, so a reader without the lock sees either
the old or the new counts, never a torn file. The write is not fsync'ed: a hit count
only orders comparable matches, and two fsyncs cost more than the rest of a recall; a
crash may lose the last counts (or, on a file system that does not order a rename after
its data, leave an unreadable file, which is then ignored and started afresh).
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Callable, Sequence

from memoryd.fsutil import atomic_write
from memoryd.rootfs import STATE_FILE

TYPE_CHECKING = False  # light on purpose: the lean recall (memoryd.lean_recall) counts hits here
if TYPE_CHECKING:
    from typing import Any, Protocol

    from memoryd.fsutil import StrPath

    class _Hit(Protocol):
        @property
        def root(self) -> object: ...  # a Path, or the lean recall's str
        @property
        def id(self) -> str: ...
        @property
        def layout(self) -> str: ...


def read_hits(root: StrPath) -> dict[str, int]:
    """The hit count of every memory id in ``root`` (empty when there is no state)."""
    hits = _load(os.path.join(root, STATE_FILE)).get("hits")
    if not isinstance(hits, dict):
        return {}
    return {k: v for k, v in hits.items() if isinstance(v, int) and not isinstance(v, bool)}


_SEEN: dict[str, tuple[tuple[int, int, int], dict[Any, Any]]] = {}  # file -> (stat, hits)


def hit_lookup(root: StrPath, *, strict: bool = False) -> Callable[[str], int]:
    """The hit count of a memory id in ``root``, read once and checked per lookup.

    Ranking asks for a few dozen ids, so the counts are not validated one by one
    here; the parsed file is kept while its inode, size and mtime stay the same (a
    bump replaces the file, so a kept copy is never stale). ``strict``: an unreadable
    file raises (``OSError``, ``ValueError``) instead of being warned about and ignored.
    """
    file = os.path.join(root, STATE_FILE)
    try:
        st = os.stat(file)
    except OSError:
        return lambda _memory_id: 0
    stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
    seen = _SEEN.get(file)
    if seen is None or seen[0] != stamp:
        hits = _load(file, strict).get("hits")
        seen = (stamp, hits if isinstance(hits, dict) else {})
        _SEEN[file] = seen
    hits = seen[1]

    def lookup(memory_id: str) -> int:
        value = hits.get(memory_id, 0)
        return value if type(value) is int else 0

    return lookup


class Lookups(dict[str, "Callable[[str], int]"]):
    """Each root's :func:`hit_lookup`, by root path, made when ranking first asks for that
    root: a root none of whose memories is a candidate costs no ``stat``."""

    def __missing__(self, root: str) -> Callable[[str], int]:
        lookup = self[root] = hit_lookup(root)
        return lookup


def bump_hits(root: StrPath, ids: Sequence[str], *, strict: bool = False) -> None:
    """Add one hit to each id (an id listed twice gets two; ``strict``: see hit_lookup)."""
    if not ids or not os.path.isdir(root):
        return
    file = os.path.join(root, STATE_FILE)
    fd = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        state = _load(file, strict)
        hits = state.get("hits")
        if not isinstance(hits, dict):
            hits = {}
        for memory_id in ids:
            old = hits.get(memory_id)
            hits[memory_id] = (old if isinstance(old, int) else 0) + 1
        state["hits"] = hits
        atomic_write(file, render(state).encode("utf-8"), durable=False)  # see the docstring
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def bump_each(hits: Sequence[_Hit]) -> list[str]:
    """Count recalled hits, root by root: memoryd's own (plugin) memories only, never
    another agent's tree. The warnings of the roots where that failed (a read-only root
    still answers; it just does not learn)."""
    by_root: dict[str, list[str]] = {}
    for hit in hits:
        if hit.layout == "plugin":
            by_root.setdefault(str(hit.root), []).append(hit.id)
    warnings = []
    for root, ids in by_root.items():
        try:
            bump_hits(root, ids)
        except OSError as exc:
            warnings.append(f"cannot record hits in {root}: {exc}")
    return warnings


def render(state: dict[str, Any]) -> str:
    """``state`` as the file holds it: ``json.dumps(state, ensure_ascii=False, indent=1,
    sort_keys=True)`` and a newline.

    json writes an indented text in Python, not C: for a few thousand counts that was a
    third of a recall answered by the daemon. The usual state (only counts) is written by
    json's C encoder with separators that give the same indentation.
    """
    hits = state.get("hits")
    if len(state) == 1 and type(hits) is dict and hits and _only_counts(hits):
        inner = json.dumps(hits, ensure_ascii=False, sort_keys=True, separators=(",\n  ", ": "))
        return '{\n "hits": {\n  ' + inner[1:-1] + "\n }\n}\n"
    return json.dumps(state, ensure_ascii=False, indent=1, sort_keys=True) + "\n"


def _only_counts(hits: dict[Any, Any]) -> bool:
    return all(type(k) is str for k in hits) and all(type(v) is int for v in hits.values())


def _load(file: str, strict: bool = False) -> dict[str, Any]:
    try:
        with open(file, "rb") as handle:
            data = json.loads(handle.read())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        if strict:
            raise
        import logging  # only to warn: logging costs the lean recall a third of its time

        logging.getLogger(__name__).warning("ignoring unreadable %s: %s", file, exc)
        return {}
    return data if isinstance(data, dict) else {}
