"""The ``memoryd`` command: parses, dispatches, prints. The work lives in the library.

Exit codes: 0 success, 1 a problem the user must act on, 2 usage errors, 130 stopped by
SIGINT and 143 by SIGTERM (a command that handles its stop, ``ui`` and ``run``, exits 0).
A long-running command (its parser sets ``stoppable``) stops on SIGINT and SIGTERM
whatever it inherited: a shell starts a background job with SIGINT ignored, and ``kill
-INT`` then left ``memoryd ui`` serving with a live token.
Every :class:`MemorydError` is handled here, once; any other exception is a bug:
its traceback goes to the log file and the user gets a one-line pointer. With
``--json`` every error is also a JSON object on stdout (``{"error", "hint", "exit"}``),
so a script never parses prose. A command line argparse rejects gets the usage of
the command it names (not the top level's) and, for a mistyped option, the closest one.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import logging
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from types import FrameType
from typing import NoReturn, TextIO

from memoryd import __version__
from memoryd.app import App
from memoryd.commands import describe, register_commands
from memoryd.errors import MemorydError

log = logging.getLogger("memoryd")

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


def main(argv: Sequence[str] | None = None, app: App | None = None) -> int:
    entry = argv is None  # the process's entry point, not a test calling in
    argv = sys.argv[1:] if argv is None else argv
    collecting = gc.isenabled()
    gc.disable()  # start-up only builds long-lived objects: no garbage to look for
    try:
        args = parse(build_parser(argv), argv)
    except BadCommandLine as bad:
        return _bad_command_line(app, bad, wants_json(argv))
    finally:
        if entry:
            gc.freeze()  # and later collections need not walk them again
        if collecting:
            gc.enable()
    as_json = bool(getattr(args, "json", False))
    try:
        app = app or App()
    except MemorydError as exc:  # not even a working folder to start from
        sys.stderr.write(f"memoryd: error: {exc}\n")
        return _json_error(sys.stdout, as_json, exc.message, exc.hint, exc.exit_code)
    _setup_logging(args.verbose)
    try:
        if not app.cwd.is_dir():  # a removed worktree: its project, or why it is unknown
            from memoryd import workdir

            workdir.settle(app)
        with stop_signals(getattr(args, "stoppable", False)):
            code: int = args.handler(app, args)
        return code
    except MemorydError as exc:
        app.err.write(f"memoryd: error: {exc}\n")
        return _json_error(app.out, as_json, exc.message, exc.hint, exc.exit_code)
    except Stopped as stop:
        name = signal.Signals(stop.signum).name
        app.err.write(f"memoryd: stopped by {name}\n")
        return _json_error(app.out, as_json, f"stopped by {name}", None, 128 + stop.signum)
    except KeyboardInterrupt:
        app.err.write("memoryd: interrupted\n")
        return _json_error(app.out, as_json, "interrupted", None, 130)
    except Exception as exc:  # a bug: keep the traceback, tell the user where
        state = machine_state(exc)
        if state is not None:  # not a bug: the machine's state, with its fix
            message, hint = state
            app.err.write(f"memoryd: error: {message}\n  hint: {hint}\n")
            return _json_error(app.out, as_json, message, hint, 1)
        where = _log_bug(app, exc)
        message = f"internal error: {type(exc).__name__}: {exc}"
        app.err.write(f"memoryd: {message} ({where})\n")
        return _json_error(app.out, as_json, message, where, 1)


class Stopped(KeyboardInterrupt):
    """SIGINT or SIGTERM reached a long-running command: it unwinds as from Ctrl-C."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def stop_signals(wanted: bool) -> Iterator[None]:
    """SIGINT and SIGTERM raise :class:`Stopped` in the block, whatever was inherited
    (ignored, in a background job), so the command's ``finally`` blocks run; restored
    after. Only in the main thread, where Python runs signal handlers."""
    if not wanted or threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: FrameType | None) -> None:
        raise Stopped(signum)

    before = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def as_error(app: App, exc: Exception) -> MemorydError:
    """What :func:`main` reports for ``exc``, as an error: the machine's state with its fix,
    or a bug (its traceback logged, as main does). For a hook, which answers with the
    reason and exit 0 rather than failing the user's turn."""
    if isinstance(exc, MemorydError):
        return exc
    state = machine_state(exc)
    if state is not None:
        return MemorydError(*state)
    where = _log_bug(app, exc)
    return MemorydError(f"internal error: {type(exc).__name__}: {exc}", hint=where)


