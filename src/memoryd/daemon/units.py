"""The systemd user unit and the launchd LaunchAgent: rendering and reading them (pure).

The templates ship inside the package (``memoryd/units/``; the repository's
``systemd/`` and ``launchd/`` folders hold identical copies). Rendering puts in
absolute paths (the interpreter running memoryd, memoryd's log folder) and the
environment a git push needs when no terminal is around (see docs/service.md).
Every rendered unit carries :data:`MARKER`, which is how memoryd tells its own
unit from one a user wrote.
"""

from __future__ import annotations

import plistlib
import re
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any
from xml.parsers.expat import ExpatError

LABEL = "dev.memoryd.daemon"
SYSTEMD_UNIT = "memoryd.service"
LAUNCHD_PLIST = f"{LABEL}.plist"
MARKER = "Written by memoryd"
# Variables copied from the installing shell into the unit when they are set.
PASS_THROUGH = (
    "MEMORYD_HOME",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "GIT_CONFIG_GLOBAL",
    "GIT_SSH_COMMAND",
    "SSH_AUTH_SOCK",
    "PATH",
)
_PLIST_COMMENT = (
    "<!-- Written by memoryd: 'memoryd service install' wrote this file and "
    "'memoryd service uninstall' removes it. See docs/service.md. -->"
)


def template(name: str) -> str:
    """A unit template shipped in the package (``memoryd.service`` or the plist)."""
    return (resources.files("memoryd") / "units" / name).read_text(encoding="utf-8")


def service_environment(env: Mapping[str, str], manager: str) -> dict[str, str]:
    """The variables the unit sets: those of :data:`PASS_THROUGH` that ``env`` sets.

    On macOS, launchd hands every agent its own per-boot ``SSH_AUTH_SOCK``;
    freezing the installing shell's copy would break at the next reboot.
    """
    out: dict[str, str] = {}
    for key in PASS_THROUGH:
        value = env.get(key, "")
        if not value:
            continue
        if key == "SSH_AUTH_SOCK" and manager == "launchd" and "com.apple.launchd" in value:
            continue
        if key == "PATH":
            value = _clean_path(value)
        out[key] = value
    return out


def volatile_agent(sock: str) -> bool:
    """An agent socket that a new login replaces (``ssh-agent``'s ``/tmp/ssh-XXXX/agent.N``)."""
    return re.fullmatch(r"/tmp/ssh-[^/]+/agent\.\d+", sock) is not None


def _clean_path(value: str) -> str:
    """Absolute folders only, each once, in order (a service has no working directory)."""
    seen: list[str] = []
    for part in value.split(":"):
        if part.startswith("/") and part not in seen:
            seen.append(part)
    return ":".join(seen)


def render_systemd(python: str, environment: Mapping[str, str]) -> str:
    """The user unit that runs ``<python> -m memoryd run``."""
    exec_start = " ".join(_quote(arg, exec_line=True) for arg in (python, "-m", "memoryd", "run"))
    env_lines = "\n".join(f"Environment={_quote(f'{k}={v}')}" for k, v in environment.items())
    text = template(SYSTEMD_UNIT).replace(
        "\nExecStart=@EXEC_START@\n", f"\nExecStart={exec_start}\n"
    )
    return text.replace("\n@ENVIRONMENT@\n", f"\n{env_lines}\n" if env_lines else "\n")


def _quote(value: str, exec_line: bool = False) -> str:
    """One systemd word in double quotes (specifiers and, in ExecStart, variables escaped)."""
    if "\n" in value or "\0" in value:
        raise ValueError(f"a unit value cannot contain a line break: {value!r}")
    value = value.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")
    if exec_line:
        value = value.replace("$", "$$")
    return f'"{value}"'


def render_launchd(python: str, environment: Mapping[str, str], log_dir: Path) -> str:
    """The LaunchAgent plist, built from the template with plistlib."""
    data = plistlib.loads(template(LAUNCHD_PLIST).encode("utf-8"))
    data = _substitute(data, {"@PYTHON@": python, "@LOG_DIR@": str(log_dir)})
    data["EnvironmentVariables"] = dict(environment)
    text = plistlib.dumps(data, sort_keys=False).decode("utf-8")
    head, sep, rest = text.partition("<plist ")
    return f"{head}{_PLIST_COMMENT}\n{sep}{rest}"


def _substitute(value: Any, names: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        for name, real in names.items():
            value = value.replace(name, real)
        return value
    if isinstance(value, list):
        return [_substitute(v, names) for v in value]
    if isinstance(value, dict):
        return {k: _substitute(v, names) for k, v in value.items()}
    return value


def parse_systemd(text: str) -> dict[str, dict[str, list[str]]]:
    """Sections of a unit file: ``{section: {key: [raw values in order]}}``."""
    sections: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], {})
        elif "=" in line and current is not None:
            key, _, value = line.partition("=")
            current.setdefault(key.strip(), []).append(value.strip())
        else:
            raise ValueError(f"not a unit file line: {raw!r}")
    return sections


def unit_words(value: str, exec_line: bool = False) -> list[str]:
    """Split a unit value into words the way systemd does (quotes, escapes, ``%%``)."""
    value = value.replace("%%", "%")
    if exec_line:
        value = value.replace("$$", "$")
    words: list[str] = []
    word: list[str] = []
    started = quoted = escaped = False
    for char in value:
        if escaped:
            word.append(char)
            escaped = False
        elif char == "\\":
            escaped = started = True
        elif char == '"':
            quoted, started = not quoted, True
        elif char.isspace() and not quoted:
            if started:
                words.append("".join(word))
            word, started = [], False
        else:
            word.append(char)
            started = True
    if started:
        words.append("".join(word))
    return words


def systemd_environment(text: str) -> dict[str, str]:
    """The variables a unit file sets with ``Environment=``."""
    env: dict[str, str] = {}
    for value in parse_systemd(text).get("Service", {}).get("Environment", []):
        for word in unit_words(value):
            key, _, val = word.partition("=")
            env[key] = val
    return env


def launchd_environment(text: str) -> dict[str, str]:
    """The ``EnvironmentVariables`` of a LaunchAgent plist."""
    data = plistlib.loads(text.encode("utf-8"))
    found = data.get("EnvironmentVariables", {}) if isinstance(data, dict) else {}
    return {str(k): str(v) for k, v in found.items()}


def unit_environment(manager: str, text: str) -> dict[str, str]:
    return launchd_environment(text) if manager == "launchd" else systemd_environment(text)


def unit_program(manager: str, text: str) -> str | None:
    """The program a unit runs (ExecStart's or ProgramArguments' first word), or None
    when the text does not say (a unit that does not parse)."""
    try:
        if manager == "launchd":
            data = plistlib.loads(text.encode("utf-8"))
            args = data.get("ProgramArguments") if isinstance(data, dict) else None
            return str(args[0]) if isinstance(args, list) and args else None
        starts = parse_systemd(text).get("Service", {}).get("ExecStart", [])
    except (ValueError, plistlib.InvalidFileException, ExpatError):
        return None
    words = unit_words(starts[-1], exec_line=True) if starts else []
    return words[0] if words else None
