"""Review before reach: who wrote a team memory, and who may see it before a person accepts it.

What an agent writes into a team root lands with ``status: proposed`` and its provenance
(``author``: the git identity, ``device``, ``session``, ``agent``). A proposal is indexed,
and so recalled and injected, only on the device that wrote it: every other device leaves it
out of its index until a person accepts it (``memoryd accept ID``, or a merged pull request of
``memoryd/proposals/<user>/<device>``), which drops ``status`` and adds ``accepted_by``. The
compiled files (ROOT.md, index.md) never list a proposal: they are the same on every device.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

STATUS, PROPOSED = "status", "proposed"
PROVENANCE = ("author", "device", "session", "agent")  # the frontmatter keys, in this order
ACCEPTED_BY, ACCEPTED = "accepted_by", "accepted"


def is_proposed(meta: Mapping[Any, Any]) -> bool:
    return meta.get(STATUS) == PROPOSED


def visible_to(meta: Mapping[Any, Any], device: str) -> bool:
    """May the device named ``device`` index this memory? A proposal: only its writer's."""
    return not is_proposed(meta) or (bool(device) and meta.get("device") == device)


def provenance(meta: Mapping[Any, Any]) -> dict[str, str]:
    """The provenance fields a memory has, as text (an absent one is left out)."""
    keys = (*PROVENANCE, ACCEPTED_BY, STATUS)
    return {key: str(meta[key]) for key in keys if meta.get(key) not in (None, "")}


def described(meta: Mapping[Any, Any]) -> str:
    """One line: ``proposed by Ann <ann@x> on ann-laptop (session s, agent Claude Code)``."""
    found = provenance(meta)
    if not found.get("author") and not found.get(ACCEPTED_BY):
        return ""
    word = "proposed" if is_proposed(meta) else "written"
    line = f"{word} by {found.get('author', 'someone')}"
    if "device" in found:
        line += f" on {found['device']}"
    extra = [f"{key} {found[key]}" for key in ("session", "agent") if key in found]
    if extra:
        line += f" ({', '.join(extra)})"
    if ACCEPTED_BY in found:
        line += f"; accepted by {found[ACCEPTED_BY]}"
    return line
