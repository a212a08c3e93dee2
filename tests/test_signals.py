"""Every long-running command (ui, sync, run, mcp) stops cleanly on SIGINT and SIGTERM,
even when started with SIGINT ignored, as a shell starts a background job (``cmd &``).

Real processes: a signal handler is the process's, and only a process shows what it
inherited. Each is killed in ``finally`` whatever the test saw.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.daemon.harness import app_with_root, daemon_ready, wait_until
from tests.helpers import git

STOP_S = 20.0  # generous: a passing stop takes well under a second


@pytest.fixture(params=[signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def signum(request: pytest.FixtureRequest) -> int:
    return int(request.param)


def start(*argv: str, stdin: int | None = subprocess.DEVNULL) -> subprocess.Popen[str]:
    """``memoryd argv`` with SIGINT ignored, as ``cmd &`` in a script starts it (the shell's
    ``trap '' INT`` is inherited through exec)."""
    command = 'trap "" INT; exec "$0" -m memoryd "$@"'
    return subprocess.Popen(
        ["sh", "-c", command, sys.executable, *argv],
        stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ),
    )  # fmt: skip


@pytest.fixture
def procs() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    try:
        yield started
    finally:
        for proc in started:
            if proc.poll() is None:
                proc.kill()
            proc.communicate(timeout=10)


def stop(proc: subprocess.Popen[str], signum: int) -> tuple[int, str]:
    proc.send_signal(signum)
    try:
        _out, err = proc.communicate(timeout=STOP_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"still running {STOP_S:g} s after {signal.Signals(signum).name}")
    return proc.returncode, err


def test_ui_stops_and_its_page_is_gone(procs: list[subprocess.Popen[str]], signum: int) -> None:
    proc = start("ui", "--no-open")
    procs.append(proc)
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    assert url.startswith("http://127.0.0.1:"), url
    with urllib.request.urlopen(url, timeout=10) as answer:
        assert answer.status == 200
    code, err = stop(proc, signum)
    assert (code, err.splitlines()[-1]) == (0, "memoryd ui: stopped")
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(url, timeout=5)


def test_sync_waiting_on_a_remote_stops_and_ends_its_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, procs: list[subprocess.Popen[str]],
    signum: int,
) -> None:  # fmt: skip
    _app, root = app_with_root()
    git(root, "remote", "add", "origin", "ssh://unreachable.example/memory.git")
    started, ssh = tmp_path / "ssh-started", tmp_path / "ssh"
    ssh.write_text(f"#!/bin/sh\necho $$ > {started}.tmp && mv {started}.tmp {started}\n"
                   "exec sleep 100\n")  # fmt: skip
    ssh.chmod(0o755)
    monkeypatch.setenv("GIT_SSH_COMMAND", str(ssh))
    proc = start("sync")
    procs.append(proc)
    assert wait_until(started.exists, 60), "sync never reached the remote"
    code, err = stop(proc, signum)
    name = signal.Signals(signum).name
    assert (code, err.splitlines()[-1]) == (128 + signum, f"memoryd: stopped by {name}")
    ssh_pid = int(started.read_text())
    assert wait_until(lambda: not Path(f"/proc/{ssh_pid}").exists(), 10), "ssh left running"


def test_run_stops(tmp_path: Path, procs: list[subprocess.Popen[str]], signum: int) -> None:
    app, _root = app_with_root()
    proc = start("run")
    procs.append(proc)
    assert wait_until(lambda: daemon_ready(app, proc.pid)), "daemon not ready"
    code, err = stop(proc, signum)
    assert code == 0, err
    assert "memoryd stopped" in err


def test_mcp_stops(procs: list[subprocess.Popen[str]], signum: int) -> None:
    pytest.importorskip("mcp")
    proc = start("mcp", stdin=subprocess.PIPE)
    procs.append(proc)
    assert proc.stdin is not None and proc.stdout is not None
    hello = {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-03-26", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "1"}},
    }  # fmt: skip
    proc.stdin.write(json.dumps(hello) + "\n")
    proc.stdin.flush()
    answer = json.loads(proc.stdout.readline())
    assert answer["id"] == 1 and "result" in answer
    code, err = stop(proc, signum)  # the client still holds stdin open
    assert code in (0, 128 + signum), err
    assert "Traceback" not in err
