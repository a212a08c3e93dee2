"""CLI subcommands: one module per command (or family), each with ``register(sub)``.

Modules are discovered, so a new command is a new file. Keep module imports
light (argparse, typing): heavy imports (git, watchdog, sqlite) belong inside
the handler, so ``memoryd recall`` starts fast. A command line naming a
command whose module has that name imports and registers that module alone.

The parser is built here, not in ``cli.py``: ``memoryd completion`` reads the whole
parser, and a command that imported ``cli`` would put ``cli`` and ``commands/`` in a loop.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Sequence
from typing import Any, NoReturn

from memoryd import __version__

HELP_FLAGS = ("-h", "--help")


class BadCommandLine(Exception):
    """argparse refused the command line (raised instead of exiting, so main reports it)."""

    def __init__(self, parser: argparse.ArgumentParser, message: str, hint: str | None) -> None:
        super().__init__(message)
        self.parser, self.message, self.hint = parser, message, hint


class Parser(argparse.ArgumentParser):
    """memoryd's parsers (sub-parsers are made of the same class): errors raise."""

    def error(self, message: str) -> NoReturn:
        raise BadCommandLine(self, message, None)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser; given ``argv``, with only its command's sub-parser when that is enough."""
    parser = Parser(
        prog="memoryd",
        description="Git-native sync daemon and search for AI agents' Markdown memory.",
    )
    parser.add_argument("--version", action="version", version=f"memoryd {__version__}")
    parser.add_argument(
        "-v", "--verbose", action="count", default=0, help="more log output (-vv for debug)"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    register_commands(sub, None if argv is None else command_word(argv))
    describe(sub)
    return parser


def command_word(argv: Sequence[str]) -> str | None:
    """The command ``argv`` names, if parsing it needs no other command's parser.

    ``memoryd -h`` (help before the command) lists every command: None then.
    """
    for arg in argv:
        if arg in HELP_FLAGS or arg == "--":
            return None
        if not arg.startswith("-"):
            return arg
    return None


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
