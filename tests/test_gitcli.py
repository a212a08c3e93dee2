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
