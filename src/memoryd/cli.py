"""The ``memoryd`` command: parses, dispatches, prints. The work lives in the library.

Exit codes: 0 success, 1 a problem the user must act on, 2 usage errors.
Every :class:`MemorydError` is handled here, once; any other exception is a bug:
its traceback goes to the log file and the user gets a one-line pointer.
"""

from __future__ import annotations

import argparse
import gc
import logging
import sys
from collections.abc import Sequence

from memoryd import __version__
from memoryd.app import App
from memoryd.commands import register_commands
from memoryd.errors import MemorydError

log = logging.getLogger("memoryd")

HELP_FLAGS = ("-h", "--help")


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser; given ``argv``, with only its command's sub-parser when that is enough."""
    parser = argparse.ArgumentParser(
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


def main(argv: Sequence[str] | None = None, app: App | None = None) -> int:
    entry = argv is None  # the process's entry point, not a test calling in
    argv = sys.argv[1:] if argv is None else argv
    collecting = gc.isenabled()
    gc.disable()  # start-up only builds long-lived objects: no garbage to look for
    try:
        args = build_parser(argv).parse_args(argv)
    finally:
        if entry:
            gc.freeze()  # and later collections need not walk them again
        if collecting:
            gc.enable()
    app = app or App()
    _setup_logging(args.verbose)
    try:
        code: int = args.handler(app, args)
        return code
    except MemorydError as exc:
        app.err.write(f"memoryd: error: {exc}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        app.err.write("memoryd: interrupted\n")
        return 130
    except Exception as exc:  # a bug: keep the traceback, tell the user where
        where = _log_bug(app, exc)
        app.err.write(f"memoryd: internal error: {type(exc).__name__}: {exc} ({where})\n")
        return 1


def _setup_logging(verbosity: int) -> None:
    level = logging.WARNING - 10 * min(verbosity, 2)
    root = logging.getLogger()
    if not any(getattr(h, "_memoryd_cli", False) for h in root.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("memoryd: %(levelname)s: %(message)s"))
        handler._memoryd_cli = True  # type: ignore[attr-defined]
        root.addHandler(handler)
    root.setLevel(level)


def _log_bug(app: App, exc: BaseException) -> str:
    try:
        log_file = app.paths.log_file
        log_file.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(log_file, encoding="utf-8")
    except Exception:
        return "please report it with the command you ran"
    bug = logging.getLogger("memoryd.bug")
    bug.propagate = False
    bug.addHandler(handler)
    try:
        bug.error("unhandled error in %s", " ".join(sys.argv), exc_info=exc)
    finally:
        bug.removeHandler(handler)
        handler.close()
    return f"traceback in {log_file}; please report it"


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
