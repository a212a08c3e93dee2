"""The pre-commit hook in real repositories: blocks secrets, keeps foreign hooks."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from memoryd.errors import Refused
from memoryd.secrets import hook
from tests.helpers import git, run_cli
from tests.secrets.fake_tokens import github


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir(parents=True)
    git(repo, "init", "-q")
    return repo


def _commit(repo: Path, name: str, content: str) -> subprocess.CompletedProcess[str]:
    (repo / name).write_text(content)
    git(repo, "add", name)
    return subprocess.run(
        ["git", "commit", "-q", "-m", f"add {name}"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )


def test_hook_blocks_a_staged_secret_and_lets_clean_commits_through(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    done = run_cli("hook", "install", "--repo", str(repo))
    assert done.returncode == 0, done.stderr
    assert "installed" in done.stdout
    token = github("hook1")
    blocked = _commit(repo, "note.md", f"token: {token}\n")
    assert blocked.returncode != 0
    assert "note.md:1:8: github-token" in blocked.stdout + blocked.stderr
    assert token not in blocked.stdout + blocked.stderr
    git(repo, "reset", "-q")
    assert _commit(repo, "clean.md", "nothing secret here\n").returncode == 0


def test_hook_scans_the_index_not_the_working_tree(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    hook.install(repo)
    (repo / "a.md").write_text("clean\n")
    git(repo, "add", "a.md")
    (repo / "a.md").write_text(f"token: {github('hook2')}\n")  # unstaged change
    done = subprocess.run(
        ["git", "commit", "-q", "-m", "a"], cwd=repo, capture_output=True, check=False
    )
    assert done.returncode == 0


def test_foreign_hook_is_kept_run_and_restored(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    hooks = repo / ".git" / "hooks"
    foreign = hooks / "pre-commit"
    foreign.write_text('#!/bin/sh\necho legacy-ran >> "$(git rev-parse --git-dir)/legacy.log"\n')
    foreign.chmod(0o755)
    result = hook.install(repo)
    assert result.action == "installed" and result.legacy == hooks / "pre-commit.legacy"
    assert _commit(repo, "a.md", "clean\n").returncode == 0
    assert (repo / ".git" / "legacy.log").read_text() == "legacy-ran\n"
    assert hook.install(repo).action == "unchanged"
    removed = hook.uninstall(repo)
    assert removed.action == "removed" and removed.legacy == foreign
    assert "legacy-ran" in foreign.read_text() and not (hooks / "pre-commit.legacy").exists()


_CHAINING_HOOK = """#!/bin/sh
# what `pre-commit install` writes in migration mode: run pre-commit.legacy, then itself
legacy="$(dirname "$0")/pre-commit.legacy"
if [ -x "$legacy" ]; then "$legacy" "$@" || exit $?; fi
echo framework-ran >> "$(git rev-parse --git-dir)/framework.log"
"""


def _commit_in_own_group(repo: Path, timeout: float) -> tuple[int, str]:
    """``git commit`` in a process group of its own, every process of which is killed after
    (a hook that runs itself forks until the group is gone, not only until git is)."""
    proc = subprocess.Popen(
        ["git", "commit", "-q", "-m", "note"],
        cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,
    )  # fmt: skip
    try:
        out, _ = proc.communicate(timeout=timeout)
        return proc.returncode, out
    except subprocess.TimeoutExpired:
        return -1, "timed out"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()  # reaped, so the group is gone once its last orphan is
        while True:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                break
            time.sleep(0.1)


def test_hook_moved_to_legacy_by_another_installer_runs_once(tmp_path: Path) -> None:
    """``pre-commit install`` after ``memoryd hook install`` moves memoryd's hook to
    pre-commit.legacy and chains to it; the hook then named itself as its legacy hook and ran
    itself until git was killed (a commit that never ended)."""
    repo = _repo(tmp_path)
    hooks = repo / ".git" / "hooks"
    hook.install(repo)
    (hooks / "pre-commit").replace(hooks / "pre-commit.legacy")  # the framework moves ours aside
    (hooks / "pre-commit").write_text(_CHAINING_HOOK)
    (hooks / "pre-commit").chmod(0o755)
    (repo / "note.md").write_text(f"token: {github('hook-chain')}\n")
    git(repo, "add", "note.md")
    code, out = _commit_in_own_group(repo, timeout=10)
    assert code == 1
    assert "note.md:1:8: github-token" in out
    git(repo, "reset", "-q")
    assert _commit(repo, "clean.md", "nothing secret here\n").returncode == 0
    assert (repo / ".git" / "framework.log").read_text() == "framework-ran\n"


def test_the_pre_commit_frameworks_hook_is_left_alone_with_the_way_to_add_memoryd(
    tmp_path: Path,
) -> None:
    """``pre-commit install`` then ``memoryd hook install`` moved the framework's hook to
    pre-commit.legacy, where it runs itself as its own legacy hook and stops every commit
    with "bug: pre-commit's script is installed in migration mode"."""
    repo = _repo(tmp_path)
    framework = repo / ".git" / "hooks" / "pre-commit"
    text = (
        "#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\n"
        "# ID: 138fd403232d2ddd5efb44317e38bf03\nexit 0\n"
    )
    framework.write_text(text)
    framework.chmod(0o755)
    done = run_cli("hook", "install", "--repo", str(repo))
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"memoryd: error: {framework} is the pre-commit framework's hook; it cannot run as "
        "pre-commit.legacy, so memoryd's hook is not installed over it\n"
        "  hint: add memoryd to .pre-commit-config.yaml instead: a 'repo: local' hook with "
        "entry 'memoryd scan' and language 'system' (see docs/secrets.md)\n"
    )
    assert framework.read_text() == text
    assert not (repo / ".git" / "hooks" / "pre-commit.legacy").exists()


def test_uninstall_finds_memoryds_hook_another_installer_moved_aside(tmp_path: Path) -> None:
    """After ``pre-commit install`` moved memoryd's hook to pre-commit.legacy, uninstall said
    the framework's hook 'is not memoryd's hook; left it alone' and memoryd's kept running."""
    repo = _repo(tmp_path)
    hooks = repo / ".git" / "hooks"
    hook.install(repo)
    (hooks / "pre-commit").replace(hooks / "pre-commit.legacy")
    (hooks / "pre-commit").write_text(_CHAINING_HOOK)
    (hooks / "pre-commit").chmod(0o755)
    done = run_cli("hook", "uninstall", "--repo", str(repo))
    assert (done.returncode, done.stdout, done.stderr) == (
        0, f"{hooks / 'pre-commit.legacy'}: removed\n", ""
    )  # fmt: skip
    assert (hooks / "pre-commit").read_text() == _CHAINING_HOOK
    assert not (hooks / "pre-commit.legacy").exists()


