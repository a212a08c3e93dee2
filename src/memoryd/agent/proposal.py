"""Where a memory came from, and a team proposal's acceptance.

Every memory ``remember`` writes records the session and the agent that wrote it, when
they are known (:func:`origin`): the memory page shows them, so "why did the agent say
that?" leads to the session that taught it. One written into a team root also gets the
writer's git identity and device (:func:`provenance`). :mod:`memoryd.team` says what the
fields mean and who may see a proposal; :func:`accepted` turns a proposal into a team
memory (``memoryd accept``).
"""

from __future__ import annotations

from typing import Any

from memoryd import gitcli
from memoryd.agent.caller import agent_name, one_line
from memoryd.app import App
from memoryd.config.sections import RootConfig
from memoryd.layouts.visible import session_from
from memoryd.team import ACCEPTED, ACCEPTED_BY, PROPOSED, STATUS

IDENTITY_TIMEOUT_S = 10.0
MCP_CLIENT = "an MCP client"  # an agent's call that carries no marker of its client


def git_identity(root: RootConfig) -> str:
    """``Name <email>`` as git commits in ``root`` (empty when git knows no one)."""
    done = gitcli.run(
        ["var", "GIT_AUTHOR_IDENT"], cwd=root.path, env=gitcli.repo_env(),
        timeout=IDENTITY_TIMEOUT_S,
    )  # fmt: skip
    if done.code != 0:
        return ""
    ident = done.text.strip()
    return ident[: ident.rfind(">") + 1] if ">" in ident else ident


def origin(
    app: App, *, agent: bool, session: str | None = None, client: str | None = None
) -> dict[str, str]:
    """The ``session`` and ``agent`` fields of a new memory: ``session`` as the caller says
    (a hook's event, the extraction's transcript), else from the environment
    (``MEMORYD_SESSION_ID``, a client's own); ``client``: the MCP client's name."""
    fields = {}
    said = one_line(session or "") or one_line(session_from(app.env) or "")
    if said:
        fields["session"] = said
    if agent:
        fields["agent"] = agent_name(app.env, client) or MCP_CLIENT
    return fields


def provenance(
    app: App, root: RootConfig, *, agent: bool, stamp: int, session: str | None = None,
    client: str | None = None,
) -> dict[str, Any]:  # fmt: skip
    """The fields a new memory of a team root gets: an agent's is a proposal."""
    fields: dict[str, Any] = {"author": git_identity(root) or None, "device": app.config.device}
    fields.update(origin(app, agent=agent, session=session, client=client))
    if agent:
        fields[STATUS] = PROPOSED
    else:  # a person writing into the team root accepts it by writing it
        fields[ACCEPTED_BY] = fields["author"]
        fields[ACCEPTED] = stamp
    return {key: value for key, value in fields.items() if value is not None}


def accepted(root: RootConfig, stamp: int) -> dict[str, Any]:
    """The field changes that accept a proposal (``None`` removes ``status``)."""
    return {STATUS: None, ACCEPTED_BY: git_identity(root) or "someone", ACCEPTED: stamp}
