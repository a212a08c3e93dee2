"""Codex CLI: the MCP server as ``[mcp_servers.memoryd]`` in ``~/.codex/config.toml``.

The entry is the shipped ``integrations/codex/config.toml``'s. The file is edited with
tomlkit, which keeps the user's comments, order and spacing (a hand-made TOML writer
would be a second parser to get wrong; docs/agents.md). ``CODEX_HOME`` moves the folder,
as it does for Codex. No hooks: Codex runs a hook only once the user has reviewed and
trusted it in its ``/hooks`` screen, so memoryd's block reaches Codex through the tools
(``memory_context``, ``memory_recall``).
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from memoryd.connect.target import (
    Change,
    Health,
    Target,
    read,
    refused,
    resolved,
    server_problems,
    shipped,
    text_of,
)

NAME = "codex"
TITLE = "Codex CLI"
AFTER = "start Codex again; '/mcp' in its TUI lists memoryd"
KIND = "TOML"


def config_file(target: Target) -> Path:
    home = target.env.get("CODEX_HOME", "")
    return (Path(home) if home else target.home / ".codex") / "config.toml"


def files(target: Target) -> tuple[Path, ...]:
    return (config_file(target),)


def entry(target: Target) -> dict[str, Any]:
    data: dict[str, Any] = resolved(target, tomllib.loads(shipped("codex/config.toml")))
    return dict(data["mcp_servers"]["memoryd"])


def _parse(path: Path, raw: bytes | None) -> Any:
    import tomlkit
    from tomlkit.exceptions import ParseError

    text = "" if raw is None or not raw.strip() else text_of(NAME, path, raw, KIND)
    try:
        return tomlkit.parse(text)
    except ParseError as exc:
        problem = str(exc).split(" at line ")[0]
        raise refused(NAME, path, problem, exc.line, KIND) from exc


def changes(target: Target) -> list[Change]:
    import tomlkit

    path = config_file(target)
    raw = read(path)
    doc = _parse(path, raw)
    wanted = entry(target)
    servers = doc.get("mcp_servers")
    if servers is not None and not isinstance(servers, dict):
        raise refused(NAME, path, "mcp_servers is not a table", None, KIND)
    have = None if servers is None else servers.get("memoryd")
    if isinstance(have, dict) and all(have.get(k) == v for k, v in wanted.items()):
        return [Change(path, raw, raw or b"", "memoryd's MCP server")]
    if isinstance(have, dict):
        for key, value in wanted.items():
            have[key] = value
    else:
        table = tomlkit.table()
        for key, value in wanted.items():
            table.add(key, value)
        table.add(tomlkit.nl())  # a blank line before whatever table follows
        if servers is None:
            servers = tomlkit.table(is_super_table=True)
            doc["mcp_servers"] = servers
        servers["memoryd"] = table
    text = tomlkit.dumps(doc)
    return [Change(path, raw, text.encode("utf-8"), "memoryd's MCP server")]


def remove(target: Target, path: Path, text: str) -> str:
    import tomlkit

    doc = tomlkit.parse(text)
    servers = doc.get("mcp_servers")
    if isinstance(servers, dict) and "memoryd" in servers:
        del servers["memoryd"]
    return tomlkit.dumps(doc)


def health(target: Target) -> Health:
    raw = read(config_file(target))
    try:
        data = tomllib.loads(raw.decode("utf-8")) if raw else {}
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        data = {}
    found = data.get("mcp_servers", {}).get("memoryd")
    if found is None:
        return Health(NAME, False, files(target))
    return Health(NAME, True, files(target), tuple(server_problems(found, config_file(target))))
