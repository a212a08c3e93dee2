"""OpenCode: the MCP server in its global config, the plugin in its plugins folder.

The config is ``~/.config/opencode/opencode.jsonc`` when there is one, else
``opencode.json`` (made with OpenCode's ``$schema`` when missing); the entry is the shipped
``integrations/opencode/opencode.json``'s. The plugin is the shipped
``integrations/opencode/memoryd.js`` behind one line that tells it this memoryd's absolute
path (``MEMORYD_BIN``, which the plugin reads), so it never depends on OpenCode's PATH.
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

NAME = "opencode"
TITLE = "OpenCode"
AFTER = "start OpenCode again (it loads plugins and MCP servers at start)"
NEW_CONFIG = '{\n  "$schema": "https://opencode.ai/config.json"\n}\n'


def folder(target: Target) -> Path:
    return target.config_home() / "opencode"


def config_file(target: Target) -> Path:
    jsonc_file = folder(target) / "opencode.jsonc"
    return jsonc_file if jsonc_file.exists() else folder(target) / "opencode.json"


def plugin_file(target: Target) -> Path:
    return folder(target) / "plugins" / "memoryd.js"


def files(target: Target) -> tuple[Path, ...]:
    return config_file(target), plugin_file(target)


def entry(target: Target) -> dict[str, Any]:
    data: dict[str, Any] = resolved(target, json.loads(shipped("opencode/opencode.json")))
    return dict(data["mcp"]["memoryd"])


def plugin(target: Target) -> bytes:
    head = (
        "// Written by 'memoryd connect opencode' (undo: memoryd connect opencode --undo): the\n"
        "// plugin memoryd ships, told where this memoryd is, so it never depends on PATH.\n"
        f"process.env.MEMORYD_BIN ||= {json.dumps(str(target.memoryd))}\n\n"
    )
    return (head + shipped("opencode/memoryd.js")).encode("utf-8")


def changes(target: Target) -> list[Change]:
    path = config_file(target)
    raw = read(path)
    wanted = entry(target)
    new = edit_json(
        NAME, path, raw if raw is not None else NEW_CONFIG.encode(),
        lambda text: jsonc.set_member(text, ("mcp", "memoryd"), wanted),
    )  # fmt: skip
    script = plugin_file(target)
    return [
        Change(path, raw, new, "memoryd's MCP server"),
        Change(script, read(script), plugin(target), "memoryd's plugin (the block, the guard)"),
    ]


def remove(target: Target, path: Path, text: str) -> str | None:
    if path == plugin_file(target):
        return None  # memoryd's own file (the ledger keeps it as it was)
    return jsonc.remove_member(text, ("mcp", "memoryd"))


def health(target: Target) -> Health:
    data = load_json(config_file(target))
    servers = data.get("mcp") if isinstance(data, dict) else None
    found = servers.get("memoryd") if isinstance(servers, dict) else None
    script = read(plugin_file(target))
    if found is None and script is None:
        return Health(NAME, False, files(target))
    problems = server_problems(found, config_file(target))
    if script is None:
        problems.append(f"no plugin at {plugin_file(target)}, so no memory block and no guard")
    elif script != plugin(target):
        problems.append(f"{plugin_file(target)} is not the plugin this memoryd ships")
    return Health(NAME, True, files(target), tuple(problems))
