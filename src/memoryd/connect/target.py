"""What every client module works from: the machine it connects, the files it changes.

A client module turns a :class:`Target` (the user's home, the environment, the absolute
path of the running memoryd) into :class:`Change` s: each one file's bytes before and
after. The modules are pure functions of the files they read; writing, backups and undo
are :mod:`memoryd.connect.ledger`'s, once for every client.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from memoryd.connect import jsonc
from memoryd.errors import ConfigError

# the read-only tools a client may call without asking (Claude Code's allow list)
READ_TOOLS = ("memory_recall", "memory_inspect", "memory_context")


@dataclass(frozen=True)
class Target:
    home: Path
    env: Mapping[str, str]
    memoryd: Path  # the running memoryd's console script, absolute: hooks never need PATH

    def line(self, *args: str) -> str:
        """A shell command line running this memoryd."""
        return shlex.join([str(self.memoryd), *args])

    def config_home(self) -> Path:
        xdg = self.env.get("XDG_CONFIG_HOME", "")
        return Path(xdg) if xdg and Path(xdg).is_absolute() else self.home / ".config"


@dataclass(frozen=True)
class Change:
    """One file of a client: its bytes now (None: no such file) and after connecting."""

    path: Path
    old: bytes | None
    new: bytes
    what: str  # what memoryd adds there, for the report

    @property
    def changed(self) -> bool:
        return self.new != self.old


@dataclass(frozen=True)
class Health:
    """A client's state: connected (memoryd's entries are in its config) and the problems."""

    client: str
    connected: bool
    files: tuple[Path, ...]
    problems: tuple[str, ...] = ()


def read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def shipped(relpath: str) -> str:
    """A file of ``memoryd/integrations`` (package data: the wheel carries it)."""
    return (resources.files("memoryd") / "integrations" / relpath).read_text(encoding="utf-8")


def refused(client: str, path: Path, problem: str, line: int | None, kind: str) -> ConfigError:
    where = f"{path}:{line}" if line else str(path)
    return ConfigError(
        f"cannot read {where}: {problem}; memoryd connect {client} wrote nothing",
        hint=f"fix {'line ' + str(line) + ' of ' if line else ''}{path} (it must be {kind}), "
        f"then run 'memoryd connect {client}' again",
    )


def text_of(client: str, path: Path, raw: bytes | None, kind: str = "JSON") -> str:
    if raw is None:
        return "{\n}\n"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise refused(client, path, "it is not UTF-8 text", line, kind) from exc
    return text if text.strip() else "{\n}\n"


def edit_json(
    client: str, path: Path, raw: bytes | None, edit: Callable[[str], str], comments: bool = True
) -> bytes:
    """The file's bytes after ``edit`` of its text; a file that does not parse is refused
    with its line (and nothing written)."""
    kind = "JSON (comments allowed)" if comments else "JSON"
    text = text_of(client, path, raw, kind)
    try:
        root = jsonc.parse(text)
    except jsonc.JsoncError as exc:
        raise refused(client, path, exc.problem, exc.line, kind) from exc
    if root.kind != "object":
        raise refused(client, path, "it is not a JSON object ({...})", 1, kind)
    try:
        return edit(text).encode("utf-8")
    except jsonc.JsoncError as exc:
        raise refused(client, path, exc.problem, exc.line, kind) from exc


def load_json(path: Path) -> Any:
    """The data of a JSON or JSONC file, or None when it is missing or does not parse."""
    raw = read(path)
    if raw is None:
        return None
    try:
        return jsonc.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, jsonc.JsoncError):
        return None


def command_problem(words: list[str]) -> str | None:
    """Why a configured command cannot start, or None."""
    if not words:
        return "the command is empty"
    program = Path(words[0])
    if not program.is_absolute():
        return f"{words[0]} is not an absolute path (it depends on PATH)"
    if not program.is_file():
        return f"{program} does not exist"
    if not os.access(program, os.X_OK):
        return f"{program} is not executable"
    return None


def is_memoryd(line: object) -> bool:
    """Is this command line memoryd's (a bare ``memoryd`` of a hand-made setup counts)?"""
    if not isinstance(line, str):
        return False
    try:
        words = shlex.split(line)
    except ValueError:
        return False
    return bool(words) and Path(words[0]).name == "memoryd"


def server_problems(entry: object, where: Path) -> list[str]:
    """Why an MCP server entry (``command`` a string or a list, ``args``) cannot start."""
    if not isinstance(entry, dict):
        return [f"no memoryd MCP server in {where}"]
    command = entry.get("command")
    words = [command] if isinstance(command, str) else list(command or [])
    args = entry.get("args")
    words += args if isinstance(args, list) else []
    problem = command_problem([str(w) for w in words])
    return [f"the MCP server cannot start: {problem}"] if problem else []


def resolved(target: Target, value: Any) -> Any:
    """A shipped template with its bare ``memoryd`` made the running memoryd's absolute path:
    a ``command`` string (a program, or a shell line for a hook) or list (OpenCode's argv)."""
    if isinstance(value, list):
        return [resolved(target, item) for item in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        new = item
        if key == "command" and isinstance(item, str) and is_memoryd(item):
            words = shlex.split(item)
            new = str(target.memoryd) if len(words) == 1 else target.line(*words[1:])
        elif key == "command" and isinstance(item, list) and item and item[0] == "memoryd":
            new = [str(target.memoryd), *item[1:]]
        out[key] = resolved(target, new)
    return out
