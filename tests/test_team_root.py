"""A team root: cloned from the team's remote, registered with scope team, ranked between
the project and the global root, synced like the global root, left with its files kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from memoryd.config.loader import parse_config
from memoryd.errors import ConfigError
from memoryd.paths import resolve_paths
from tests.helpers import git
from tests.team_world import TEAM, join, make_team, remote_files


def test_init_team_clones_registers_and_syncs_to_every_member(tmp_path: Path) -> None:
    (ann, bob), remote = make_team(tmp_path, ["ann", "bob"])
    join([ann, bob], remote)
    config = (ann.home / "memoryd" / "config.yaml").read_text()
    assert f"scope: team\n  team: {TEAM}\n" in config.replace("    ", "  ")
    assert (bob.team_root / "ROOT.md").is_file()
    assert "ROOT.md" in remote_files(remote)  # the first member's sync filled the empty remote
    ann.cli("remember", "--scope", "team", "--kind", "fact", "--summary", "Builds run on the blue runner")
    ann.cli("sync")
    bob.cli("sync")
    assert bob.recalled("blue runner") == {
        str(bob.team_root / "facts/builds-run-on-the-blue-runner.md")
    }


def test_a_team_root_ranks_between_project_and_global(tmp_path: Path) -> None:
    (ann,), remote = make_team(tmp_path, ["ann"])
    join([ann], remote)
    project = tmp_path / "proj"
    project.mkdir()
    git(project, "init", "-q")
    text = "Deploys need the staging flag"
    for scope in ("global", "team", "project"):
        ann.cli("remember", "--scope", scope, "--kind", "fact", "--force", "--summary", text, cwd=project)
    hits = ann.json("recall", "staging flag", cwd=project)
    assert [hit["scope"] for hit in hits] == ["project", "team", "global"]


def test_remember_never_puts_an_unscoped_memory_into_the_team_root(tmp_path: Path) -> None:
    (ann,), remote = make_team(tmp_path, ["ann"])
    join([ann], remote)
    done = ann.json("remember", "--kind", "fact", "--summary", "My editor is helix")
    assert done["scope"] == "global"
    assert not list(ann.team_root.rglob("*helix*"))


def test_team_scope_without_a_team_root_names_the_init(tmp_path: Path) -> None:
    (ann,), _ = make_team(tmp_path, ["ann"])
    ann.cli("init")
    done = ann.cli("remember", "--scope", "team", "--kind", "fact", "--summary", "x y z", ok=False)
    assert done.returncode != 0
    assert "no team memory root is configured" in done.stderr
    assert "memoryd init --team NAME --remote URL" in done.stderr


def test_init_team_needs_a_remote_for_a_first_clone(tmp_path: Path) -> None:
    (ann,), _ = make_team(tmp_path, ["ann"])
    done = ann.cli("init", "--team", TEAM, ok=False)
    assert "team 'acme' has no clone here yet, so memoryd needs its remote" in done.stderr


def test_init_team_of_an_unreachable_remote_says_so(tmp_path: Path) -> None:
    (ann,), _ = make_team(tmp_path, ["ann"])
    missing = tmp_path / "nowhere.git"
    done = ann.cli("init", "--team", TEAM, "--remote", str(missing), ok=False)
    assert f"cannot clone the team's memory from {missing}" in done.stderr
    assert not (ann.home / "memoryd" / "config.yaml").read_text().count("scope: team")


def test_project_team_marks_the_committed_memory_folder(tmp_path: Path) -> None:
    (ann,), _ = make_team(tmp_path, ["ann"])
    project = tmp_path / "shop"
    project.mkdir()
    git(project, "init", "-q")
    ann.cli("init", "--project", cwd=project)
    ann.cli("init", "--project", "--team", cwd=project)
    config = parse_config(
        (ann.home / "memoryd/config.yaml").read_text(), Path("c.yaml"),
        resolve_paths(ann.env),
    )  # fmt: skip
    [root] = [r for r in config.roots if r.path == (project / ".memory").resolve()]
    assert (root.scope, root.team, root.sync.push) == ("project", "shop", False)
    again = ann.json("init", "--project", "--team", cwd=project)
    assert again["registered"] is False


def test_team_leave_keeps_the_files_and_stops_searching(tmp_path: Path) -> None:
    (ann,), remote = make_team(tmp_path, ["ann"])
    join([ann], remote)
    ann.cli("remember", "--scope", "team", "--kind", "fact", "--summary", "The wiki moved to Notion")
    assert ann.recalled("wiki notion")
    left = ann.json("team", "leave", TEAM)
    assert left == {"team": TEAM, "root": str(ann.team_root), "kept": True}
    assert (ann.team_root / "facts/the-wiki-moved-to-notion.md").is_file()
    assert ann.json("recall", "wiki notion") == []
    done = ann.cli("team", "leave", TEAM, ok=False)
    assert "no team root named 'acme' is configured (teams here: none)" in done.stderr


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("{path: /m, scope: global, team: acme}", "roots[0].team: a global root is personal"),
        ("{path: /m, scope: team, team: 'a b'}", "roots[0].team: must be a name of letters"),
        ("{path: /m, scope: teams}", "roots[0].scope: must be one of global, team, project"),
    ],
)
def test_config_refuses_a_bad_team_entry(tmp_path: Path, entry: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(
            f"roots:\n  - {entry}\n", Path("c.yaml"), resolve_paths({"MEMORYD_HOME": str(tmp_path)})
        )
    assert message in caught.value.message


def test_a_team_root_is_named_after_its_folder_by_default(tmp_path: Path) -> None:
    paths = resolve_paths({"MEMORYD_HOME": str(tmp_path)})
    config = parse_config("roots:\n  - {path: /m/acme, scope: team}\n", Path("c.yaml"), paths)
    assert (config.roots[0].team, config.roots[0].sync.push) == ("acme", True)
