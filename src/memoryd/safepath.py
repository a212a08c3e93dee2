"""The one guard for every path memoryd writes or deletes on request.

An id or relative path from a caller (a person, an agent, an MCP client) must
name a file inside its memory root. Anything that could lead elsewhere is
refused before any file is touched: a NUL byte, an absolute path, a ``..``
step, anything under ``.git``, or a symlink (of the file or of a folder on the
way) that resolves outside the root.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from memoryd.errors import PathError

HINT = "pass an id relative to the memory root, like pitfalls/sqlite-cjk-tokenizer"
VCS_DIRS = frozenset({".git", ".hg", ".svn"})


def inside(root: Path, name: str, suffix: str = "") -> Path:
    """``root / name + suffix`` after checking that it stays inside ``root``.

    Returns the lexical path (a symlink inside the root is returned as the link,
    so deleting it removes the link, never its target).
    """
    _check_text(name)
    relative = PurePosixPath(name.replace("\\", "/"))
    if relative.is_absolute() or _drive(name):
        raise PathError(f"refusing {name!r}: an absolute path is outside the memory root", HINT)
    parts = relative.parts
    if ".." in parts:
        raise PathError(f"refusing {name!r}: '..' leads outside the memory root", HINT)
    if any(part.lower() in VCS_DIRS for part in parts):
        raise PathError(f"refusing {name!r}: memoryd never touches files inside .git", HINT)
    if not parts or parts == (".",):
        raise PathError(f"refusing {name!r}: it names the memory root itself", HINT)
    candidate = root.joinpath(*parts)
    candidate = candidate.with_name(candidate.name + suffix)
    _check_resolved(root, name, candidate)
    return candidate


def _check_text(name: str) -> None:
    if "\x00" in name:
        raise PathError(f"refusing {name!r}: it contains a NUL byte", HINT)
    if not name.strip():
        raise PathError("refusing an empty id", HINT)


def _drive(name: str) -> bool:
    """``C:`` and ``C:\\...``: absolute on Windows, refused everywhere."""
    return len(name) >= 2 and name[1] == ":" and name[0].isalpha()


def _check_resolved(root: Path, name: str, candidate: Path) -> None:
    real_root = root.resolve()
    try:
        target = candidate.resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop
        raise PathError(f"refusing {name!r}: it cannot be resolved ({exc})", HINT) from exc
    if target == real_root or real_root not in target.parents:
        raise PathError(
            f"refusing {name!r}: it resolves to {target}, outside the memory root {root}", HINT
        )
    if any(part.lower() in VCS_DIRS for part in target.relative_to(real_root).parts):
        raise PathError(f"refusing {name!r}: memoryd never touches files inside .git", HINT)
