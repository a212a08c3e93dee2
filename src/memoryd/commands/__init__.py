"""CLI subcommands: one module per command (or family), each with ``register(sub)``.

Modules are discovered, so a new command is a new file. Keep module imports
light (argparse, typing): heavy imports (git, watchdog, sqlite) belong inside
the handler, so ``memoryd recall`` starts fast. A command line naming a
command whose module has that name imports and registers that module alone.
"""

from __future__ import annotations

import argparse
import importlib
from typing import Any


def register_commands(sub: argparse._SubParsersAction[Any], wanted: str | None = None) -> None:
    """Register ``wanted``'s module when it defines that command, else every command."""
    done = ""
    if wanted is not None and wanted.isidentifier() and not wanted.startswith("_"):
        name = f"{__name__}.{wanted}"
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
        else:
            module.register(sub)
            if wanted in (sub.choices or ()):
                return
            done = wanted
    for other in command_modules():
        if other != done:
            importlib.import_module(f"{__name__}.{other}").register(sub)


def describe(sub: argparse._SubParsersAction[Any]) -> None:
    """Each command's own ``--help`` opens with what it does: its one-line help from the
    command list, where it gives no longer description (``memoryd run --help`` said
    nothing of what run is)."""
    helps = {action.dest: action.help for action in sub._choices_actions}
    for name, parser in sub.choices.items():
        said = helps.get(name)
        if parser.description is None and said:
            parser.description = said[0].upper() + said[1:] + "."


def command_modules() -> list[str]:
    import pkgutil

    return sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")
