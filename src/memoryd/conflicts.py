"""Pure decisions about conflicts: file classes, conflict-copy names and frontmatter.

A conflict copy sits next to the memory it belongs to::

    pitfalls/sqlite.md                            the other device's text
    pitfalls/sqlite.conflict-laptop-3f1a9c02b7.md laptop's text

The name is derived from the copy's bytes (their git blob id), as git-annex names its
variants: two devices that meet the same conflict, or a cycle killed and run again, make
the same copy at the same path and converge, instead of a second generation of copies
of one text. Copies named by their UTC time (``.conflict-laptop-20261129T233000Z``)
before that are still read.

A copy holds the exact bytes of the version it keeps (invalid UTF-8, a binary
file: nothing is parsed or rendered again); its file name says whose copy of
which memory it is, and ``CONFLICTS.md`` at the root lists every copy still on
disk, so recall, inspect and an agent reading its memory can tell.

Top-level, not in ``sync/``: the compiler, the index and inspect read these names
too, and a leaf they share keeps ``compile/`` from importing the package that imports it.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from memoryd.memory import id_for_path, parse, printable, render
from memoryd.rootfs import STATE_FILE
from memoryd.roots import is_temp_name

_COPY_RE = re.compile(
    r"^(?P<stem>.+)\.conflict-(?P<device>[A-Za-z0-9_-]+)-"
    r"(?:(?P<time>\d{8}T\d{6}Z)|(?P<digest>[0-9a-f]{10}))(?:-(?P<n>\d+))?"
    r"(?P<ext>\.[^./]*)?$"
)
DIGEST_CHARS = 10
_DEVICE_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
_CONFLICT_RE = re.compile(r"^<{7} .*?^={7}\r?$.*?^>{7}", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class CopyName:
    """What a conflict copy's file name says about it."""

    original: str  # root-relative path of the memory it is a copy of
    device: str
    time: str  # 20261129T233000Z, or '' for a copy named by its content


def utc_stamp(now: datetime) -> str:
    return now.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


def safe_device(device: str) -> str:
    return _DEVICE_UNSAFE.sub("-", device).strip("-") or "device"


def blob_id(data: bytes) -> str:
    """git's id of ``data`` as a blob (what ``git hash-object`` prints)."""
    import hashlib  # not at the top: recall reads copy names and never hashes (test_startup)

    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def copy_path(
    relpath: str, device: str, data: bytes, taken: Mapping[str, str] | Collection[str]
) -> str:
    """``<name>.conflict-<device>-<blob id><ext>`` next to ``relpath`` for a copy holding
    ``data``. ``taken``: paths in use (a mapping: to their blob ids, and a path already
    holding these very bytes is the copy's own); a path in use otherwise gets ``-2``..."""
    folder, name = posixpath.split(relpath)
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem:
        stem, ext = name, ""
    suffix = f".{ext}" if ext else ""
    sha = blob_id(data)
    base = f"{stem}.conflict-{safe_device(device)}-{sha[:DIGEST_CHARS]}"
    candidate = posixpath.join(folder, base + suffix)
    number = 2
    while candidate in taken and not (isinstance(taken, Mapping) and taken[candidate] == sha):
        candidate = posixpath.join(folder, f"{base}-{number}{suffix}")
        number += 1
    return candidate


def parse_copy_name(relpath: str) -> CopyName | None:
    """The memory a conflict copy belongs to, or None for an ordinary file."""
    folder, name = posixpath.split(relpath)
    match = _COPY_RE.match(name)
    if not match:
        return None
    original = posixpath.join(folder, match["stem"] + (match["ext"] or ""))
    return CopyName(original, match["device"], match["time"] or "")


def is_conflict_copy(relpath: str) -> bool:
    # the look for the word first: a compile asks of every memory (0.5 s of 300k)
    return ".conflict-" in relpath and parse_copy_name(relpath) is not None


