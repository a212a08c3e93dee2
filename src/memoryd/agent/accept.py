"""``memoryd accept ID``: a person turns a proposal into what everyone reads.

A rule-proposal becomes an iron rule (``proposals/x`` moves to ``rules/x``); a team root's
proposal loses ``status: proposed`` and gains ``accepted_by``, so every device of the team
indexes it after its next sync (:mod:`memoryd.team`). Only a person accepts: the command
refuses under an agent's marker.
"""

from __future__ import annotations

from typing import Any

from memoryd import locate, safepath
from memoryd.agent import upkeep
from memoryd.agent.proposal import accepted
from memoryd.agent.remember import CATEGORY, PROPOSAL, RULE, Outcome, now_ms, unique_id
from memoryd.app import App
from memoryd.errors import Refused
from memoryd.frontmatter_edit import edit_fields
from memoryd.fsutil import atomic_write
from memoryd.team import is_proposed


def accept(app: App, raw_id: str, scope: str | None = None, stamp: int | None = None) -> Outcome:
    """A person turns a rule-proposal into an iron rule: ``proposals/x`` becomes ``rules/x``.

    The rule is written before the proposal is removed, and links to the proposal follow it.
    """
    from memoryd.agent.forget import relink

    roots = locate.active_roots(app.config, app.cwd)
    found = locate.find(roots, raw_id, scope)
    proposed = found.root.is_team and is_proposed(found.memory.meta)
    if found.memory.kind != PROPOSAL and not proposed:
        raise Refused(
            f"refusing to accept {found.id!r}: it is a {found.memory.kind or 'memory without kind'}"
            f", not a rule-proposal{' or a proposal to the team' if found.root.is_team else ''}",
            hint="memoryd inspect lists the proposals waiting to be accepted",
        )
    stamp = stamp or now_ms()
    fields: dict[str, Any] = {"updated": stamp}
    if proposed:  # from now on every device of the team indexes it
        fields.update(accepted(found.root, stamp))
    if found.memory.kind != PROPOSAL:
        atomic_write(found.path, edit_fields(found.memory, fields))
        warnings = tuple(upkeep.refresh_written(app, found.root, [found.path]))
        kind = found.memory.kind or ""
        return Outcome(found.id, found.path, found.root.path, found.root.scope, kind, False,
                       None, warnings)  # fmt: skip
    name = found.id.rsplit("/", 1)[-1]
    new_id = unique_id(found.root.path, CATEGORY[RULE], name)
    path = safepath.inside(found.root.path, new_id, ".md")
    fields["kind"] = RULE
    if "id" in found.memory.meta:
        fields["id"] = new_id
    atomic_write(path, edit_fields(found.memory, fields))
    found.path.unlink()
    changed = [path, found.path, *relink(found.root, found.id, new_id)]
    warnings = tuple(upkeep.refresh_written(app, found.root, changed))
    return Outcome(new_id, path, found.root.path, found.root.scope, RULE, False, None, warnings)
