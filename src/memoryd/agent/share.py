"""``memoryd share ID --team NAME``: a personal memory moved into a team root, on purpose.

Nothing personal reaches a team by accident: a memory leaves the global or project root for
a team root only through this command, which shows the exact file first and writes it only
when asked again with ``--yes``. The file gets the sharer's provenance (a person's write is
accepted as it is written), passes the secret gate, and leaves the personal root.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memoryd import locate, safepath
from memoryd.agent import upkeep
from memoryd.agent.gate import refuse_secrets
from memoryd.agent.proposal import provenance
from memoryd.agent.remember import now_ms
from memoryd.app import App
from memoryd.errors import Refused, UsageError
from memoryd.frontmatter_edit import edit_fields
from memoryd.fsutil import atomic_write


@dataclass(frozen=True)
class Shared:
    id: str
    team: str
    source: Path
    path: Path  # in the team root
    data: bytes  # the file as the team gets it
    written: bool


def share(app: App, raw_id: str, team: str, *, confirmed: bool) -> Shared:
    """The team's copy of personal memory ``raw_id``; written (and the personal file
    removed) only when ``confirmed``."""
    roots = locate.active_roots(app.config, app.cwd)
    target = next((r for r in locate.writable(roots) if r.team == team), None)
    if target is None:
        raise UsageError(
            f"no team root named {team!r} is configured",
            hint="memoryd team log lists the team roots; memoryd init --team NAME --remote URL",
        )
    personal = [r for r in roots if not r.is_team]
    found = locate.find(personal, raw_id)
    if not found.memory.sync:
        raise Refused(
            f"refusing to share {found.id!r}: it is marked sync: false, kept on this device "
            "by choice",
            hint=f"remove 'sync: false' from {found.path} first if the team should have it",
        )
    path = safepath.inside(target.path, found.id, ".md")
    if path.exists():
        raise Refused(
            f"refusing to share {found.id!r}: team {team} already has a memory with that id",
            hint=f"compare it with {path}; edit that one instead",
        )
    stamp = now_ms()
    fields = {**provenance(app, target, agent=False, stamp=stamp), "updated": stamp}
    data = edit_fields(found.memory, fields)
    refuse_secrets(target, path, data, agent=False)
    if confirmed:
        atomic_write(path, data)
        found.path.unlink()
        upkeep.refresh(app, target, [path])
        upkeep.refresh(app, found.root, [found.path])
    return Shared(found.id, team, found.path, path, data, confirmed)
