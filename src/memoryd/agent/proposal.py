"""A memory written into a team root: its provenance, and a person's acceptance.

:mod:`memoryd.team` says what the fields mean and who may see a proposal; this module
fills them in from the writer's git identity, device, session and agent (when ``remember``
writes into a team root) and turns a proposal into a team memory (``memoryd accept``).
"""

from __future__ import annotations

from typing import Any

from memoryd import gitcli
from memoryd.agent.caller import MARKERS
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


def agent_name(app: App) -> str:
    for name, client in MARKERS:
        value = app.env.get(name, "")
        if value and value != "0":
            return client
    return MCP_CLIENT


def provenance(app: App, root: RootConfig, *, agent: bool, stamp: int) -> dict[str, Any]:
    """The fields a new memory of a team root gets: an agent's is a proposal."""
    fields: dict[str, Any] = {"author": git_identity(root) or None, "device": app.config.device}
    session = session_from(app.env)
    if session:
        fields["session"] = session
    if agent:
        fields["agent"] = agent_name(app)
        fields[STATUS] = PROPOSED
    else:  # a person writing into the team root accepts it by writing it
        fields[ACCEPTED_BY] = fields["author"]
        fields[ACCEPTED] = stamp
    return {key: value for key, value in fields.items() if value is not None}


def accepted(root: RootConfig, stamp: int) -> dict[str, Any]:
    """The field changes that accept a proposal (``None`` removes ``status``)."""
    return {STATUS: None, ACCEPTED_BY: git_identity(root) or "someone", ACCEPTED: stamp}
