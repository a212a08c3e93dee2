"""The MCP SDK's names, imported in one place, and what memoryd declares with them: each
tool's annotations and the models of its structured answer (its ``outputSchema``).

The SDK (and the pydantic it brings) is imported here, guarded: a broken environment without
them gets one line naming the install command, never a traceback (pydantic imported before
the guard was an internal error, "please report it"). :mod:`memoryd.agent.mcp_server`
takes the SDK's names from here, so nothing of it is imported unguarded.
"""

from __future__ import annotations

from typing import Any

from memoryd.errors import MemorydError

try:  # pydantic too: a missing one was an internal error ("please report it")
    from mcp.server.mcpserver import MCPServer
    from mcp.types import CallToolResult, TextContent, ToolAnnotations
    from pydantic import BaseModel, Field
except ImportError as exc:
    import shlex
    import sys

    missing = (exc.name or "mcp").partition(".")[0]
    raise MemorydError(
        f"the MCP server needs the official mcp SDK, which is not installed (no {missing})",
        hint=f"{shlex.quote(sys.executable)} -m pip install 'mcp>=2,<3' (memoryd's own "
        "Python), or reinstall memoryd: pipx reinstall memoryd",
    ) from exc

__all__ = [
    "DELETES",
    "READ_ONLY",
    "WRITES",
    "Answer",
    "CallToolResult",
    "ContextAnswer",
    "Field",
    "ForgetAnswer",
    "MCPServer",
    "RecallAnswer",
    "RecallHit",
    "RememberAnswer",
    "Structured",
    "TextContent",
]  # fmt: skip


READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
WRITES = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
DELETES = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)


class Answer(BaseModel):
    """Every tool's structured answer: its text, as the model should read it."""

    text: str


class RecallHit(BaseModel):
    id: str
    scope: str
    kind: str | None
    summary: str | None
    score: float
    path: str
    stale: list[str]


class RecallAnswer(Answer):
    query: str
    hits: list[RecallHit]


class RememberAnswer(Answer):
    id: str
    path: str
    scope: str
    kind: str
    downgraded: bool
    supersedes: str | None


class ForgetAnswer(Answer):
    id: str
    path: str
    unlinked: list[str]
    current_again: list[str]


class ContextAnswer(Answer):
    entries: list[dict[str, Any]]
    cut: bool


Structured = tuple[str, dict[str, Any]]  # a tool body's text and the rest of its structure
