"""The real daemon while a person rebases the project that holds a memory root."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from memoryd.app import App
from memoryd.index import open_index
from tests.daemon.harness import DaemonProcess, app_with_root, settled, wait_until
from tests.helpers import git, run_cli


def fact(summary: str) -> str:
    return f"---\nkind: fact\nsummary: {summary}\n---\nbody\n"


def commit_all(repo: Path, message: str) -> None:
    assert run_cli("compile").returncode == 0  # as a person who runs memoryd would
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def row_problems(app: App, path: Path) -> list[str]:
    with open_index(app.paths) as db:
        found = db.conn.execute("SELECT problems FROM memories WHERE path = ?", (str(path),))
        row = found.fetchone()
    return [] if row is None else [p["code"] for p in json.loads(row[0])]


def test_a_rebase_stopped_on_a_memory_is_not_blocked_by_a_compiled_file(tmp_path: Path) -> None:
    """A teammate's commit changed a memory but not its index.md. While 'git rebase' waited
    on the conflict, the daemon rewrote facts/index.md, an unstaged change git had not
    made: 'git rebase --continue' then refused ('You must edit all merge conflicts')."""
    app, _global = app_with_root()
    proj = tmp_path / "proj"
    memory = proj / ".memory"
    (memory / "facts").mkdir(parents=True)
    (memory / "decisions").mkdir()
    git(proj, "init", "-q", "-b", "main")
    assert run_cli("init", "--project", cwd=proj).returncode == 0
    app = App()
    m1, decision = memory / "facts/m1.md", memory / "decisions/d.md"
    m1.write_text(fact("memory one"))
    (memory / "facts/m2.md").write_text(fact("memory two"))
    decision.write_text(fact("a decision"))
    commit_all(proj, "base")
    git(proj, "switch", "-q", "-c", "feature")
    m1.write_text(fact("feature one"))
    git(proj, "commit", "-q", "-am", "a teammate's: m1 without its index.md")
    decision.write_text(fact("the decision changed"))
    assert run_cli("compile").returncode == 0
    git(proj, "add", ".memory/decisions")
    git(proj, "commit", "-q", "-m", "d with its index.md")
    git(proj, "checkout", "--", ".memory/facts/index.md")  # the teammate's stays stale
    git(proj, "switch", "-q", "main")
    m1.write_text(fact("main one"))
    commit_all(proj, "m1 on main")

    daemon = DaemonProcess(tmp_path)
    try:
        daemon.wait_serving(app, tmp_path / "scratch")
        stopped = subprocess.run(
            ["git", "rebase", "main", "feature"], cwd=proj, capture_output=True, text=True, check=False
        )
        assert stopped.returncode == 1 and "CONFLICT" in stopped.stdout, stopped
        assert wait_until(lambda: "frontmatter.yaml" in row_problems(app, m1))  # indexed
        held = f"a rebase is in progress in {memory}: its ROOT.md and index.md are compiled"
        wait_until(lambda: held in daemon.output(), 10)
        assert git(proj, "status", "--porcelain").splitlines() == ["UU .memory/facts/m1.md"]

        m1.write_text(fact("feature one"))
        git(proj, "add", str(m1))
        done = subprocess.run(
            ["git", "rebase", "--continue"], cwd=proj, capture_output=True, text=True,
            check=False, env={**os.environ, "GIT_EDITOR": "true"},
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        assert git(proj, "log", "--format=%s", "-3").splitlines() == [
            "d with its index.md", "a teammate's: m1 without its index.md", "m1 on main",
        ]  # fmt: skip

        assert wait_until(lambda: settled(app, tmp_path / "scratch")), daemon.output()
        assert f"the git operation in {memory} ended: compiling it" in daemon.output()
        index = (memory / "facts/index.md").read_text()
        assert "- [m1.md](m1.md) `facts/m1`: feature one\n" in index
        assert daemon.terminate() == 0, daemon.output()
    finally:
        daemon.kill()


def test_a_compiled_file_git_left_conflicted_is_compiled_during_the_rebase(
    tmp_path: Path,
) -> None:
    """Both sides changed a summary and their index.md: only a compile resolves the
    conflict markers git wrote into index.md, so that one is not held for the rebase."""
    _app, _global = app_with_root()
    proj = tmp_path / "proj"
    memory = proj / ".memory"
    (memory / "facts").mkdir(parents=True)
    git(proj, "init", "-q", "-b", "main")
    assert run_cli("init", "--project", cwd=proj).returncode == 0
    app = App()
    m1, index = memory / "facts/m1.md", memory / "facts/index.md"
    m1.write_text(fact("memory one"))
    commit_all(proj, "base")
    git(proj, "switch", "-q", "-c", "feature")
    m1.write_text(fact("feature one"))
    commit_all(proj, "m1 on feature")
    git(proj, "switch", "-q", "main")
    m1.write_text(fact("main one"))
    commit_all(proj, "m1 on main")

    daemon = DaemonProcess(tmp_path)
    try:
        daemon.wait_serving(app, tmp_path / "scratch")
        stopped = subprocess.run(
            ["git", "rebase", "main", "feature"], cwd=proj, capture_output=True, text=True,
            check=False,
        )  # fmt: skip
        assert "CONFLICT (content): Merge conflict in .memory/facts/index.md" in stopped.stdout
        assert wait_until(lambda: "<<<<<<<" not in index.read_text()), daemon.output()
        assert "- [m1.md](m1.md) `facts/m1`: (no summary)\n" in index.read_text()
        assert f"a rebase in {memory} left a conflict in a compiled file" in daemon.output()

        m1.write_text(fact("main one, then feature one"))
        assert wait_until(lambda: "then feature one" in index.read_text()), daemon.output()
        git(proj, "add", ".memory")
        done = subprocess.run(
            ["git", "rebase", "--continue"], cwd=proj, capture_output=True, text=True,
            check=False, env={**os.environ, "GIT_EDITOR": "true"},
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        assert git(proj, "status", "--porcelain") == ""
        assert daemon.terminate() == 0, daemon.output()
    finally:
        daemon.kill()


def test_switching_to_a_branch_without_the_memory_and_back_works(tmp_path: Path) -> None:
    """git removes the tracked files of .memory/ and leaves its empty folders: the daemon
    wrote a new ROOT.md there, untracked, and 'git switch' back refused to overwrite it."""
    app, _global = app_with_root()
    proj = tmp_path / "proj"
    proj.mkdir()
    git(proj, "init", "-q", "-b", "main")
    (proj / "README").write_text("a project\n")
    git(proj, "add", "README")
    git(proj, "commit", "-q", "-m", "before memoryd")
    git(proj, "switch", "-q", "-c", "adopt")
    assert run_cli("init", "--project", cwd=proj).returncode == 0
    app = App()
    (proj / ".memory/facts/p.md").write_text(fact("a project fact"))
    commit_all(proj, "adopt memoryd")

    daemon = DaemonProcess(tmp_path)
    try:
        daemon.wait_serving(app, tmp_path / "scratch")
        git(proj, "switch", "-q", "main")
        assert wait_until(lambda: settled(app, tmp_path / "scratch")), daemon.output()
        assert not (proj / ".memory/ROOT.md").exists()
        back = subprocess.run(
            ["git", "switch", "adopt"], cwd=proj, capture_output=True, text=True, check=False
        )
        assert back.returncode == 0, back.stderr
        assert wait_until(lambda: settled(app, tmp_path / "scratch")), daemon.output()
        assert git(proj, "status", "--porcelain") == ""
        assert daemon.terminate() == 0, daemon.output()
    finally:
        daemon.kill()


def test_the_compile_that_sees_a_held_operation_end_is_told_to_compile_it_whole(
    tmp_path: Path,
) -> None:
    """While a rebase held the root, the compiles of its batches were skipped; the first
    compile to see it end compiled only its own batch's files (1 run in 25 of the test
    above left facts/index.md stale for good), so ``hold`` says "ended" exactly once."""
    from memoryd.daemon.gitops import GitOps

    proj = tmp_path / "proj"
    (proj / ".memory").mkdir(parents=True)
    git(proj, "init", "-q", "-b", "main")
    note = proj / ".memory/n.md"
    note.write_text(fact("main"))
    git(proj, "add", "-A")
    git(proj, "commit", "-q", "-m", "base")
    git(proj, "switch", "-q", "-c", "feature")
    note.write_text(fact("feature"))
    git(proj, "commit", "-q", "-am", "feature")
    git(proj, "switch", "-q", "main")
    note.write_text(fact("main, changed"))
    git(proj, "commit", "-q", "-am", "main")
    ops, root = GitOps(), proj / ".memory"
    assert ops.hold(root) == "free"
    stopped = subprocess.run(
        ["git", "rebase", "main", "feature"], cwd=proj, capture_output=True, check=False
    )
    assert stopped.returncode == 1
    assert [ops.hold(root), ops.hold(root)] == ["held", "held"]
    git(proj, "rebase", "--abort")
    assert [ops.hold(root), ops.hold(root), ops.ended()] == ["ended", "free", []]
