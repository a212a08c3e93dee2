"""Gemini CLI: the MCP server and the context hooks in ``~/.gemini/settings.json``.

From the shipped ``integrations/gemini/settings.json``: ``mcpServers.memoryd`` and two hook
groups, ``SessionStart`` and ``BeforeAgent`` (Gemini's prompt hook), each running
``memoryd context --hook --json``: Gemini CLI reads Claude Code's answer shape
(``hookSpecificOutput.additionalContext``). Gemini runs hooks only in a folder the user
trusts. ``GEMINI_CLI_HOME`` stands for the home folder, as it does for Gemini CLI.
"""

from __future__ import annotations

import json
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
    resolved,
    server_problems,
    shipped,
)

NAME = "gemini"
TITLE = "Gemini CLI"
AFTER = "start Gemini CLI again, in a folder you trust (it runs no hooks elsewhere)"


def settings_file(target: Target) -> Path:
    home = target.env.get("GEMINI_CLI_HOME", "")
    return (Path(home) if home else target.home) / ".gemini" / "settings.json"


def files(target: Target) -> tuple[Path, ...]:
    return (settings_file(target),)


def wanted(target: Target) -> dict[str, Any]:
    data: dict[str, Any] = resolved(target, json.loads(shipped("gemini/settings.json")))
    return data


def changes(target: Target) -> list[Change]:
    want = wanted(target)

    def edit(text: str) -> str:
        text = jsonc.set_member(text, ("mcpServers", "memoryd"), want["mcpServers"]["memoryd"])
        return hooks.merge(text, want["hooks"])

    path = settings_file(target)
    raw = read(path)
    events = ", ".join(want["hooks"])
    what = f"memoryd's MCP server and its hooks ({events})"
    return [Change(path, raw, edit_json(NAME, path, raw, edit), what)]


def remove(target: Target, path: Path, text: str) -> str:
    text = jsonc.remove_member(text, ("mcpServers", "memoryd"))
    return hooks.strip(text, list(wanted(target)["hooks"]))


def health(target: Target) -> Health:
    data = load_json(settings_file(target))
    events = list(wanted(target)["hooks"])
    found = hooks.found(data, events)
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    entry = servers.get("memoryd") if isinstance(servers, dict) else None
    connected = bool(found) or entry is not None
    problems = [*server_problems(entry, settings_file(target)), *hooks.problems(found, events)]
    return Health(NAME, connected, files(target), tuple(problems) if connected else ())
