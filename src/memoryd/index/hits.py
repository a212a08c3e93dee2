"""Per-root hit counters in ``<root>/.state.json`` (git-ignored, never synced).

The file is a JSON object, ``{"hits": {"<memory id>": <count>, ...}}`` (other keys are
kept as they are), followed by the hits recorded since it was written: one JSON string
(a memory id) per line, each line one more hit. Recording a recall's hits appends their
lines in one ``write`` (``O_APPEND``): a recall costs the same whether the root holds a
hundred counts or a hundred thousand, where reading, parsing and rewriting every count
cost 15 ms of CPU per answer at 100k memories. A file of the earlier format (the object
alone) is the same format with no lines yet, so it is read as it is and upgraded by the
first fold.

Now and then (each time the file grows past another :data:`FOLD_BYTES`) a recall folds
the lines into the object and replaces the file atomically (not fsync'ed: a hit count
only orders comparable matches; a crash may lose the last counts, or leave an unreadable
file, which is then ignored and started afresh). Appending holds a shared ``flock`` on
the root folder itself and folding an exclusive one, so a fold never loses a line another
process is writing, and no lock file appears in the root. A reader takes only whole
lines (a line still being written is read next time), and a process that read the file
before reads only the lines added since (:func:`hit_lookup`).
"""

from __future__ import annotations

import _thread
import fcntl
import os
from collections import Counter
from collections.abc import Callable, Sequence

from memoryd.fsutil import atomic_write, new_file_mode
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

FOLD_BYTES = 64 * 1024  # fold the appended hits in whenever the file grows past a multiple


def read_hits(root: StrPath) -> dict[str, int]:
    """The hit count of every memory id in ``root`` (empty when there is no state)."""
    hits = _load(os.path.join(root, STATE_FILE)).get("hits")
    if not isinstance(hits, dict):
        return {}
    return {k: v for k, v in hits.items() if isinstance(v, int) and not isinstance(v, bool)}


# file -> (an open descriptor of it, bytes read, hits): a bump appends, so a kept copy
# reads on from where it stopped; a fold replaces the file, which is then read again
# whole. The descriptor keeps the inode alive, so no later file can reuse its number and
# pass for the file read (two folds in a row did, before).
_SEEN: dict[str, tuple[int, int, dict[Any, Any]]] = {}
_SEEN_LOCK = _thread.allocate_lock()  # recall threads of the daemon read on in turn


def hit_lookup(root: StrPath, *, strict: bool = False) -> Callable[[str], int]:
    """The hit count of a memory id in ``root``, read once and checked per lookup.

    Ranking asks for a few dozen ids, so the counts are not validated one by one
    here; the parsed file is kept, and only the hits appended since are read when it
    grew. ``strict``: an unreadable file raises (``OSError``, ``ValueError``) instead
    of being warned about and ignored.
    """
    file = os.path.join(root, STATE_FILE)
    try:
        st = os.stat(file)
    except OSError:
        return lambda _memory_id: 0
    with _SEEN_LOCK:
        seen = _SEEN.get(file)
        if seen is not None and _same(seen[0], st) and seen[1] <= st.st_size:
            if seen[1] < st.st_size:
                seen = (seen[0], _read_on(file, seen[0], seen[1], seen[2], strict), seen[2])
        else:
            if seen is not None:
                os.close(seen[0])
                del _SEEN[file]
            fd, read, state = _open(file, strict)
            seen = (fd, read, state.get("hits", {}))
        if seen[0] >= 0:
            _SEEN[file] = seen
    hits = seen[2]

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


_HEAD = b'{\n "hits": {\n  "'  # render's file of counts only, up to its first key
_TAIL = b"\n }\n}\n"  # ...and where its object ends


class _Unusual(Exception):
    """Not a file of counts alone as :func:`render` writes it: parse it whole."""


