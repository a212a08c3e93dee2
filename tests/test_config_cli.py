"""config.yaml as people write it, through the real CLI: kept, and its errors say what to do."""

from __future__ import annotations

import json
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
        f"memoryd: error: the global root {gone} does not exist, so nothing was searched\n"
        f"  hint: mount or move it back, create it with 'memoryd init', or correct or "
        f"remove its path in {home / 'config.yaml'}\n"
    )


def test_a_root_moved_away_is_an_error_and_nothing_recreates_it(
    isolated_home: Path, tmp_path: Path
) -> None:
    """recall printed the moved root's hits (files not on disk) and exited 0; remember
    made the root again as a bare folder, no .git, that would never sync."""
    repo = tmp_path / "project"
    repo.mkdir()
    git(repo, "init", "-q")
    assert run_cli("init").returncode == 0
    assert run_cli("init", "--project", cwd=repo).returncode == 0
    for scope in ("global", "project"):
        done = run_cli("remember", "--scope", scope, "--kind", "fact", "--summary",
                       f"the {scope} deploy gate is staging", "--force", "body", cwd=repo)  # fmt: skip
        assert done.returncode == 0, done.stderr
    root = isolated_home / "memory"
    away = tmp_path / "unmounted"
    root.rename(away)
    done = run_cli("recall", "deploy gate", cwd=repo)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith(
        f"memoryd: error: the global root {root} does not exist, so nothing was searched\n"
    )
    project_only = run_cli("recall", "--scope", "project", "--json", "deploy gate", cwd=repo)
    assert [h["scope"] for h in json.loads(project_only.stdout)] == ["project"]
    context = run_cli("context", "--json", "deploy gate", cwd=repo)
    assert "the global deploy gate" not in context.stdout  # no hit of a file not on disk
    done = run_cli("remember", "--scope", "global", "--kind", "fact", "--summary",
                   "another global fact", "body", cwd=repo)  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.startswith(
        f"memoryd: error: the global root {root} does not exist, so nothing was written\n"
    )
    assert not root.exists()
    done = run_cli("compile", "--check")
    assert done.returncode == 1  # never "every compiled file is up to date"
    assert done.stderr.startswith(
        f"memoryd: error: the global root {root} does not exist, so nothing was compiled\n"
    )
    assert not root.exists()
    away.rename(root)  # the disk is back: everything as it was
    back = run_cli("recall", "--json", "deploy gate", cwd=repo)
    assert back.returncode == 0
    assert sorted(h["scope"] for h in json.loads(back.stdout)) == ["global", "project"]


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


def _latin1_project(tmp_path: Path) -> Path:
    """A project folder named in Latin-1 bytes (``caf\\xe9``), as an old archive leaves it."""
    import os

    raw = os.fsencode(tmp_path) + b"/caf\xe9"
    os.mkdir(raw)
    repo = Path(os.fsdecode(raw))
    git(repo, "init", "-q")
    return repo


NOT_UTF8_HINT = (
    "  hint: rename the folder to a UTF-8 name (e.g. mv it from a shell whose locale is "
    "UTF-8), then run this again\n"
)


def test_a_project_folder_whose_name_is_not_utf8_is_refused_before_anything_is_made(
    tmp_path: Path, isolated_home: Path
) -> None:
    """Registered, its path made every recall, remember and the daemon fail with
    UnicodeEncodeError (an internal error) from the index's first query."""
    assert run_cli("init").returncode == 0
    before = (isolated_home / "config.yaml").read_text(encoding="utf-8")
    repo = _latin1_project(tmp_path)
    shown = f"{tmp_path}/caf\\xe9/.memory"
    for args in (("init", "--project"), ("remember", "--kind", "fact", "--summary", "s", "b")):
        done = run_cli(*args, cwd=repo, process=True)
        assert (done.returncode, done.stderr) == (
            1,
            f"memoryd: error: {shown} is not valid UTF-8, so the search index cannot hold "
            f"the memories in it\n{NOT_UTF8_HINT}",
        ), args
    assert not (repo / ".memory").exists()
    assert (isolated_home / "config.yaml").read_text(encoding="utf-8") == before
    found = run_cli("recall", "anything", cwd=repo, process=True)
    assert (found.returncode, "internal error" in found.stderr) == (0, False), found.stderr


def test_a_config_that_lists_a_root_whose_path_is_not_utf8_names_the_fix(
    tmp_path: Path, isolated_home: Path
) -> None:
    """As an earlier memoryd registered it: YAML's \\uDCE9 escape is the Latin-1 byte."""
    assert run_cli("init").returncode == 0
    repo = _latin1_project(tmp_path)
    (repo / ".memory").mkdir()
    config = isolated_home / "config.yaml"
    config.write_text(
        "roots:\n"
        f"  - path: {isolated_home / 'memory'}\n"
        f'  - path: "{tmp_path}/caf\\uDCE9/.memory"\n    scope: project\n',
        encoding="utf-8",
    )
    done = run_cli("recall", "anything", cwd=tmp_path, process=True)
    assert (done.returncode, done.stderr) == (
        1,
        f"memoryd: error: {config}: roots[1].path: {tmp_path}/caf\\xe9/.memory is not valid "
        "UTF-8, so the search index cannot hold the memories in it: rename the folder to a "
        "UTF-8 name and write the new path here, or remove this root\n"
        f"  hint: edit {config} (see docs/config.md)\n",
    )


def test_reindex_of_a_missing_root_is_an_error_naming_it(
    isolated_home: Path, tmp_path: Path
) -> None:
    """reindex said "unknown: <root> (root folder is missing ...; its rows are kept)" and
    exited 0, as if the index were whole."""
    assert run_cli("init").returncode == 0
    root = isolated_home / "memory"
    root.rename(tmp_path / "unmounted")
    done = run_cli("reindex")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"memoryd: error: the global root {root} does not exist, so nothing was reindexed\n"
        f"  hint: mount or move it back, create it with 'memoryd init', or correct or "
        f"remove its path in {isolated_home / 'config.yaml'}\n"
    )
    assert not root.exists()
    (tmp_path / "unmounted").rename(root)
    assert run_cli("reindex").returncode == 0
