"""The real agent clients, installed by ``npm ci`` into ``tests/e2e/node/``, and how to run them.

``install()`` runs ``npm ci`` from the committed lock file only when the lock file
changed since the last install (its SHA-256 is stamped into ``node_modules/``), so a
re-run costs nothing. Every client runs with a test HOME, the agent markers of the
process that runs pytest removed (a developer running the suite from inside Claude
Code must not make memoryd believe the tests are agent calls), telemetry and
update checks off, and a fake API key.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

NODE_DIR = Path(__file__).parent / "node"
LOCK = NODE_DIR / "package-lock.json"
STAMP = NODE_DIR / "node_modules" / ".memoryd-lock-sha256"
BIN = NODE_DIR / "node_modules" / ".bin"
REPO = Path(__file__).resolve().parents[2]
INTEGRATIONS = REPO / "src" / "memoryd" / "integrations"

# Set by the clients for the commands they run; never inherited from the test runner.
AGENT_MARKERS = ("CLAUDECODE", "OPENCODE", "AGENT", "AI_AGENT")
AGENT_PREFIXES = ("CLAUDE_CODE_", "OPENCODE_", "ANTHROPIC_", "OPENAI_", "CLAUDE_")

QUIET = {
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_BUG_COMMAND": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    "NO_COLOR": "1",
}


class NodeMissing(Exception):
    """node or npm is not on PATH: the e2e suite cannot run here."""


def lock_digest() -> str:
    return hashlib.sha256(LOCK.read_bytes()).hexdigest()


def install() -> Path:
    """``npm ci`` into tests/e2e/node unless the stamped lock digest is current; the bin dir."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        raise NodeMissing("node and npm are needed for the end-to-end tests (tests/e2e)")
    digest = lock_digest()
    with open(NODE_DIR / ".install.lock", "w") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)  # two pytest runs in one checkout install once
        if STAMP.exists() and STAMP.read_text().strip() == digest and (BIN / "claude").exists():
            return BIN
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=NODE_DIR, capture_output=True, text=True, timeout=900, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"npm ci failed in {NODE_DIR}:\n{done.stdout}\n{done.stderr}")
        STAMP.write_text(digest + "\n")
    return BIN


def client_env(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """os.environ (already isolated by the autouse fixture) without any agent's markers."""
    env = {
        k: v for k, v in os.environ.items()
        if k not in AGENT_MARKERS and not k.startswith(AGENT_PREFIXES)
    }  # fmt: skip
    env.update(QUIET)
    env["HOME"] = str(home)
    # memoryd itself: the venv's console script, first on PATH, as a user's install would be
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.update(extra or {})
    return env


@dataclass(frozen=True)
class Client:
    bin_dir: Path
    env: dict[str, str]
    cwd: Path

    def run(
        self, name: str, *args: str, timeout: float = 180, input: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run one client in a session of its own, then end whatever it left running.

        A client tears down its own process group when it exits (and leaves MCP servers
        behind when it is killed); in pytest's group that would end the test run itself.
        """
        env = {**self.env, "PWD": str(self.cwd)}  # OpenCode takes its folder from $PWD
        command = [str(self.bin_dir / name), *args]
        proc = subprocess.Popen(
            command, cwd=self.cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, start_new_session=True,
        )  # fmt: skip
        try:
            out, err = proc.communicate(input if input is not None else "", timeout=timeout)
        finally:
            _end_group(proc.pid)
            if proc.poll() is None:
                proc.wait(timeout=10)
        return subprocess.CompletedProcess(command, proc.returncode, out, err)


    def converse(
        self, name: str, *args: str, inputs: list[str], answered: str, timeout: float = 300
    ) -> subprocess.CompletedProcess[str]:
        """Run one client and type ``inputs`` one at a time: each after the client printed
        a line holding ``answered`` for the one before (a client reading its stdin while a
        turn runs queues what arrives and may take two prompts as one turn)."""
        env = {**self.env, "PWD": str(self.cwd)}
        command = [str(self.bin_dir / name), *args]
        proc = subprocess.Popen(
            command, cwd=self.cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, start_new_session=True,
        )  # fmt: skip
        timer = threading.Timer(timeout, _end_group, (proc.pid,))
        timer.start()
        lines: list[str] = []
        try:
            assert proc.stdin is not None and proc.stdout is not None
            for text in inputs:
                proc.stdin.write(text)
                proc.stdin.flush()
                for line in proc.stdout:
                    lines.append(line)
                    if answered in line:
                        break
            proc.stdin.close()
            lines += proc.stdout.readlines()
            err = proc.stderr.read() if proc.stderr is not None else ""
            proc.wait(timeout=30)
        finally:
            timer.cancel()
            _end_group(proc.pid)
            if proc.poll() is None:
                proc.wait(timeout=10)
        return subprocess.CompletedProcess(command, proc.returncode, "".join(lines), err)


def _end_group(pgid: int) -> None:
    """SIGKILL what is left of the process group this harness started (by its id)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def version(bin_dir: Path, name: str) -> str:
    done = subprocess.run(
        [str(bin_dir / name), "--version"], capture_output=True, text=True, timeout=60,
        check=False, env=client_env(Path(os.environ.get("HOME", "/tmp"))),
    )  # fmt: skip
    return done.stdout.strip() or done.stderr.strip()
