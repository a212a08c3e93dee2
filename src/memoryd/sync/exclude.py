"""``sync: false`` memories stay out of git through a block memoryd owns in ``.git/info/exclude``.

The block lists each local-only file by its exact path. Entries whose file is
gone, or no longer says ``sync: false``, are dropped every cycle so a memory
turned back to ``sync: true`` shows up in ``git status`` again.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
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


def split(text: str) -> tuple[str, list[str], str]:
    """(text before the block, the block's paths, text after it)."""
    lines = text.splitlines(keepends=True)
    stripped = [line.rstrip("\r\n") for line in lines]
    if BEGIN not in stripped or END not in stripped[stripped.index(BEGIN) :]:
        return text, [], ""
    start = stripped.index(BEGIN)
    end = stripped.index(END, start)
    paths = [_unescape(line) for line in stripped[start + 1 : end] if line.startswith("/")]
    return "".join(lines[:start]), paths, "".join(lines[end + 1 :])


def still_local(top: Path, path: str) -> bool:
    try:
        return not parse((top / path).read_bytes()).sync
    except OSError:
        return False


def keep_out(git_dir: Path, top: Path, new: Iterable[str]) -> list[str]:
    """Add ``new`` (repo-relative) to the block, drop stale entries; the block's paths."""
    file = git_dir / "info" / "exclude"
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    before, listed, after = split(text)
    paths = sorted({p for p in listed if still_local(top, p)} | set(new))
    if not paths and not listed:
        return []
    if before and not before.endswith("\n"):
        before += "\n"
    block = "".join(f"{line}\n" for line in (BEGIN, *map(_escape, paths), END)) if paths else ""
    write_if_changed(file, (before + block + after).encode("utf-8"))
    return paths
