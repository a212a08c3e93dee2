"""The ``memoryd`` command: parses, dispatches, prints. The work lives in the library.

Exit codes: 0 success, 1 a problem the user must act on, 2 usage errors, 130 stopped by
SIGINT and 143 by SIGTERM (a command that handles its stop, ``ui`` and ``run``, exits 0).
A long-running command (its parser sets ``stoppable``) stops on SIGINT and SIGTERM
whatever it inherited: a shell starts a background job with SIGINT ignored, and ``kill
-INT`` then left ``memoryd ui`` serving with a live token.
Every :class:`MemorydError` is handled here, once; any other exception is the machine's
state or a bug (:mod:`memoryd.failure` says which): a bug's traceback goes to the log file
and the user gets a one-line pointer. With
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
from typing import TextIO

from memoryd.app import App
from memoryd.commands import BadCommandLine, Parser, build_parser
from memoryd.errors import MemorydError
from memoryd.failure import log_bug, machine_state

log = logging.getLogger("memoryd")


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
        where = log_bug(app, exc)
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


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
