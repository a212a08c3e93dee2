"""A project root (<repo>/.memory/) commits only its own paths, never the user's staged work."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

import pytest

from memoryd.config.sections import PROJECT_SYNC, Config, RootConfig
from memoryd.paths import resolve_paths
from memoryd.roots import init_root
from memoryd.sync.commit import FEW_PATHS
from memoryd.sync.engine import sync_root
from tests.helpers import git
from tests.sync.world import memory


def make_project(tmp_path: Path) -> Path:
    repo = tmp_path / "proj"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "src").mkdir()
    (repo / "src/a.py").write_text("a = 1\n")
    (repo / "src/b.py").write_text("b = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "code")
    return repo


def test_project_root_commits_only_memory_paths(tmp_path: Path) -> None:
    repo = make_project(tmp_path)
    root = repo / ".memory"
    init_root(root)
    (root / "facts/x.md").write_text(memory("facts/x", "project fact", "x\n"))
    (repo / "src/a.py").write_text("a = 2  # staged\n")
    git(repo, "add", "src/a.py")
    (repo / "src/b.py").write_text("b = 2  # not staged\n")
    (repo / "notes.txt").write_text("untracked, not ours\n")
    staged_before = git(repo, "diff", "--cached")
    policy = dataclasses.replace(PROJECT_SYNC, commit=True)
    rc = RootConfig(path=root, scope="project", sync=policy)
    paths = resolve_paths({"MEMORYD_HOME": str(tmp_path / "home")})
    outcome = sync_root(Config(device="laptop", roots=(rc,)), paths, rc)
    assert outcome.ok and len(outcome.commits) == 1, outcome
    changed = git(repo, "show", "--name-only", "--format=", "HEAD").split()
    assert changed and all(p.startswith(".memory/") for p in changed)
    assert ".memory/facts/x.md" in changed and ".memory/.state.json" not in changed
    assert git(repo, "diff", "--cached") == staged_before  # the user's staged work, untouched
    assert git(repo, "diff", "--name-only").split() == ["src/b.py"]
    assert "?? notes.txt" in git(repo, "status", "--porcelain")
    assert git(repo, "status", "--porcelain", "--", ".memory") == ""
    assert "Memoryd-Device: laptop" in git(repo, "log", "-1", "--format=%B")
    assert outcome.action == "committed locally (pull and push are off for this root)"
    assert git(repo, "remote") == ""  # and nothing was pushed anywhere


@pytest.mark.parametrize("edits", [1, FEW_PATHS + 1])
def test_a_commit_leaves_the_users_index_at_head_with_fresh_stat_data(
    tmp_path: Path, edits: int
) -> None:
    """After memoryd commits, the user's index holds HEAD's entries for the paths it
    committed (a deleted one gone), with their stat data: 'git diff-files' (which trusts
    stat data, never the bytes) lists none, so the user's next 'git status' re-reads none.
    A few paths are refreshed by name, more through the whole index: both end the same.
    The user's staged work elsewhere stays staged."""
    repo = make_project(tmp_path)
    root = repo / ".memory"
    init_root(root)
    names = [f"facts/ü ber {n}.md" for n in range(edits)] + ["facts/gone.md"]
    for n, rel in enumerate(names):
        (root / rel).write_text(memory(f"facts/m{n}", f"m{n}", f"{n}\n"))
    policy = dataclasses.replace(PROJECT_SYNC, commit=True)
    rc = RootConfig(path=root, scope="project", sync=policy)
    config = Config(device="laptop", roots=(rc,))
    paths = resolve_paths({"MEMORYD_HOME": str(tmp_path / "home")})
    assert sync_root(config, paths, rc).ok
    (repo / "src/a.py").write_text("a = 2  # staged\n")
    git(repo, "add", "src/a.py")
    staged_before = git(repo, "diff", "--cached")
    for n, rel in enumerate(names[:-1]):
        (root / rel).write_text(memory(f"facts/m{n}", f"m{n}", f"{n} edited\n"))
    (root / "facts/gone.md").unlink()
    outcome = sync_root(config, paths, rc)
    assert outcome.ok and len(outcome.commits) == 1, outcome
    assert git(repo, "diff-files", "--name-only", "-z", "--", ".memory") == ""
    assert git(repo, "diff", "--cached", "--name-only", "--", ".memory") == ""
    assert git(repo, "diff", "--cached") == staged_before
    assert git(repo, "status", "--porcelain", "--", ".memory") == ""
    assert ".memory/facts/gone.md" not in git(repo, "ls-files", "-z", ".memory").split("\0")


def test_project_root_with_default_policy_does_nothing(tmp_path: Path) -> None:
    repo = make_project(tmp_path)
    root = repo / ".memory"
    init_root(root)
    head = git(repo, "rev-parse", "HEAD")
    rc = RootConfig(path=root, scope="project")
    paths = resolve_paths({"MEMORYD_HOME": str(tmp_path / "home")})
    outcome = sync_root(Config(device="laptop", roots=(rc,)), paths, rc)
    assert outcome.status == "disabled"
    assert git(repo, "rev-parse", "HEAD") == head


