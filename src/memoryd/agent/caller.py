"""Who is calling: a person at a shell, or an agent running memoryd through its shell tool.

Claude Code sets ``CLAUDECODE=1`` (and ``AI_AGENT``) in the environment of every command its
Bash tool runs; OpenCode sets ``OPENCODE=1`` (and ``AGENT=1``) for its bash tool. A
``memoryd remember --kind rule`` or ``memoryd accept`` run with one of these set is an
agent's call and is treated as one. The markers are inherited, so an agent cannot shed them
by accident, but any process can unset them on purpose: this stops an agent following its
instructions from minting iron rules, not a determined one (docs/agents.md says so).
"""

from __future__ import annotations

from collections.abc import Mapping

from memoryd.errors import Refused

MARKERS = (
    ("CLAUDECODE", "Claude Code"),
    ("AI_AGENT", "an AI agent"),
    ("OPENCODE", "OpenCode"),
)


def agent_marker(env: Mapping[str, str]) -> str | None:
    """``NAME=value (client)`` of the first agent marker set in ``env``, else None."""
    for name, client in MARKERS:
        value = env.get(name, "")
        if value and value != "0":
            return f"{name}={value} ({client})"
    return None


def refuse_agent(env: Mapping[str, str], doing: str, only: str, command: str) -> None:
    """Refuse ``doing`` (``accept 'x'``) when an agent's marker is set in ``env``: ``only`` a
    person does it (``turns a proposal into an iron rule``); the hint is to run ``command``."""
    marker = agent_marker(env)
    if marker is not None:
        raise Refused(
            f"refusing to {doing}: this runs under an agent ({marker}), and only a person {only}",
            hint=f"run '{command}' yourself, in a terminal of your own",
        )
