"""Cursor: the MCP server in ``~/.cursor/mcp.json`` (``mcpServers``, as Cursor documents it).

Cursor's hooks cannot add to a prompt, so memoryd gives Cursor its tools only; the model
calls ``memory_context`` or ``memory_recall`` itself.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memoryd.connect import jsonc
from memoryd.connect.target import (
    Change,
    Health,
    Target,
    edit_json,
    load_json,
    read,
    resolved,
    server_problems,
    shipped,
)

NAME = "cursor"
TITLE = "Cursor"
AFTER = "restart Cursor, then check Settings > MCP lists memoryd"


def config_file(target: Target) -> Path:
    return target.home / ".cursor" / "mcp.json"


def files(target: Target) -> tuple[Path, ...]:
    return (config_file(target),)


def entry(target: Target) -> dict[str, Any]:
    data: dict[str, Any] = resolved(target, json.loads(shipped("cursor/mcp.json")))
    return dict(data["mcpServers"]["memoryd"])


def changes(target: Target) -> list[Change]:
    path = config_file(target)
    raw = read(path)
    wanted = entry(target)
    new = edit_json(
        NAME, path, raw, lambda text: jsonc.set_member(text, ("mcpServers", "memoryd"), wanted)
    )
    return [Change(path, raw, new, "memoryd's MCP server")]


def remove(target: Target, path: Path, text: str) -> str:
    return jsonc.remove_member(text, ("mcpServers", "memoryd"))


def health(target: Target) -> Health:
    data = load_json(config_file(target))
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    found = servers.get("memoryd") if isinstance(servers, dict) else None
    if found is None:
        return Health(NAME, False, files(target))
    return Health(NAME, True, files(target), tuple(server_problems(found, config_file(target))))
