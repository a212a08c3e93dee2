"""Helpers shared by the tests: the CLI (in this process, or a real one), git in a folder."""

from __future__ import annotations

import contextlib
import io
import logging
import os
import pty
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

# Commands that only a real process can run: the daemon (signals, threads that outlive the
# call) and the MCP server (its stdio is the protocol).
OWN_PROCESS = frozenset({"run", "mcp"})
CLI_ENV = "MEMORYD_TEST_CLI"  # "process": every run_cli starts a real process (to compare)


def run_cli(
    *args: str,
    cwd: Path | None = None,
    input: str | None = None,
    timeout: float = 60,
    process: bool = False,
) -> subprocess.CompletedProcess[str]:
    """Run the ``memoryd`` CLI: ``cli.main(argv, app)`` in this process by default.

    The environment is os.environ (as the autouse fixture set it), ``cwd`` is the working
    folder, stdin/stdout/stderr are captured. ``process=True`` (and the commands in
    :data:`OWN_PROCESS`) run ``python -m memoryd`` in a subprocess instead: for start-up,
    the process's exit code and the real daemon.
    """
    if process or OWN_PROCESS.intersection(args[:1]) or os.environ.get(CLI_ENV) == "process":
        return run_cli_process(*args, cwd=cwd, input=input, timeout=timeout)
    return _in_process(list(args), cwd, input)


def run_cli_process(
    *args: str, cwd: Path | None = None, input: str | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run the real ``memoryd`` CLI in a subprocess (environment from os.environ)."""
    return subprocess.run(
        [sys.executable, "-m", "memoryd", *args],
        cwd=cwd,
        input=input,
        capture_output=True,
        text=True,
        errors="surrogateescape",  # input may hold bytes that are not UTF-8, as a pipe may
        timeout=timeout,
        check=False,
    )


def _in_process(
    argv: list[str], cwd: Path | None, input: str | None
) -> subprocess.CompletedProcess[str]:
    from memoryd.app import App
    from memoryd.cli import main

    out, err = io.StringIO(), io.StringIO()
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    here = Path.cwd()
    stdin = sys.stdin
    for handler in handlers:  # main() binds a fresh stderr handler to ``err``
        if getattr(handler, "_memoryd_cli", False):
            root.removeHandler(handler)
    try:
        os.chdir(cwd or here)
        raw = io.BytesIO((input or "").encode("utf-8", "surrogateescape"))
        sys.stdin = io.TextIOWrapper(raw, encoding="utf-8")  # with .buffer, as a real stdin
        app = App(env=dict(os.environ), cwd=Path.cwd(), out=out, err=err)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv, app)
            except SystemExit as exc:  # argparse: usage errors, --help, --version
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    finally:
        sys.stdin = stdin
        os.chdir(here)
        for handler in list(root.handlers):
            if handler not in handlers:
                root.removeHandler(handler)
        for handler in handlers:
            if handler not in root.handlers:
                root.addHandler(handler)
        root.setLevel(level)
    return subprocess.CompletedProcess(["memoryd", *argv], code, out.getvalue(), err.getvalue())


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo`` and return its stdout (raises on failure)."""
    done = subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout


class WaitingGit:
    """A real git kept waiting in its pager or editor (see :func:`waiting_git`)."""

    def __init__(self, proc: subprocess.Popen[bytes], done: Path) -> None:
        self.proc, self.pid, self._done = proc, proc.pid, done

    def finish(self, timeout: float = 10.0) -> int:
        """Quit the pager or editor (it exits 0: a commit's empty message aborts it) and
        wait for git to end; its exit code."""
        self._done.touch()
        return self.proc.wait(timeout=timeout)


@contextlib.contextmanager
def waiting_git(repo: Path, *args: str, timeout: float = 10.0) -> Iterator[WaitingGit]:
    """A real ``git ARGS`` in ``repo`` kept waiting in its pager and its editor (on a
    terminal of its own, as a person's: git pages only to one) until it is finished or the
    block ends, when it is killed with its pager or editor (30 s at most, left alone).
    Yields once the wait has begun."""
    scratch = Path(tempfile.mkdtemp())
    began, done = scratch / "began", scratch / "done"
    wait = (
        f"touch '{began}'; i=0; while [ ! -e '{done}' ] && [ $i -lt 600 ]; do sleep 0.05; "
        "i=$((i+1)); done; true"
    )  # git adds the file to edit: "$@", which true ignores
    main, tty = pty.openpty()
    proc = subprocess.Popen(
        ["git", *args], cwd=repo, stdin=tty, stdout=tty, stderr=tty,
        env={**os.environ, "GIT_PAGER": wait, "GIT_EDITOR": wait}, start_new_session=True,
    )  # fmt: skip
    os.close(tty)
    try:
        deadline = time.monotonic() + timeout
        while not began.exists():
            assert proc.poll() is None, f"git {' '.join(args)} ended: {proc.returncode}"
            assert time.monotonic() < deadline, f"git {' '.join(args)} did not wait in {timeout} s"
            time.sleep(0.02)
        yield WaitingGit(proc, done)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=timeout)
        os.close(main)
        shutil.rmtree(scratch, ignore_errors=True)


def build_wheel(tmp_path: Path) -> Path:
    """memoryd's wheel, built offline from a copy of the source (pyproject, README, src/):
    what pipx or uv builds from a git URL or a folder."""
    repo = Path(__file__).resolve().parents[1]
    source = tmp_path / "source"
    (source / "src").mkdir(parents=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(repo / name, source / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    shutil.copytree(repo / "src/memoryd", source / "src/memoryd", ignore=ignore)
    build = "import setuptools.build_meta as b, sys; print(b.build_wheel(sys.argv[1]))"
    done = subprocess.run(
        [sys.executable, "-c", build, str(tmp_path / "dist")],
        cwd=source, capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return tmp_path / "dist" / done.stdout.strip().splitlines()[-1]
