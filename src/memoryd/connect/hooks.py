"""memoryd's hook groups merged into a client's ``hooks`` object (Claude Code, Gemini CLI).

Both clients keep ``hooks: {Event: [{matcher?, hooks: [{type, command, ...}]}]}``. A group
is memoryd's when every command in it runs memoryd (a bare ``memoryd`` of a hand-made
setup too, so connecting replaces it with the absolute path). memoryd's groups are replaced
in place, missing ones appended after the user's, extra ones removed; the user's groups are
never touched, nor their order.
"""

from __future__ import annotations

from typing import Any

from memoryd.connect import jsonc
from memoryd.connect.target import command_problem, is_memoryd

Groups = dict[str, list[dict[str, Any]]]


def is_ours(group: object) -> bool:
    if not isinstance(group, dict):
        return False
    hooks = group.get("hooks")
    return (
        isinstance(hooks, list) and bool(hooks)
        and all(isinstance(h, dict) and is_memoryd(h.get("command")) for h in hooks)
    )  # fmt: skip


def _events(text: str) -> dict[str, Any]:
    data = jsonc.loads(text)
    hooks = data.get("hooks") if isinstance(data, dict) else None
    return hooks if isinstance(hooks, dict) else {}


def merge(text: str, wanted: Groups) -> str:
    """``text`` with memoryd's groups of each event exactly ``wanted``'s."""
    for event, groups in wanted.items():
        path = ("hooks", event)
        current = _events(text).get(event)
        if not isinstance(current, list):
            text = jsonc.set_member(text, path, groups)
            continue
        ours = [i for i, group in enumerate(current) if is_ours(group)]
        for n, group in enumerate(groups):
            if n < len(ours):
                if current[ours[n]] != group:
                    text = jsonc.replace_item(text, path, ours[n], group)
            else:
                text = jsonc.append_item(text, path, group)
        for index in reversed(ours[len(groups) :]):
            text = jsonc.remove_item(text, path, index)
    return text


def strip(text: str, events: list[str]) -> str:
    """``text`` without memoryd's groups (an event left with none is removed)."""
    for event in events:
        current = _events(text).get(event)
        if not isinstance(current, list):
            continue
        ours = [i for i, group in enumerate(current) if is_ours(group)]
        if ours and len(ours) == len(current):
            text = jsonc.remove_member(text, ("hooks", event))
            continue
        for index in reversed(ours):
            text = jsonc.remove_item(text, ("hooks", event), index)
    return text


def found(data: Any, events: list[str]) -> dict[str, list[str]]:
    """memoryd's command lines per event in a client's settings data."""
    hooks = data.get("hooks") if isinstance(data, dict) else None
    hooks = hooks if isinstance(hooks, dict) else {}
    lines: dict[str, list[str]] = {}
    for event in events:
        groups = hooks.get(event)
        for group in groups if isinstance(groups, list) else []:
            if is_ours(group):
                lines.setdefault(event, []).extend(h["command"] for h in group["hooks"])
    return lines


def problems(lines: dict[str, list[str]], events: list[str]) -> list[str]:
    import shlex

    said = [f"no memoryd hook for {event}" for event in events if event not in lines]
    for event, commands in lines.items():
        for line in commands:
            problem = command_problem(shlex.split(line))
            if problem:
                said.append(f"the {event} hook cannot run: {problem}")
    return said
