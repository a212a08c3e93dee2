"""config.yaml as people write it, through the real CLI: kept, and its errors say what to do."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import git, run_cli

MINE = (
    "# my memoryd settings -- do not lose this comment\n"
    "device: laptop  # the short name\n"
    "search:\n"
    "  limit: 5\n"
)


def test_init_project_keeps_every_comment_and_writes_no_backup(
    tmp_path: Path, isolated_home: Path
) -> None:
    home = isolated_home
    home.mkdir(exist_ok=True)
    (home / "config.yaml").write_text(MINE, encoding="utf-8")
    repo = tmp_path / "proj"
    repo.mkdir()
    git(repo, "init", "-q")
    done = run_cli("init", "--project", cwd=repo)
    assert done.returncode == 0, done.stderr
    text = (home / "config.yaml").read_text(encoding="utf-8")
    assert text == MINE + (
        "roots:\n"
        f"  - path: {isolated_home / 'memory'}\n    layout: plugin\n    scope: global\n"
        f"  - path: {repo / '.memory'}\n    layout: plugin\n    scope: project\n"
    )
    assert sorted(p.name for p in home.iterdir() if p.name.startswith("config")) == ["config.yaml"]


def test_a_configured_root_that_does_not_exist_is_an_error(isolated_home: Path) -> None:
    home = isolated_home
    home.mkdir(exist_ok=True)
    gone = isolated_home / "unplugged-disk" / "memory"
    (home / "config.yaml").write_text(f"roots:\n  - path: {gone}\n", encoding="utf-8")
    done = run_cli("recall", "deploy")
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == (
        f"memoryd: error: the global root {gone} does not exist, so it was not searched\n"
        f"  hint: create it with 'memoryd init', or correct or remove its path in "
        f"{home / 'config.yaml'}\n"
    )


def test_a_relative_root_path_is_refused_naming_the_key(isolated_home: Path) -> None:
    home = isolated_home
    home.mkdir(exist_ok=True)
    (home / "config.yaml").write_text("roots:\n  - path: notes/memory\n", encoding="utf-8")
    done = run_cli("recall", "deploy")
    assert done.returncode == 1
    file = home / "config.yaml"
    assert done.stderr == (
        f"memoryd: error: {file}: roots[0].path: must be an absolute path (or start with ~/), "
        "got 'notes/memory'\n"
        f"  hint: edit {file} (see docs/config.md)\n"
    )
