"""Who is calling: a person at a shell, or an agent running memoryd through its shell tool.

Claude Code sets ``CLAUDECODE=1`` (and ``AI_AGENT``) in the environment of every command its
Bash tool runs; OpenCode sets ``OPENCODE=1`` (and ``AGENT=1``) for its bash tool. A
``memoryd remember --kind rule`` or ``memoryd accept`` run with one of these set is an
agent's call and is treated as one. The markers are inherited, so an agent cannot shed them
by accident, but any process can unset them on purpose: this stops an agent following its
instructions from minting iron rules, not a determined one (docs/agents.md says so).

Which agent it is goes into what it writes (the ``agent`` field, memoryd.agent.proposal):
the MCP client's own name from its ``initialize`` request (``clientInfo.name``), else
``MEMORYD_AGENT`` (a wrapper or hook names the agent it runs memoryd for; it is a marker
too), else the client a marker belongs to.
"""

from __future__ import annotations

from collections.abc import Mapping

from memoryd.errors import Refused

MARKERS = (
    ("CLAUDECODE", "Claude Code"),
    ("AI_AGENT", "an AI agent"),
    ("OPENCODE", "OpenCode"),
)


AGENT_ENV = "MEMORYD_AGENT"
NAME_MAX = 100  # characters of an agent's or session's name kept in a memory


def agent_marker(env: Mapping[str, str]) -> str | None:
    """``NAME=value (client)`` of the first agent marker set in ``env``, else None."""
    named = one_line(env.get(AGENT_ENV, ""))
    if named:
        return f"{AGENT_ENV}={named}"
    marked = _marked(env)
    return f"{marked[0]}={marked[1]} ({marked[2]})" if marked else None


def _marked(env: Mapping[str, str]) -> tuple[str, str, str] | None:
    """(variable, value, client) of the first of :data:`MARKERS` set in ``env`` (not to 0)."""
    for name, client in MARKERS:
        value = env.get(name, "")
        if value and value != "0":
            return name, value, client
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


def agent_name(env: Mapping[str, str], client: str | None = None) -> str | None:
    """The calling agent's name: ``client`` (what an MCP client calls itself), else
    ``MEMORYD_AGENT``, else the client of a marker; None when nothing says."""
    named = one_line(client or "") or one_line(env.get(AGENT_ENV, ""))
    if named:
        return named
    marked = _marked(env)
    return marked[2] if marked else None


def one_line(text: str) -> str:
    """A name as a memory keeps it: one line of printable text, at most NAME_MAX characters."""
    return " ".join("".join(c if c.isprintable() else " " for c in text).split())[:NAME_MAX]