def hit_reader(root: StrPath, *, strict: bool = False) -> Callable[[str], int]:
    """:func:`hit_lookup`'s counts for a process that asks once: the file is read, not parsed.

    Each id asked for is found by a binary search of the object's lines (:func:`render`
    writes one count a line, keys sorted) and its appended lines are counted; a file not
    of that form (other keys, other values, a line the search cannot read) is parsed
    whole as :func:`hit_lookup` parses it. Kept nowhere: a later call reads the file again.
    """
    file = os.path.join(root, STATE_FILE)
    try:
        fd = os.open(file, os.O_RDONLY)
        try:
            data = _read_all(fd)
        finally:
            os.close(fd)
    except FileNotFoundError:
        return lambda _memory_id: 0
    except OSError as exc:
        if strict:
            raise
        _warn(file, exc)
        return lambda _memory_id: 0
    if data.startswith(_HEAD):
        end = data.find(b"}", len(_HEAD))
        while end > 0 and data[end - 2 : end] != b"\n ":  # a brace in an id, or a nested value
            end = data.find(b"}", end + 1)
        end -= 2  # where the object of counts ends (find(b"\n }") is slower than memchr)
        if end < 0 or data[end : end + len(_TAIL)] != _TAIL:
            return _parsed(file, data, strict)
        lines = end + len(_TAIL) - 1
    elif data[:1] in (b'"', b""):  # hits appended and never folded: no object yet
        end = lines = 0
    else:
        return _parsed(file, data, strict)
    appended = Counter(data[lines : data.rfind(b"\n") + 1].split(b"\n"))
    found: dict[str, int] = {}
    whole: list[Callable[[str], int]] = []  # the file parsed, once a line was not a count
    escaped: list[Counter[str]] = []  # the appended lines json escaped, read once asked for

    def lookup(memory_id: str) -> int:
        if whole:
            return whole[0](memory_id)
        count = found.get(memory_id)
        if count is None:
            key = memory_id.encode("utf-8", "surrogatepass")
            try:
                count = _search(data, len(_HEAD) - 3, end, key) if end else 0
            except (_Unusual, ValueError):
                whole.append(_parsed(file, data, strict))
                return whole[0](memory_id)
            if _plain(memory_id):
                count += appended[b'"' + memory_id.encode("ascii") + b'"']
            else:  # the lines of an id json escaped: as json reads them
                if not escaped:
                    escaped.append(_unescaped(appended))
                count += escaped[0][memory_id]
            found[memory_id] = count
        return count

    return lookup


def _parsed(file: str, data: bytes, strict: bool) -> Callable[[str], int]:
    """:func:`hit_reader` for a file of another form: every count parsed, as by hit_lookup."""
    try:
        hits = _parse(data)[0]["hits"]
    except ValueError as exc:
        if strict:
            raise
        _warn(file, exc)
        hits = {}

    def lookup(memory_id: str) -> int:
        value = hits.get(memory_id, 0)
        return value if type(value) is int else 0

    return lookup


