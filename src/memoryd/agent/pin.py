"""Pin or unpin a memory (``memoryd pin ID [--off]``, the page's Pin button).

A pinned memory never decays in recall. Only the ``pinned`` line of the frontmatter
changes (``frontmatter_edit``), so a person's file keeps its layout and a sync shows a
one-line diff.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from memoryd import locate
from memoryd.agent import upkeep
from memoryd.app import App
from memoryd.errors import Refused
from memoryd.frontmatter_edit import edit_fields
from memoryd.fsutil import atomic_write


@dataclass(frozen=True)
class Pinned:
    id: str
    path: Path
    pinned: bool  # as it is now
    changed: bool  # False: it already was

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "path": str(self.path)}


def pin(app: App, raw_id: str, *, scope: str | None = None, on: bool = True) -> Pinned:
    roots = locate.active_roots(app.config, app.cwd)
    found = locate.find(roots, raw_id, scope)
    if found.memory.malformed:
        raise Refused(
            f"refusing to {'pin' if on else 'unpin'} {found.id!r}: its frontmatter does not parse",
            hint="memoryd inspect says where; fix it, then try again",
        )
    if found.memory.pinned == on:
        return Pinned(found.id, found.path, on, changed=False)
    atomic_write(found.path, edit_fields(found.memory, {"pinned": True if on else None}))
    upkeep.refresh(app, found.root, [found.path])
    return Pinned(found.id, found.path, on, changed=True)