def test_project_branch_diverged_outside_memory_is_refused(tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    repo = make_project(tmp_path)
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "origin", "main")
    other = tmp_path / "other"
    subprocess.run(["git", "clone", "-q", str(remote), str(other)], check=True)
    (other / "src/a.py").write_text("a = 'other'\n")
    git(other, "commit", "-q", "-am", "other device")
    git(other, "push", "-q")
    (repo / "src/b.py").write_text("b = 'mine'\n")
    git(repo, "commit", "-q", "-am", "my code")
    root = repo / ".memory"
    init_root(root)
    rc = RootConfig(
        path=root, scope="project", sync=dataclasses.replace(PROJECT_SYNC, commit=True, pull=True)
    )
    paths = resolve_paths({"MEMORYD_HOME": str(tmp_path / "home")})
    outcome = sync_root(Config(device="laptop", roots=(rc,)), paths, rc)
    assert outcome.status == "refused"
    assert outcome.error is not None and "src/b.py" in outcome.error
    assert "b = 'mine'" in (repo / "src/b.py").read_text()
    assert not (repo / ".git/rebase-merge").exists()


def test_a_root_outside_git_is_not_synced_and_says_why(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    init_root(root)
    rc = RootConfig(path=root)
    paths = resolve_paths({"MEMORYD_HOME": str(tmp_path / "home")})
    outcome = sync_root(Config(device="laptop", roots=(rc,)), paths, rc)
    assert outcome.ok and outcome.status == "disabled" and outcome.error is None
    assert outcome.action == f"{root} is not inside a git repository, so it is not synced"
    assert outcome.hint is not None and "git init" in outcome.hint


def test_layered_root_keeps_sessions_on_this_machine(tmp_path: Path) -> None:
    root = tmp_path / "layered"
    for rel in ("global/MEMORY.md", "projects/p1/MEMORY.md", "sessions/s1/checkpoint.md"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"# {rel}\n")
    git(root, "init", "-q", "-b", "main")
    rc = RootConfig(path=root, layout="layered")
    paths = resolve_paths({"MEMORYD_HOME": str(tmp_path / "home")})
    outcome = sync_root(Config(device="laptop", roots=(rc,)), paths, rc)
    assert outcome.ok and outcome.commits
    tracked = git(root, "ls-files").split()
    assert "global/MEMORY.md" in tracked and "projects/p1/MEMORY.md" in tracked
    assert not any(p.startswith("sessions/") for p in tracked)


@pytest.mark.parametrize("mine", ["edited", "staged", "untracked"])
def test_incoming_code_over_uncommitted_work_is_refused_in_one_line(
    tmp_path: Path, mine: str
) -> None:
    """A teammate pushed src/a.py (or a new src/c.py) to the project's branch, and the user has
    that file edited, staged or untracked here: the move failed on every cycle with git's
    "Entry 'src/a.py' not uptodate. Cannot merge." and the hint "memoryd retries", and made a
    backup ref each time. Now: refused, the file named, nothing moved, and after a stash the
    next sync pulls."""
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    repo = make_project(tmp_path)
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "-u", "origin", "main")
    other = tmp_path / "teammate"
    subprocess.run(["git", "clone", "-q", str(remote), str(other)], check=True)
    theirs = "src/c.py" if mine == "untracked" else "src/a.py"
    (other / theirs).write_text("teammate = True\n")
    git(other, "add", "-A")
    git(other, "commit", "-q", "-m", "teammate")
    git(other, "push", "-q")
    (repo / theirs).write_text("my work in progress\n")
    if mine == "staged":
        git(repo, "add", theirs)
    root = repo / ".memory"
    init_root(root)
    (root / "facts/p.md").write_text(memory("facts/p", "project fact", "p\n"))
    policy = dataclasses.replace(PROJECT_SYNC, commit=True, pull=True, push=True)
    rc = RootConfig(path=root, scope="project", sync=policy)
    paths = resolve_paths({"MEMORYD_HOME": str(tmp_path / "home")})
    outcome = sync_root(Config(device="laptop", roots=(rc,)), paths, rc)
    assert (outcome.status, outcome.error, outcome.hint) == (
        "refused",
        f"the remote's new commits change {theirs} outside the memory root, where you have "
        "changes not committed",
        "stash them (git stash; memoryd pulls on its next cycle, then git stash pop), or commit "
        "them and pull yourself (git pull --rebase)",
    )
    assert (repo / theirs).read_text() == "my work in progress\n"
    assert git(repo, "for-each-ref", "refs/memoryd/backup") == ""
    git(repo, "stash", "-q", "--include-untracked")
    outcome = sync_root(Config(device="laptop", roots=(rc,)), paths, rc)
    assert outcome.ok and outcome.pushed, outcome
    assert (repo / theirs).read_text() == "teammate = True\n"
    assert "facts/p.md" in git(remote, "ls-tree", "-r", "--name-only", "main", ".memory/facts")