def _search(data: bytes, lo: int, hi: int, key: bytes) -> int:
    """The count of ``key`` (an id's UTF-8) among the lines of ``data[lo:hi]`` (each
    ``  "<id>": <count>,`` in the order of the ids), 0 when none holds it; raises
    :class:`_Unusual` at a line that is not one count."""
    while lo < hi:
        start = data.rfind(b"\n", lo, (lo + hi) // 2) + 1 or lo
        stop = data.find(b"\n", start, hi)
        if stop < 0:
            stop = hi
        if data[start : start + 3] != b'  "':
            raise _Unusual  # not an id of the object's own (a nested value's line)
        quote = data.find(b'"', start + 3, stop)
        if quote < 0:
            raise _Unusual
        name = data[start + 3 : quote]
        if b"\\" in name:  # an escaped id (or a quote in it): json reads the line
            name = _escaped(data[start:stop])
        if name == key:
            return _count_of(data[start:stop])
        if name < key:  # UTF-8 sorts as the code points do (json's sort_keys)
            lo = stop + 1
        else:
            hi = start
    return 0


def _escaped(line: bytes) -> bytes:
    """The id (UTF-8) of a line whose id json escaped."""
    import json

    try:
        ((name, _count),) = json.loads(b"{" + line.rstrip(b",") + b"}").items()
    except ValueError as exc:
        raise _Unusual from exc
    return str(name).encode("utf-8", "surrogatepass")


def _count_of(line: bytes) -> int:
    """The count a line of the object holds (:class:`_Unusual`: not a whole number)."""
    digits = line[line.rindex(b'": ') + 3 :].removesuffix(b",")
    if not digits.lstrip(b"-").isdigit():
        raise _Unusual  # a float, true, null, a text, a list, an object
    return int(digits)


def _unescaped(lines: Counter[bytes]) -> Counter[str]:
    """The ids of the appended ``lines`` that hold an escape, counted as json reads them."""
    import json

    ids: Counter[str] = Counter()
    for line, times in lines.items():
        if b"\\" not in line:
            continue
        try:
            memory_id = json.loads(line)
        except ValueError:  # torn by a crash: not a hit
            continue
        if type(memory_id) is str:
            ids[memory_id] += times
    return ids


def _plain(memory_id: str) -> bool:
    """Is ``memory_id`` its own line's text, ``json.dumps`` escaping nothing in it?"""
    return memory_id.isascii() and memory_id.isprintable() and not {'"', "\\"} & set(memory_id)


def _line(memory_id: str) -> str:
    """An id as a line of hits holds it: ``json.dumps(memory_id)`` (ASCII, escaped)."""
    if _plain(memory_id):
        return f'"{memory_id}"'  # what json.dumps gives it, without importing json
    import json

    return json.dumps(memory_id)


def bump_hits(root: StrPath, ids: Sequence[str], *, strict: bool = False) -> None:
    """Add one hit to each id (an id listed twice gets two; ``strict``: see hit_lookup)."""
    if not ids or not os.path.isdir(root):
        return
    file = os.path.join(root, STATE_FILE)
    lines = "".join(_line(memory_id) + "\n" for memory_id in ids)  # ASCII: any id
    fd = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        out = os.open(file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, new_file_mode(root))
        try:
            before = os.fstat(out).st_size
            os.write(out, lines.encode("ascii"))
        finally:
            os.close(out)
        if (before + len(lines)) // FOLD_BYTES > before // FOLD_BYTES:
            fcntl.flock(fd, fcntl.LOCK_EX)
            fold(file, strict)
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def fold(file: str, strict: bool = False) -> None:
    """Fold the appended hits into the object and write the file as that object alone
    (the caller holds the root's exclusive lock)."""
    data = render(_load(file, strict)).encode("utf-8", "surrogatepass")
    atomic_write(file, data, durable=False)  # see the module docstring


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
    import json

    hits = state.get("hits")
    if len(state) == 1 and type(hits) is dict and hits and _only_counts(hits):
        inner = json.dumps(hits, ensure_ascii=False, sort_keys=True, separators=(",\n  ", ": "))
        return '{\n "hits": {\n  ' + inner[1:-1] + "\n }\n}\n"
    return json.dumps(state, ensure_ascii=False, indent=1, sort_keys=True) + "\n"


def _only_counts(hits: dict[Any, Any]) -> bool:
    return all(type(k) is str for k in hits) and all(type(v) is int for v in hits.values())


def _load(file: str, strict: bool = False) -> dict[str, Any]:
    """The state with the appended hits counted in (empty when there is no file, or it
    cannot be read)."""
    fd, _read, state = _open(file, strict)
    if fd >= 0:
        os.close(fd)
    return state


def _open(file: str, strict: bool) -> tuple[int, int, dict[str, Any]]:
    """An open descriptor of ``file`` (-1: none), the bytes read (whole lines) and the
    state, appended hits counted in."""
    try:
        fd = os.open(file, os.O_RDONLY)
    except FileNotFoundError:
        return -1, 0, {}
    except OSError as exc:
        if strict:
            raise
        _warn(file, exc)
        return -1, 0, {}
    try:
        state, read = _parse(_read_all(fd))
    except (OSError, ValueError) as exc:
        os.close(fd)
        if strict:
            raise
        _warn(file, exc)
        return -1, 0, {}
    return fd, read, state


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _parse(data: bytes) -> tuple[dict[str, Any], int]:
    """The state ``data`` holds, appended hits counted in, and where its last line ends."""
    import json

    text = data.decode("utf-8", "surrogatepass")
    start = len(text) - len(text.lstrip())
    state: Any = {}
    head = 0
    if text.startswith("{", start):
        state, end = json.JSONDecoder().raw_decode(text, start)
        head = len(text[:end].encode("utf-8", "surrogatepass"))
        if not isinstance(state, dict):
            state = {}
    if not isinstance(state.get("hits"), dict):
        state["hits"] = {}
    return state, _count(data, head, state["hits"])


def _same(fd: int, st: os.stat_result) -> bool:
    """Is the file open as ``fd`` the one ``st`` describes?"""
    mine = os.fstat(fd)
    return (mine.st_ino, mine.st_dev) == (st.st_ino, st.st_dev)


def _read_on(file: str, fd: int, offset: int, hits: dict[Any, Any], strict: bool) -> int:
    """Count the hits appended to ``file`` after ``offset``; the bytes read up to now."""
    try:
        size = os.fstat(fd).st_size
        return offset + _count(os.pread(fd, size - offset, offset), 0, hits)
    except OSError as exc:
        if strict:
            raise
        _warn(file, exc)
        return offset


def _count(data: bytes, start: int, hits: dict[Any, Any]) -> int:
    """Add the hit lines of ``data`` after ``start``; where the last whole line ends."""
    import json

    end = data.rfind(b"\n") + 1
    if end <= start:
        return start
    for line in data[start:end].split(b"\n"):
        try:
            memory_id = json.loads(line)
        except ValueError:  # blank, or torn by a crash mid-write: that hit is lost, no more
            continue
        if type(memory_id) is str:
            old = hits.get(memory_id)
            hits[memory_id] = (old if type(old) is int else 0) + 1
    return end


def _warn(file: str, exc: Exception) -> None:
    import logging  # only to warn: logging costs the lean recall a third of its time

    logging.getLogger(__name__).warning("ignoring unreadable %s: %s", file, exc)