def machine_state(exc: BaseException) -> tuple[str, str] | None:
    """The one-line error and its fix for a failure that is the machine's state, not a
    bug: a full disk or quota (an OSError, or SQLite's own words), a read-only file system,
    a path memoryd may not write. None for any other failure. Every file memoryd writes is
    replaced whole, so the command stopped with nothing half-written."""
    import errno

    stopped = "the command stopped before it finished"
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"{exc.strerror}: {stopped}", FREE_SPACE
    if type(exc).__name__ == "OperationalError" and "disk is full" in str(exc):
        return f"{exc}: {stopped}", FREE_SPACE
    if not isinstance(exc, OSError) or not exc.filename:
        return None
    gone = _missing_target(exc.filename)
    if gone is not None and exc.errno in (errno.EEXIST, errno.ENOENT):
        # a folder linked to a drive that is not mounted (~/.cache on an external disk)
        hint = f"mount or create {gone} (or remove the link), then run it again"
        return f"{exc.filename} is a link to {gone}, which does not exist: {stopped}", hint
    if exc.errno == errno.EROFS:
        hint = (
            "memoryd must write there: remount it read-write (or move that folder), "
            "then run it again"
        )
    elif exc.errno in (errno.EACCES, errno.EPERM):
        hint = "memoryd cannot use it: fix its permissions (ls -ld shows them), then run it again"
    else:
        return None
    return f"{exc.strerror}: {exc.filename}: {stopped}", hint


FREE_SPACE = "free some space ('df -h' shows which disk), then run it again"


def _missing_target(name: object) -> str | None:
    """The target of ``name`` when it is a symbolic link to nothing (None otherwise)."""
    import os

    if not isinstance(name, str) or not os.path.islink(name) or os.path.exists(name):
        return None
    return os.readlink(name)


def parse(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace:
    """``argv`` parsed; an unknown option is the named command's error, with a suggestion."""
    args, extra = parser.parse_known_args(argv)
    if extra:
        command = command_parser(parser, getattr(args, "command", None)) or parser
        unknown = " ".join(extra)
        raise BadCommandLine(
            command, f"unrecognized arguments: {unknown}", closest_option(command, extra)
        )
    return args


def command_parser(parser: argparse.ArgumentParser, name: str | None) -> Parser | None:
    """The sub-parser of command ``name`` (None when there is none)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and name in action.choices:
            found = action.choices[name]
            return found if isinstance(found, Parser) else None
    return None


def closest_option(parser: argparse.ArgumentParser, extra: Sequence[str]) -> str:
    """'did you mean --json?' for the first unknown option that resembles a known one."""
    import difflib

    known = [s for action in parser._actions for s in action.option_strings]
    for word in extra:
        if word.startswith("-"):
            close = difflib.get_close_matches(word.split("=", 1)[0], known, n=1, cutoff=0.6)
            if close:
                return f"did you mean {close[0]}? ({parser.prog} -h lists every option)"
    return f"{parser.prog} -h lists every option"


def wants_json(argv: Sequence[str]) -> bool:
    words = list(argv)
    return "--json" in (words[: words.index("--")] if "--" in words else words)


def _bad_command_line(app: App | None, bad: BadCommandLine, as_json: bool) -> int:
    err = app.err if app is not None else sys.stderr
    out = app.out if app is not None else sys.stdout
    err.write(bad.parser.format_usage())
    err.write(f"{bad.parser.prog}: error: {bad.message}\n")
    if bad.hint:
        err.write(f"  hint: {bad.hint}\n")
    return _json_error(out, as_json, bad.message, bad.hint, 2)


def _json_error(out: TextIO, as_json: bool, message: str, hint: str | None, code: int) -> int:
    """With --json, the error as one JSON object on stdout too; returns the exit code."""
    if as_json:
        import json

        out.write(json.dumps({"error": message, "hint": hint, "exit": code}, ensure_ascii=False))
        out.write("\n")
    return code


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
        from memoryd.fsutil import private_file

        private_file(log_file)
        handler = logging.FileHandler(log_file, encoding="utf-8", errors="backslashreplace")
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