def bare_with_a_work_tree(tmp_path: Path) -> tuple[Path, Path]:
    """A bare clone of a project and its work tree ``feature`` beside it (git worktree add)."""
    code = make_project(tmp_path)
    bare = tmp_path / "proj.git"
    git(tmp_path, "clone", "-q", "--bare", str(code), str(bare))
    feature = tmp_path / "feature"
    git(bare, "worktree", "add", "-q", str(feature), "-b", "feature")
    return bare, feature


def test_a_sync_false_memory_stays_out_of_git_in_a_worktree_of_a_bare_repository(
    tmp_path: Path,
) -> None:
    """A bare repository with its work trees beside it (git worktree add): the project root
    is the work tree's own .memory/. memoryd wrote the block keeping a 'sync: false' memory
    out to .git/worktrees/<name>/info/exclude, which git never reads: 'git status' listed the
    private memory, and the user's next 'git add -A' committed it to the project."""
    bare, feature = bare_with_a_work_tree(tmp_path)
    root = feature / ".memory"
    init_root(root)
    (root / "facts").mkdir(exist_ok=True)
    (root / "facts/private.md").write_text(
        "---\nid: facts/private\nkind: fact\nsummary: mine alone\nsync: false\n---\nlocal\n"
    )
    (root / "facts/shared.md").write_text(memory("facts/shared", "for the team", "shared\n"))
    rc = RootConfig(path=root, scope="project", sync=dataclasses.replace(PROJECT_SYNC, commit=True))
    paths = resolve_paths({"MEMORYD_HOME": str(tmp_path / "home")})
    outcome = sync_root(Config(device="laptop", roots=(rc,)), paths, rc)
    assert outcome.ok and len(outcome.commits) == 1, outcome
    assert git(feature, "status", "--porcelain", "--", ".memory") == ""
    git(feature, "add", "-A")
    assert ".memory/facts/private.md" not in git(feature, "diff", "--cached", "--name-only")
    assert "/.memory/facts/private.md" in (bare / "info/exclude").read_text()
    assert sync_root(Config(device="laptop", roots=(rc,)), paths, rc).commits == []
    assert "/.memory/facts/private.md" in (bare / "info/exclude").read_text()


def test_a_refusing_pre_push_hook_is_found_from_a_linked_work_tree(tmp_path: Path) -> None:
    """git runs a linked work tree's hooks from the repository's hooks/ (the common dir);
    memoryd looked in .git/worktrees/<name>/hooks, did not find the hook, and its refusal
    read as "offline ... pushes when the remote is back", with the network back-off."""
    bare, feature = bare_with_a_work_tree(tmp_path)
    shared = tmp_path / "shared.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "feature", str(shared))
    git(feature, "remote", "add", "team", str(shared))
    hook = bare / "hooks/pre-push"
    hook.write_text("#!/bin/sh\necho 'memory pushes wait for review' >&2\nexit 1\n")
    hook.chmod(0o755)
    root = feature / ".memory"
    init_root(root)
    (root / "facts").mkdir(exist_ok=True)
    (root / "facts/x.md").write_text(memory("facts/x", "for the team", "x\n"))
    policy = dataclasses.replace(PROJECT_SYNC, commit=True, push=True, remote="team")
    rc = RootConfig(path=root, scope="project", sync=policy)
    paths = resolve_paths({"MEMORYD_HOME": str(tmp_path / "home")})
    outcome = sync_root(Config(device="laptop", roots=(rc,)), paths, rc, force=True)
    assert (outcome.status, outcome.error) == (
        "error",
        "the pre-push hook refused the push: memory pushes wait for review",
    )
    assert outcome.hint is not None and f"fix the hook in {bare / 'hooks'})" in outcome.hint


def test_a_stale_branch_lock_is_moved_aside_from_a_linked_work_tree(tmp_path: Path) -> None:
    """A git killed while updating the branch leaves refs/heads/<branch>.lock in the
    repository every work tree shares; memoryd looked for it in .git/worktrees/<name>/ and
    every cycle failed with git's "Unable to create ... feature.lock: File exists"."""
    import os

    bare, feature = bare_with_a_work_tree(tmp_path)
    lock = bare / "refs/heads/feature.lock"
    lock.write_text(git(feature, "rev-parse", "HEAD"))
    os.utime(lock, (1, 1))
    root = feature / ".memory"
    init_root(root)
    (root / "facts").mkdir(exist_ok=True)
    (root / "facts/x.md").write_text(memory("facts/x", "for the team", "x\n"))
    rc = RootConfig(path=root, scope="project", sync=dataclasses.replace(PROJECT_SYNC, commit=True))
    paths = resolve_paths({"MEMORYD_HOME": str(tmp_path / "home")})
    outcome = sync_root(Config(device="laptop", roots=(rc,)), paths, rc)
    assert outcome.ok and len(outcome.commits) == 1, outcome
    assert any(n.startswith("moved a stale feature.lock") for n in outcome.notices)
    assert not lock.exists() and list((bare / "memoryd-stale-locks/refs/heads").iterdir())
    assert git(bare, "for-each-ref", "--format=%(refname)", "refs/heads").split() == [
        "refs/heads/feature",
        "refs/heads/main",
    ]