def test_failing_legacy_hook_still_blocks(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    foreign = repo / ".git" / "hooks" / "pre-commit"
    foreign.write_text("#!/bin/sh\nexit 3\n")
    foreign.chmod(0o755)
    hook.install(repo)
    assert _commit(repo, "a.md", "clean\n").returncode != 0


def test_uninstall_leaves_a_foreign_hook_alone(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    foreign = repo / ".git" / "hooks" / "pre-commit"
    foreign.write_text("#!/bin/sh\nexit 0\n")
    with pytest.raises(Refused, match="is not memoryd's hook"):
        hook.uninstall(repo)
    assert foreign.exists()
    assert hook.uninstall(_repo(tmp_path / "other")).action == "absent"


def test_refuses_when_core_hooks_path_is_set(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    git(repo, "config", "core.hooksPath", ".githooks")
    done = run_cli("hook", "install", "--repo", str(repo))
    assert done.returncode == 1
    assert done.stderr == (
        f"memoryd: error: core.hooksPath is set to .githooks in {repo}, so git ignores .git/hooks\n"
        "  hint: add 'memoryd scan --staged' to a pre-commit hook in that folder, or use the "
        "pre-commit framework with memoryd's .pre-commit-hooks.yaml\n"
    )
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()


def test_hook_uses_the_absolute_interpreter(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    result = hook.install(repo, python="/opt/py thon/bin/python3")
    assert "exec '/opt/py thon/bin/python3' -m memoryd scan --staged" in result.path.read_text()
    assert result.path.stat().st_mode & 0o111


def test_hook_whose_interpreter_is_gone_says_what_to_do(tmp_path: Path) -> None:
    """memoryd's venv removed or moved: every commit failed with
    '.git/hooks/pre-commit: 11: exec: /gone/bin/python: not found'."""
    repo = _repo(tmp_path)
    gone = tmp_path / "gone" / "bin" / "python"
    hook.install(repo, python=str(gone))
    done = _commit(repo, "a.md", "clean\n")
    assert done.returncode == 1
    assert done.stderr == (
        f"memoryd pre-commit hook: {gone} is gone (memoryd was removed or moved); run "
        "'memoryd hook install' here again with the memoryd you use now, or delete "
        ".git/hooks/pre-commit\n"
    )


def test_hook_outside_a_repository(tmp_path: Path) -> None:
    done = run_cli("hook", "install", "--repo", str(tmp_path))
    assert done.returncode == 1
    assert done.stderr == (
        f"memoryd: error: {tmp_path} is not inside a git repository\n  hint: pass --repo DIR\n"
    )


def test_pre_commit_framework_manifest_runs_memoryd_scan() -> None:
    import yaml

    manifest = Path(__file__).resolve().parents[2] / ".pre-commit-hooks.yaml"
    [entry] = yaml.safe_load(manifest.read_text())
    assert entry["id"] == "memoryd-scan"
    assert entry["entry"] == "memoryd scan" and entry["language"] == "python"
    assert "types" not in entry  # every staged file: a binary file's name can hold a token
