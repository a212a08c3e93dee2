"""The one way memoryd runs ``git``: :func:`run`, with the caller's environment and timeout.

Subprocess git rather than GitPython: every call is one visible command whose exit code
and locking behaviour are git's own, which is what makes the sync engine's safety
argument checkable, and the recall path never pays for a git library's import.

Every caller (sync, doctor, the pre-commit hook, ``memoryd scan --staged``, inspect's
checks) comes through here and says which environment git gets, because they differ on
purpose:

- :func:`repo_env` (sync, inspect's checks): the root's own repository and index.
  ``GIT_DIR``, ``GIT_WORK_TREE``, ``GIT_INDEX_FILE`` and ``GIT_LITERAL_PATHSPECS`` are
  dropped, so a sync started from inside another repository's hook, or a shell that
  exported them, still commits the root and never the index of the commit in progress.
- :func:`hook_env` (the hook and ``scan --staged``): the environment as git gave it. A
  pre-commit hook runs with ``GIT_INDEX_FILE`` pointing at the index being committed
  (``git commit -a`` and partial commits use a temporary one), and the scan must read
  exactly that.
- doctor passes the environment it diagnoses (the shell's, or the service's).

git never prompts (``GIT_TERMINAL_PROMPT=0``, no stdin), runs in its own session, and
when the timeout passes it is killed with its children (ssh, a credential helper) and
``subprocess.TimeoutExpired`` is raised. A missing git raises ``FileNotFoundError``.

A stopping daemon must not wait on a remote that does not answer (each fetch, push and
ls-remote may take its whole timeout, two minutes, and systemd kills a unit that takes
30 s to stop): inside :func:`no_network` those commands end at once, as failures that say so.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

BATCH_SSH = "ssh -o BatchMode=yes"
NOT_OURS = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_LITERAL_PATHSPECS")
NETWORK = ("fetch", "push", "ls-remote", "pull", "clone")  # they may wait minutes on a remote
STOPPING = "fatal: memoryd is stopping, so it stopped waiting for the remote"
LOCAL_TIMEOUT_S = 60.0  # a git that needs no remote
NO_ASKPASS = "false"  # git's askpass: it fails, so git says "could not read Username for ..."


class GitError(Exception):
    """A git command failed; ``stderr`` is git's own explanation."""

    def __init__(self, args: Sequence[str], code: int, stderr: str) -> None:
        super().__init__(f"git {' '.join(args)} exited {code}: {stderr.strip()[:500]}")
        self.args_ = tuple(args)
        self.code = code
        self.stderr = stderr


@dataclass(frozen=True)
class Done:
    """A finished git command: exit code, stdout bytes, stderr text; ``stopped``: a network
    command that :func:`no_network` ended or refused (its error ends with :data:`STOPPING`)."""

    code: int
    out: bytes
    err: str
    stopped: bool = False

    @property
    def text(self) -> str:
        return self.out.decode("utf-8", "replace")

    @property
    def first_error(self) -> str:
        lines = [line for line in self.err.splitlines() if line.strip()]
        return lines[0].strip() if lines else f"exit {self.code}"


