"""Remember's gate: what a new memory's file must pass before its first write.

Where it lands (not a file memoryd compiles, not a name or folder it never reads), its size
(under ``search.max_file_bytes``, or its body could never be found), no secret, and no
existing memory that already says it. Public, beside the write in
:mod:`memoryd.agent.remember`, because an import (:mod:`memoryd.transfer.importing`)
screens every candidate through the same checks before it writes any.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from memoryd import locate
from memoryd.agent import upkeep
from memoryd.app import App
from memoryd.compile.blocks import is_generated
from memoryd.config.sections import RootConfig
from memoryd.errors import DuplicateRefused, Refused, SecretRefused, UsageError
from memoryd.oversize import FIX, over
from memoryd.roots import listed_by_name

if TYPE_CHECKING:
    from memoryd.index.db import IndexDB, Row


def refuse_unseen(root: Path, memory_id: str, path: Path) -> None:
    """The file lands where memoryd reads memories: not under a name it writes itself
    (index.md, ROOT.md) and not hidden or in a folder it skips, where recall, the compiled
    files and sync would never see it."""
    rel = path.relative_to(root).as_posix()
    if is_generated(rel):
        why = f"{rel} is a file memoryd compiles and rewrites, never a memory"
    elif not listed_by_name(root, path):
        why = f"memoryd never reads {rel} (a name starting with '.' or a folder it skips)"
    else:
        return
    raise UsageError(
        f"refusing id {memory_id!r}: {why}, so recall could never find it",
        hint="choose another id, like pitfalls/sqlite-cjk-tokenizer",
    )


def refuse_oversized(data: bytes, cap: int) -> None:
    if len(data) > cap:
        raise Refused(
            f"refusing to remember: the memory is {over(len(data), cap)}, "
            "so its body could never be found",
            hint=FIX,
        )


def refuse_secrets(root: RootConfig, path: Path, data: bytes, *, agent: bool) -> None:
    """Refuse a memory with a secret; a person is also told how to let a false positive
    through (the fingerprint into the root's allowlist), an agent is not."""
    findings = upkeep.secrets(data.decode("utf-8"), root.path)
    if not findings:
        return
    where = upkeep.redacted_name(path.relative_to(root.path).as_posix())
    lines = [
        f"  {where}:{f.line}: {f.rule} {f.preview} (fingerprint {f.fingerprint})" for f in findings
    ]
    hint = (
        "remove the secret (say where it lives instead, e.g. 'the token is in the "
        "password manager') and run again; memories are synced through git"
    )
    if not agent:
        hint += f". Not a secret? Add its fingerprint to {upkeep.allowlist_file(root.path)}"
    raise SecretRefused(
        "refusing to remember: the memory contains what looks like a secret\n" + "\n".join(lines),
        hint=hint,
    )


def refuse_duplicate(
    app: App, roots: list[RootConfig], text: str, old: locate.Found | None
) -> None:
    best = duplicate_of(app, roots, text, skip=old.path if old else None)
    if best is None:
        return
    hit, share = best
    raise DuplicateRefused(
        f"refusing to remember: {hit.id!r} ({hit.scope}) already covers {share:.0%} of this "
        "memory's terms",
        hint=f"read it with 'memoryd recall', replace it with --supersedes {hit.id}, "
        "or pass --force to write anyway",
    )


def duplicate_of(
    app: App, roots: list[RootConfig], text: str, skip: Path | None = None,
    db: IndexDB | None = None,
) -> tuple[Row, float] | None:
    """The existing memory covering the largest share (≥ the threshold) of ``text``'s terms,
    however old: found by relevance alone, never through recall's decayed top 20.
    ``db``: an index the caller keeps fresh (an import checks many memories against one)."""
    threshold = app.config.search.duplicate_coverage
    for row, share in upkeep.covering(app, roots, text, threshold, db=db):
        if skip is None or row.path != skip:
            return row, share
    return None


def coverage(wanted: set[str], existing: set[str]) -> float:
    """The share of ``wanted`` terms that ``existing`` contains."""
    return len(wanted & existing) / len(wanted) if wanted else 0.0
