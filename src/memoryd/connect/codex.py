"""Codex CLI: ``[mcp_servers.memoryd]`` and the context hooks in ``~/.codex/config.toml``.

The entries are the shipped ``integrations/codex/config.toml``'s: the MCP server, and
``SessionStart`` and ``UserPromptSubmit`` hooks running ``memoryd context --hook --json``
(Codex reads Claude Code's answer shape). Codex runs a hook only once the user has trusted
it in its ``/hooks`` screen; until then memoryd reaches Codex through the tools. The file is
edited with tomlkit, which keeps the user's comments, order and spacing (a hand-made TOML
writer would be a second parser to get wrong; docs/agents.md). ``CODEX_HOME`` moves the
folder, as it does for Codex.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from memoryd.connect import hooks
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
AFTER = (
    "start Codex again ('/mcp' lists memoryd) and trust memoryd's hooks once in its '/hooks' "
    "screen (until then it has the tools, not the block)"
)
KIND = "TOML"


def config_file(target: Target) -> Path:
    home = target.env.get("CODEX_HOME", "")
    return (Path(home) if home else target.home / ".codex") / "config.toml"


def files(target: Target) -> tuple[Path, ...]:
    return (config_file(target),)


def template(target: Target) -> dict[str, Any]:
    data: dict[str, Any] = resolved(target, tomllib.loads(shipped("codex/config.toml")))
    return data


def entry(target: Target) -> dict[str, Any]:
    return dict(template(target)["mcp_servers"]["memoryd"])


def _table(data: dict[str, Any]) -> Any:
    """A tomlkit table of plain data (a list of tables becomes an array of tables)."""
    import tomlkit

    table = tomlkit.table()
    for key, value in data.items():
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            array = tomlkit.aot()
            for item in value:
                array.append(_table(item))
            table.add(key, array)
        else:
            table.add(key, value)
    return table


def _merge_hooks(doc: Any, wanted: hooks.Groups) -> None:
    """memoryd's groups of each event exactly ``wanted``'s, after the user's (as hooks.merge
    does for JSON)."""
    import tomlkit

    table = doc.get("hooks")
    if table is None:
        table = tomlkit.table(is_super_table=True)
        doc["hooks"] = table
    for event, groups in wanted.items():
        current = table.get(event)
        if current is None:
            array = tomlkit.aot()
            for group in groups:
                array.append(_table(group))
            table[event] = array
            continue
        ours = [i for i, group in enumerate(current) if hooks.is_ours(group)]
        if [current[i].unwrap() for i in ours] == groups:
            continue
        for index in reversed(ours):
            del current[index]
        for group in groups:
            current.append(_table(group))


def _strip_hooks(doc: Any, events: list[str]) -> None:
    table = doc.get("hooks")
    for event in events if isinstance(table, dict) else []:
        current = table.get(event)
        ours = [i for i, group in enumerate(current or []) if hooks.is_ours(group)]
        if current is not None and ours and len(ours) == len(current):
            del table[event]
            continue
        for index in reversed(ours):
            del current[index]


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
    what = "memoryd's MCP server and its hooks (SessionStart, UserPromptSubmit)"
    for key in ("mcp_servers", "hooks"):
        if doc.get(key) is not None and not isinstance(doc.get(key), dict):
            raise refused(NAME, path, f"{key} is not a table", None, KIND)
    servers = doc.get("mcp_servers")
    have = None if servers is None else servers.get("memoryd")
    if isinstance(have, dict):
        for key, value in wanted.items():
            if have.get(key) != value:
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
    _merge_hooks(doc, template(target)["hooks"])
    new = tomlkit.dumps(doc).encode("utf-8")
    return [Change(path, raw, raw if raw is not None and new == raw else new, what)]


def remove(target: Target, path: Path, text: str) -> str:
    import tomlkit

    doc = tomlkit.parse(text)
    servers = doc.get("mcp_servers")
    if isinstance(servers, dict) and "memoryd" in servers:
        del servers["memoryd"]
    _strip_hooks(doc, list(template(target)["hooks"]))
    return tomlkit.dumps(doc)


def health(target: Target) -> Health:
    raw = read(config_file(target))
    try:
        data = tomllib.loads(raw.decode("utf-8")) if raw else {}
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        data = {}
    found = data.get("mcp_servers", {}).get("memoryd")
    events = list(template(target)["hooks"])
    lines = hooks.found(data, events)
    if found is None and not lines:
        return Health(NAME, False, files(target))
    problems = [*server_problems(found, config_file(target)), *hooks.problems(lines, events)]
    return Health(NAME, True, files(target), tuple(problems))
