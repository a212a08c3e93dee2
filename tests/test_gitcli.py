"""The one git runner: the environment each caller chose, and a timeout that kills git's children."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from memoryd import gitcli
from tests.helpers import git


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = tmp_path / "repo 仓库"
    folder.mkdir()
    git(folder, "init", "-q")
    return folder


def index_path(repo: Path, env: dict[str, str]) -> str:
    done = gitcli.run(["rev-parse", "--git-path", "index"], cwd=repo, env=env, timeout=30)
    assert done.code == 0, done.err
    return done.text.strip()


def test_sync_env_ignores_a_hooks_index_and_hook_env_honours_it(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = str(tmp_path / "commit-in-progress.index")
    monkeypatch.setenv("GIT_INDEX_FILE", other)
    monkeypatch.setenv("GIT_DIR", str(repo / ".git"))
    assert index_path(repo, gitcli.repo_env()) == ".git/index"
    assert index_path(repo, gitcli.hook_env()) == other


def test_a_timeout_kills_git_and_its_children(repo: Path, tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    nap = f"!echo $$ > '{pid_file}'; exec sleep 30"
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        gitcli.run(["-c", f"alias.nap={nap}", "nap"], cwd=repo, env=gitcli.repo_env(), timeout=1)
    assert time.monotonic() - started < 10
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie nobody reaped yet is gone for our purpose
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state != "Z"


def test_git_never_prompts_and_reports_its_own_error(repo: Path) -> None:
    done = gitcli.run(
        ["rev-parse", "--verify", "nope"], cwd=repo, env=gitcli.repo_env(), timeout=30
    )
    assert done.code == 128
    assert done.first_error == "fatal: Needed a single revision"


def test_no_network_ends_a_fetch_waiting_on_a_remote_and_refuses_new_ones(
    repo: Path, tmp_path: Path
) -> None:
    import threading

    started, ssh = tmp_path / "ssh-started", tmp_path / "ssh"
    ssh.write_text(f"#!/bin/sh\ntouch '{started}'\nexec sleep 100\n")
    ssh.chmod(0o755)
    env = gitcli.repo_env({"GIT_SSH_COMMAND": str(ssh)})
    git(repo, "remote", "add", "origin", "ssh://unreachable.example/x.git")
    answers: list[gitcli.Done] = []
    fetch = threading.Thread(
        target=lambda: answers.append(
            gitcli.run(["fetch", "origin"], cwd=repo, env=env, timeout=60)
        )
    )
    fetch.start()
    deadline = time.monotonic() + 30
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    began = time.monotonic()
    with gitcli.no_network():
        fetch.join(timeout=30)
        assert time.monotonic() - began < 10
        push = gitcli.run(["push", "origin", "HEAD"], cwd=repo, env=env, timeout=60)
        local = gitcli.run(["rev-parse", "--git-dir"], cwd=repo, env=env, timeout=30)
    assert answers[0].code != 0
    assert answers[0].err.splitlines()[-1] == gitcli.STOPPING
    assert (push.code, push.err) == (128, gitcli.STOPPING + "\n")
    assert (local.code, local.text) == (0, ".git\n")  # only the network waits are cut short
    after = gitcli.run(["ls-remote", "origin"], cwd=repo, env={**env, "GIT_SSH_COMMAND": "false"},
                       timeout=30)  # fmt: skip
    assert gitcli.STOPPING not in after.err  # the block is over: git runs again
