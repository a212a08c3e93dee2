"""The source formats an import reads, one module each, found by name.

Every module has ``read(path, env) -> Reading`` (pure: it reads the source's files and
never changes them) and ``default_path(env, cwd) -> Path | None`` (where the tool keeps
its memories; None when the user must say).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType

from memoryd.errors import UsageError
from memoryd.transfer import SOURCES
from memoryd.transfer.candidate import Reading

NAMES = SOURCES
MODULES = {name: name.replace("-", "_") for name in SOURCES}  # claude-mem: claude_mem.py


def module(source: str) -> ModuleType:
    """The reader module of ``source``; a name memoryd does not know is a usage error."""
    name = MODULES.get(source)
    if name is None:
        from memoryd.suggest import did_you_mean

        raise UsageError(
            f"unknown source {source!r}{did_you_mean(source, NAMES)}",
            hint=f"use one of: {', '.join(NAMES)}",
        )
    return importlib.import_module(f"{__name__}.{name}")


def read(source: str, path: Path | None, env: Mapping[str, str], cwd: Path) -> Reading:
    """Read ``source`` from ``path`` (default: where the tool keeps its memories)."""
    reader = module(source)
    where = path if path is not None else reader.default_path(env, cwd)
    if where is None:
        raise UsageError(
            f"a {source} import needs the PATH of the {reader.WHAT}",
            hint=f"memoryd import {source} PATH",
        )
    if not where.exists():
        raise UsageError(
            f"{where} does not exist: there is no {reader.WHAT} to import there",
            hint=f"give the PATH of the {reader.WHAT}: memoryd import {source} PATH",
        )
    reading: Reading = reader.read(where, env)
    return reading