def strip_copy_fields(data: bytes, original: str) -> bytes:
    """A conflict copy's text as an ordinary memory again (for ``resolve``).

    Copies hold the exact bytes of the version they keep; only copies written by
    memoryd before that carry ``conflict_of`` fields, which this takes out again.
    """
    memory = parse(data)
    if memory.malformed or "conflict_of" not in memory.meta:
        return data
    own_id = memory.meta.get("conflict_of")
    restored = memory.with_fields(conflict_of=None, conflict_device=None, conflict_time=None)
    if memory.id is not None:
        restored = restored.with_fields(id=own_id if isinstance(own_id, str) else None)
    del original
    return render(restored)


def has_conflict_markers(data: bytes) -> bool:
    """A ``<<<<<<<`` / ``=======`` / ``>>>>>>>`` run, as a failed merge leaves."""
    if b"<<<<<<< " not in data:
        return False
    return bool(_CONFLICT_RE.search(data.decode("utf-8", "replace")))


def never_synced(relpath: str) -> bool:
    """Files that never go into a commit, whatever their content."""
    name = posixpath.basename(relpath)
    return name == STATE_FILE or is_temp_name(name)


def render_conflicts(copies: list[tuple[str, CopyName]]) -> bytes | None:
    """CONFLICTS.md for the given copies (None: there are none, remove the file).

    Deterministic (sorted, nothing machine-specific) so every device writes the
    same bytes and the file itself never conflicts.
    """
    if not copies:
        return None
    lines = [
        "---",
        "id: CONFLICTS",
        "kind: conflicts",
        f"summary: {len(copies)} memory conflict copies from sync wait to be merged",
        "---",
        "# Sync conflicts",
        "",
        "Two devices changed the same memory. The text at the path is one version; the",
        "conflict copy beside it is the other, so nothing was lost. Merge them by hand and delete",
        "the copy, or run `memoryd resolve ID --keep local|remote|both` (local = the copy).",
        "",
    ]
    for copy, name in sorted(copies):
        when = ""
        if name.time:
            stamp = datetime.strptime(name.time, "%Y%m%dT%H%M%SZ")
            when = ", " + stamp.strftime("%Y-%m-%d %H:%M UTC")
        lines.append(
            f"- `{id_for_path(copy)}`: copy of [{name.original}]({name.original}) "
            f"from {name.device}{when}"
        )
    return printable("\n".join(lines) + "\n").encode("utf-8")


# What a person is told of conflict copies: a cycle of fifty is one line, not fifty.
FEW = 3  # names a grouped line shows; the rest are in 'memoryd conflicts'
CONFLICTS_FIX = (
    "'memoryd conflicts' lists the copies, 'memoryd resolve ID --keep local|remote|both' "
    "settles each"
)


def first_few(names: Sequence[str], few: int = FEW) -> str:
    """``a, b, c and 47 more``: a list a person reads at a glance, however long it is."""
    rest = len(names) - few
    return ", ".join(names[:few]) + (f" and {rest} more" if rest > 0 else "")


def conflicts_line(originals: Sequence[str]) -> str:
    """One line for the conflict copies a cycle saved, by the files they are copies of."""
    names = sorted(set(originals))
    count = len(originals)
    copies = "a conflict copy" if count == 1 else f"{count} conflict copies"
    return f"{copies} saved beside {first_few(names)} (changed on two devices); {CONFLICTS_FIX}"


def conflict_lines(conflicts: Sequence[Mapping[str, str]]) -> list[str]:
    """What a cycle's conflict copies (each its ``path`` and ``copy``) are told as: a line
    each when they are few, else one :func:`conflicts_line` (``memoryd sync``'s output and
    the sync state's notices, whose last 20 fifty copies pushed every other notice out of)."""
    if len(conflicts) > FEW:
        return [f"conflict: {conflicts_line([c['path'] for c in conflicts])}"]
    return [f"conflict: {c['path']}: a version saved as {c['copy']}" for c in conflicts]
