"""memoryd init --layered (template, legacy rename) and --claude/--no-claude (privacy switch)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from memoryd.config.loader import load_config
from memoryd.init.layered import MEMORY_TEMPLATE, ensure_project_memory, init_layered_tree
from memoryd.layouts.visible import project_id_for
from memoryd.paths import resolve_paths
from memoryd.roots import main_git_dir
from tests.helpers import git, run_cli


@pytest.fixture
def mimo_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MIMOCODE_HOME", str(tmp_path / "mimo"))
    return tmp_path / "mimo" / "data" / "memory"


def config_roots() -> list[dict[str, object]]:
    file = Path(os.environ["MEMORYD_HOME"]) / "config.yaml"
    roots: list[dict[str, object]] = yaml.safe_load(file.read_text())["roots"]
    return roots


def test_template_has_the_four_sections(tmp_path: Path) -> None:
    created = ensure_project_memory(tmp_path, "p1")
    assert created == ["projects/p1/MEMORY.md"]
    text = (tmp_path / "projects/p1/MEMORY.md").read_text()
    assert text == MEMORY_TEMPLATE
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings == [
        "## Project context",
        "## Rules",
        "## Architecture decisions",
        "## Discovered durable knowledge",
    ]
    assert ensure_project_memory(tmp_path, "p1") == []


def test_existing_memory_is_never_overwritten(tmp_path: Path) -> None:
    file = tmp_path / "projects/p1/MEMORY.md"
    file.parent.mkdir(parents=True)
    file.write_text("# mine\n")
    assert ensure_project_memory(tmp_path, "p1") == []
    assert file.read_text() == "# mine\n"


def test_legacy_lowercase_memory_is_renamed_once(tmp_path: Path) -> None:
    legacy = tmp_path / "projects/p1/memory.md"
    legacy.parent.mkdir(parents=True)
    legacy.write_text("# old knowledge\n")
    created = ensure_project_memory(tmp_path, "p1")
    assert created == ["projects/p1/MEMORY.md (renamed from memory.md)"]
    assert os.listdir(legacy.parent) == ["MEMORY.md"]
    assert (legacy.parent / "MEMORY.md").read_text() == "# old knowledge\n"
    assert ensure_project_memory(tmp_path, "p1") == []
    assert (legacy.parent / "MEMORY.md").read_text() == "# old knowledge\n"


def test_both_names_present_keeps_both(tmp_path: Path) -> None:
    folder = tmp_path / "projects/p1"
    folder.mkdir(parents=True)
    (folder / "memory.md").write_text("old\n")
    try:
        (folder / "MEMORY.md").write_text("new\n")
    except OSError:  # pragma: no cover - a case-insensitive filesystem
        pytest.skip("case-insensitive filesystem")
    if len(os.listdir(folder)) == 1:  # pragma: no cover
        pytest.skip("case-insensitive filesystem")
    assert ensure_project_memory(tmp_path, "p1") == []
    assert sorted(os.listdir(folder)) == ["MEMORY.md", "memory.md"]


def test_tree_setup_renames_every_project_and_is_idempotent(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    for pid in ("a", "b"):
        (root / "projects" / pid).mkdir(parents=True)
        (root / "projects" / pid / "memory.md").write_text(f"{pid}\n")
    first = init_layered_tree(root, "c")
    assert first.created == (
        ".gitignore",
        "projects/a/MEMORY.md (renamed from memory.md)",
        "projects/b/MEMORY.md (renamed from memory.md)",
        "projects/c/MEMORY.md",
    )
    assert (root / ".gitignore").read_text() == "/sessions/\n.state.json\n"
    assert init_layered_tree(root, "c").created == ()
    assert (root / "projects/a/MEMORY.md").read_text() == "a\n"


def test_project_id_comes_from_the_main_git_folder(tmp_path: Path) -> None:
    outside = tmp_path / "plain"
    outside.mkdir()
    assert project_id_for(outside) == "global"
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    assert project_id_for(repo) is None
    (repo / ".git" / "mimocode-project-id").write_text("3f2a-uuid\n")
    (repo / "sub").mkdir()
    assert project_id_for(repo / "sub") == "3f2a-uuid"
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    git(repo, "worktree", "add", "-q", str(tmp_path / "wt"))
    assert main_git_dir(tmp_path / "wt") == (repo / ".git").resolve()
    assert project_id_for(tmp_path / "wt") == "3f2a-uuid"
    (repo / ".git" / "mimocode-project-id").write_text("../../escape\n")
    assert project_id_for(repo) is None


def test_init_layered_registers_the_tree_and_creates_project_memory(
    mimo_root: Path, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / ".git" / "mimocode-project-id").write_text("pid-1\n")
    done = run_cli("init", "--layered", "--json", cwd=repo)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data == {
        "root": str(mimo_root),
        "created": [".", ".gitignore", "projects/pid-1/MEMORY.md", ".git/"],
        "registered": True,
        "project_id": "pid-1",
    }
    assert config_roots() == [
        {"path": str(Path(os.environ["MEMORYD_HOME"]) / "memory"), "layout": "plugin",
         "scope": "global"},
        {"path": str(mimo_root), "layout": "layered", "scope": "global"},
    ]  # fmt: skip
    again = run_cli("init", "--layered", cwd=repo)
    assert again.returncode == 0
    assert again.stdout == f"{mimo_root}: layered memory tree ready\n"


def test_init_layered_without_a_project_id_says_what_to_do(mimo_root: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    done = run_cli("init", "--layered", cwd=repo)
    assert done.returncode == 0
    assert "no project MEMORY.md: this repository has no MiMo Code project id yet" in done.stdout
    assert not (mimo_root / "projects").exists()
    explicit = run_cli("init", "--layered", "--project-id", "p7", cwd=repo)
    assert "created projects/p7/MEMORY.md" in explicit.stdout
    bad = run_cli("init", "--layered", "--project-id", "../x", cwd=repo)
    assert bad.returncode == 1
    assert "'../x' is not a usable project id" in bad.stderr


def test_init_layered_outside_git_uses_the_global_project(mimo_root: Path, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    done = run_cli("init", "--layered", cwd=plain)
    assert done.returncode == 0
    assert (mimo_root / "projects" / "global" / "MEMORY.md").read_text() == MEMORY_TEMPLATE


def test_claude_switch_prints_the_privacy_notice_and_never_syncs(tmp_path: Path) -> None:
    folder = Path(os.environ["HOME"]) / ".claude" / "projects"
    on = run_cli("init", "--claude")
    assert on.returncode == 0, on.stderr
    assert on.stderr.startswith("Claude Code memory: what turning it on means for privacy")
    assert "'user' and 'feedback' memories may hold your personal preferences" in on.stderr
    assert "Every agent that can recall from memoryd" in on.stderr
    assert on.stdout == f"Claude Code memory indexing is on: {folder}\n"
    claude = [r for r in config_roots() if r["layout"] == "claude"]
    assert claude == [
        {"path": str(folder), "layout": "claude", "scope": "global",
         "sync": {"commit": False, "push": False, "pull": False}},
    ]  # fmt: skip
    assert not folder.exists()  # memoryd never writes into Claude Code's folders
    again = run_cli("init", "--claude", "--json")
    assert json.loads(again.stdout) == {"folder": str(folder), "enabled": True, "changed": False}
    off = run_cli("init", "--no-claude")
    assert off.returncode == 0
    assert off.stdout == f"Claude Code memory indexing is off: {folder}\n"
    assert [r for r in config_roots() if r["layout"] == "claude"] == []
    assert len(config_roots()) == 1
    off_again = run_cli("init", "--no-claude")
    assert off_again.stdout.endswith("is off (it already was): " + str(folder) + "\n")


def test_claude_is_off_by_default() -> None:
    done = run_cli("init")
    assert done.returncode == 0
    assert "privacy" not in done.stdout + done.stderr
    config = load_config(resolve_paths())
    assert [r.layout for r in config.roots] == ["plugin"]
