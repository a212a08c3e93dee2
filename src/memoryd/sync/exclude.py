"""Files that stay out of git through blocks memoryd owns in ``.git/info/exclude``.

The one file every work tree of the repository shares (see :func:`exclude_file`).

One block lists each ``sync: false`` memory by its exact path. Entries whose file
is gone, or no longer says ``sync: false``, are dropped every cycle so a memory
turned back to ``sync: true`` shows up in ``git status`` again.

Another lists files memoryd moved aside to make room for an incoming one whose
local file was ignored (the user's own ``.gitignore`` or ``info/exclude`` rule):
the moved file keeps the privacy of the path it came from, until it is gone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from memoryd.fsutil import write_if_changed
from memoryd.memory import parse

BEGIN = "# memoryd: begin (sync: false memories; maintained by memoryd)"
END = "# memoryd: end"
_SPECIAL = re.compile(r"([\\*?\[\]!# ])")


def _escape(path: str) -> str:
    return "/" + _SPECIAL.sub(r"\\\1", path)


def _unescape(line: str) -> str:
    return re.sub(r"\\(.)", r"\1", line[1:])


PRIVATE_BEGIN = "# memoryd: begin (ignored files moved aside; maintained by memoryd)"


def split(text: str, begin: str = BEGIN) -> tuple[str, list[str], str]:
    """(text before the block, the block's paths, text after it)."""
    lines = text.splitlines(keepends=True)
    stripped = [line.rstrip("\r\n") for line in lines]
    if begin not in stripped or END not in stripped[stripped.index(begin) :]:
        return text, [], ""
    start = stripped.index(begin)
    end = stripped.index(END, start)
    paths = [_unescape(line) for line in stripped[start + 1 : end] if line.startswith("/")]
    return "".join(lines[:start]), paths, "".join(lines[end + 1 :])


def still_local(top: Path, path: str) -> bool:
    try:
        return not parse((top / path).read_bytes()).sync
    except OSError:
        return False


def exclude_file(common_dir: Path) -> Path:
    """The ``info/exclude`` git reads: in the git dir every work tree shares. A linked work
    tree's own git dir (``.git/worktrees/<name>``) has none git reads, and the block written
    there kept nothing out: ``git status`` listed a ``sync: false`` memory, ``git add -A``
    committed it."""
    return common_dir / "info" / "exclude"


def keep_out(common_dir: Path, tops: Sequence[Path], new: Iterable[str]) -> list[str]:
    """Add ``new`` (repo-relative) to the block, drop stale entries; the block's paths.

    ``tops``: every work tree the block serves; an entry stays while one of them needs it.
    """
    return _settle(common_dir, BEGIN, new, lambda p: any(still_local(t, p) for t in tops))


def keep_private(common_dir: Path, tops: Sequence[Path], new: Iterable[str]) -> list[str]:
    """Keep ``new`` (repo-relative files moved aside) ignored; drop the ones gone."""
    return _settle(common_dir, PRIVATE_BEGIN, new, lambda p: any((t / p).exists() for t in tops))


def _settle(
    common_dir: Path, begin: str, new: Iterable[str], keep: Callable[[str], bool]
) -> list[str]:
    file = exclude_file(common_dir)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    before, listed, after = split(text, begin)
    paths = sorted({p for p in listed if keep(p)} | set(new))
    if not paths and not listed:
        return []
    if before and not before.endswith("\n"):
        before += "\n"
    block = "".join(f"{line}\n" for line in (begin, *map(_escape, paths), END)) if paths else ""
    file.parent.mkdir(parents=True, exist_ok=True)
    write_if_changed(file, (before + block + after).encode("utf-8"))
    return paths
