"""The real sync engine on both foreign layouts: sessions/ and unchosen Claude folders stay local."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from memoryd.app import App
from memoryd.cli import main
from memoryd.sync.engine import sync_root
from tests.helpers import git, run_cli


def cli(*args: str, cwd: Path) -> str:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(args), App(cwd=cwd, out=out, err=err))
    assert code == 0, err.getvalue()
    return out.getvalue()


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def remote_files(bare: Path) -> list[str]:
    heads = git(bare, "for-each-ref", "--format=%(objectname)", "refs/heads").split()
    assert len(heads) == 1, heads
    return sorted(git(bare, "ls-tree", "-r", "--name-only", heads[0]).split())


def sync(layout: str) -> None:
    app = App()
    root = next(r for r in app.config.roots if r.layout == layout)
    outcome = sync_root(app.config, app.paths, root, force=True)
    assert outcome.status == "ok", outcome


def with_remote(repo: Path, tmp_path: Path) -> Path:
    bare = tmp_path / f"{repo.name}-remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    return bare


def test_a_session_folder_stays_out_of_commits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MIMOCODE_HOME", str(tmp_path / "mimo"))
    root = tmp_path / "mimo" / "data" / "memory"
    write(root, "global/MEMORY.md", "prefer ripgrep\n")
    write(root, "sessions/s1/checkpoint.md", "current task: half done\n")
    write(root, "sessions/s1/tasks/T1/progress.md", "§1 started\n")
    cli("init", cwd=tmp_path)
    created = json.loads(cli("init", "--layered", "--project-id", "p1", "--json", cwd=tmp_path))
    assert ".git/" in created["created"]
    bare = with_remote(root, tmp_path)
    sync("layered")
    assert remote_files(bare) == [".gitignore", "global/MEMORY.md", "projects/p1/MEMORY.md"]
    # even with the .gitignore line gone, the engine asks the layout before staging
    (root / ".gitignore").write_text(".state.json\n")
    write(root, "sessions/s2/notes.md", "scratch\n")
    write(root, "projects/p1/memory-arch.md", "architecture\n")
    sync("layered")
    files = remote_files(bare)
    assert "projects/p1/memory-arch.md" in files
    assert not [f for f in files if f.startswith("sessions/")]
    assert (root / "sessions/s2/notes.md").read_text() == "scratch\n"  # still on disk


def test_claude_sync_is_opt_in_per_project_folder(tmp_path: Path) -> None:
    projects = Path(os.environ["HOME"]) / ".claude" / "projects"
    write(projects, "-home-me-app/memory/user_role.md", "---\ntype: user\n---\nrole\n")
    write(projects, "-home-me-app/memory/MEMORY.md", "- [role](user_role.md)\n")
    write(projects, "-home-me-app/0b7c.jsonl", '{"transcript": true}\n')
    write(projects, "-home-me-web/memory/project_goal.md", "---\ntype: project\n---\ngoal\n")
    cli("init", cwd=tmp_path)
    cli("init", "--claude", cwd=tmp_path)
    assert not (projects / ".git").exists()  # indexing alone never syncs
    done = run_cli("init", "--claude", "--sync-folder", str(projects / "-home-me-app"), "--json")
    assert done.returncode == 0, done.stderr
    assert "memory/*.md files of these project folders will be committed" in done.stderr
    assert json.loads(done.stdout)["sync_folders"] == ["-home-me-app"]
    app = App()
    (claude_root,) = [r for r in app.config.roots if r.layout == "claude"]
    assert claude_root.sync.commit and claude_root.sync.push
    bare = with_remote(projects, tmp_path)
    sync("claude")
    assert remote_files(bare) == [
        "-home-me-app/memory/MEMORY.md",
        "-home-me-app/memory/user_role.md",
        ".gitignore",
    ]
    cli("init", "--claude", "--sync-folder", str(projects / "-home-me-web"), cwd=tmp_path)
    sync("claude")
    assert "-home-me-web/memory/project_goal.md" in remote_files(bare)
    assert "-home-me-app/0b7c.jsonl" not in remote_files(bare)
    assert (projects / "-home-me-app/memory/MEMORY.md").read_text() == "- [role](user_role.md)\n"


def test_sync_folder_must_be_a_claude_project_folder(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = run_cli("init", "--claude", "--sync-folder", str(elsewhere))
    assert done.returncode == 1
    assert f"{elsewhere} is not a Claude Code project folder" in done.stderr
    alone = run_cli("init", "--sync-folder", str(elsewhere))
    assert alone.returncode == 2
    assert "--sync-folder goes with --claude" in alone.stderr


def test_a_foreign_gitignore_is_not_overwritten(tmp_path: Path) -> None:
    projects = Path(os.environ["HOME"]) / ".claude" / "projects"
    write(projects, "-a/memory/x.md", "x\n")
    write(projects, ".gitignore", "*.jsonl\n")
    done = run_cli("init", "--claude", "--sync-folder", str(projects / "-a"))
    assert done.returncode == 1
    assert "exists and memoryd did not write it" in done.stderr
    assert (projects / ".gitignore").read_text() == "*.jsonl\n"