def repo_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment without what points git elsewhere; C messages, no pager."""
    env = {k: v for k, v in os.environ.items() if k not in NOT_OURS}
    env.update({"LC_ALL": "C", "GIT_PAGER": "cat"})
    env.update(extra or {})
    return env


def net_env(ssh_command: str | None, askpass: str | None = None) -> dict[str, str]:
    """What a git that talks to a remote adds to :func:`repo_env`, so that nothing prompts.

    git's ssh is ``GIT_SSH_COMMAND``, else ``core.sshCommand`` (``ssh_command``), else
    ``GIT_SSH``, else ``ssh``. memoryd's batch-mode ssh goes in only in place of plain
    ``ssh``: as ``GIT_SSH_COMMAND`` it would beat the user's ``core.sshCommand`` or
    ``GIT_SSH`` (a key of its own, plink), and the push that works by hand would fail in
    memoryd. The user's own command still gets no terminal to prompt on (its own session, no
    stdin) and no askpass window (``SSH_ASKPASS_REQUIRE=never`` unless the user set it).

    An https remote that wants a password no credential helper has: git asks
    ``GIT_ASKPASS``, else ``core.askPass`` (``askpass``), else ``SSH_ASKPASS``, a desktop's
    ssh-add dialog (ksshaskpass, seahorse) that ``GIT_TERMINAL_PROMPT=0`` does not stop. The
    daemon opened that window on every cycle. An askpass of the user's own still runs (one
    that prints a token); otherwise git's asks :data:`NO_ASKPASS`, which answers nothing.
    """
    env: dict[str, str] = {}
    if not (os.environ.get("GIT_ASKPASS") or askpass):
        env["GIT_ASKPASS"] = NO_ASKPASS
    if os.environ.get("GIT_SSH_COMMAND") or ssh_command or os.environ.get("GIT_SSH"):
        if "SSH_ASKPASS_REQUIRE" not in os.environ:
            env["SSH_ASKPASS_REQUIRE"] = "never"
        return env
    return {**env, "GIT_SSH_COMMAND": BATCH_SSH}


def hook_env() -> dict[str, str]:
    """This process's environment as it is (``GIT_INDEX_FILE`` and all)."""
    return dict(os.environ)


def run(
    args: Sequence[str],
    *,
    cwd: Path | None,
    env: Mapping[str, str],
    timeout: float | None,
    input: bytes | None = None,
) -> Done:
    """``git args`` in ``cwd`` with ``env`` (plus no prompts); ``timeout`` None: no limit."""
    network = bool(args) and args[0] in NETWORK
    with _gate.lock:
        if network and _gate.closed:
            return Done(128, b"", STOPPING + "\n", stopped=True)
        proc = subprocess.Popen(
            ["git", *args],
            cwd=cwd,
            env={**env, "GIT_TERMINAL_PROMPT": "0"},
            stdin=subprocess.DEVNULL if input is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        if network:
            _gate.running.add(proc)
    try:
        out, err = proc.communicate(input, timeout=timeout)
    except BaseException:  # the timeout, or Ctrl-C: git and its children go too
        _kill(proc)
        raise
    finally:
        with _gate.lock:
            _gate.running.discard(proc)
            ended = proc in _gate.ended
            _gate.ended.discard(proc)
    text = err.decode("utf-8", "replace")
    if ended:  # the last line is what callers quote
        text += STOPPING + "\n"
    return Done(proc.returncode, out, text, stopped=ended and proc.returncode != 0)


def init_repo(folder: Path) -> bool:
    """``git init`` ``folder`` unless it is already inside a work tree; True when created.

    Here, beside the runner, because ``memoryd init`` and the sync engine both need it:
    in ``sync/`` it made ``init/`` depend on the package that syncs what it sets up.
    """
    inside = ["rev-parse", "--is-inside-work-tree"]
    quiet = repo_env({"GIT_OPTIONAL_LOCKS": "0"})
    if run(inside, cwd=folder, env=quiet, timeout=LOCAL_TIMEOUT_S).code == 0:
        return False
    done = run(["init", "-q"], cwd=folder, env=repo_env(), timeout=LOCAL_TIMEOUT_S)
    if done.code != 0:
        raise GitError(("init", "-q"), done.code, done.err)
    return True


class _Gate:
    """The network commands running now, and whether new ones may start."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.closed = 0  # how many no_network() blocks are open
        self.running: set[subprocess.Popen[bytes]] = set()
        self.ended: set[subprocess.Popen[bytes]] = set()  # ...that no_network() ended


_gate = _Gate()


@contextlib.contextmanager
def no_network() -> Iterator[None]:
    """End every fetch, push and ls-remote running now and fail new ones at once (their
    error ends with :data:`STOPPING`), until the block ends.

    SIGTERM, not SIGKILL: git then removes its lock files, and ssh its connection.
    """
    with _gate.lock:
        _gate.closed += 1
        ending = list(_gate.running)
        _gate.ended.update(ending)
    for proc in ending:
        if proc.returncode is None:  # not reaped yet, so its group id is still its own
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
    try:
        yield
    finally:
        with _gate.lock:
            _gate.closed -= 1


def _kill(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()
