"""Claude Code: the hooks and allow list in ``~/.claude/settings.json``, the MCP server in
``~/.claude.json`` (where ``claude mcp add --scope user`` puts it).

The hooks are those of the shipped ``integrations/claude-code/settings.json`` with its bare
``memoryd`` made the absolute path of the running memoryd. ``CLAUDE_CONFIG_DIR`` moves
both files, as it moves them for Claude Code.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from memoryd.connect import hooks, jsonc
from memoryd.connect.target import (
    Change,
    Health,
    Target,
    edit_json,
    load_json,
    read,
    server_problems,
    shipped,
)

NAME = "claude-code"
TITLE = "Claude Code"
AFTER = "start a new Claude Code session (running ones keep their old settings)"


def template() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(shipped("claude-code/settings.json"))
    return data


def _dir(target: Target) -> Path:
    configured = target.env.get("CLAUDE_CONFIG_DIR", "")
    return Path(configured) if configured else target.home / ".claude"


def settings_file(target: Target) -> Path:
    return _dir(target) / "settings.json"


def state_file(target: Target) -> Path:
    """``~/.claude.json`` (inside ``CLAUDE_CONFIG_DIR`` when that is set)."""
    configured = target.env.get("CLAUDE_CONFIG_DIR", "")
    return Path(configured) / ".claude.json" if configured else target.home / ".claude.json"


def files(target: Target) -> tuple[Path, ...]:
    return settings_file(target), state_file(target)


def wanted_hooks(target: Target) -> hooks.Groups:
    groups: hooks.Groups = {}
    for event, entries in template()["hooks"].items():
        groups[event] = [_absolute(target, group) for group in entries]
    return groups


def _absolute(target: Target, group: dict[str, Any]) -> dict[str, Any]:
    out = dict(group)
    out["hooks"] = [
        {**hook, "command": target.line(*shlex.split(hook["command"])[1:])}
        for hook in group["hooks"]
    ]
    return out


def allowed() -> list[str]:
    return list(template()["permissions"]["allow"])


def server(target: Target) -> dict[str, Any]:
    return {"type": "stdio", "command": str(target.memoryd), "args": ["mcp"], "env": {}}


def changes(target: Target) -> list[Change]:
    path = settings_file(target)
    raw = read(path)

    def settings(text: str) -> str:
        text = hooks.merge(text, wanted_hooks(target))
        data = jsonc.loads(text)
        have = data.get("permissions", {}).get("allow", [])
        for tool in allowed():
            if tool not in (have if isinstance(have, list) else []):
                text = jsonc.append_item(text, ("permissions", "allow"), tool)
                have = jsonc.loads(text)["permissions"]["allow"]
        return text

    events = ", ".join(wanted_hooks(target))
    state = state_file(target)
    state_raw = read(state)
    return [
        Change(path, raw, edit_json(NAME, path, raw, settings, comments=False),
               f"memoryd's hooks ({events}) and its read-only tools allowed"),
        Change(state, state_raw, edit_json(NAME, state, state_raw, lambda text: jsonc.set_member(
            text, ("mcpServers", "memoryd"), server(target)), comments=False),
            "memoryd's MCP server (user scope)"),
    ]  # fmt: skip


def remove(target: Target, path: Path, text: str) -> str:
    if path == state_file(target):
        return jsonc.remove_member(text, ("mcpServers", "memoryd"))
    text = hooks.strip(text, list(wanted_hooks(target)))
    for tool in allowed():
        have = jsonc.loads(text).get("permissions", {}).get("allow", [])
        if isinstance(have, list) and tool in have:
            text = jsonc.remove_item(text, ("permissions", "allow"), have.index(tool))
    return text


def health(target: Target) -> Health:
    events = list(wanted_hooks(target))
    found = hooks.found(load_json(settings_file(target)), events)
    state = load_json(state_file(target))
    entry = state.get("mcpServers", {}).get("memoryd") if isinstance(state, dict) else None
    connected = bool(found) or isinstance(entry, dict)
    problems = hooks.problems(found, events) if connected else []
    if connected:
        problems += server_problems(entry, state_file(target))
    return Health(NAME, connected, files(target), tuple(problems))
