from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.helpers import git
from tests.helpers import run_cli_process as run_cli  # a real process: its exit codes


def test_help_lists_commands() -> None:
    done = run_cli("--help")
    assert done.returncode == 0
    assert "init" in done.stdout


def test_every_commands_own_help_says_what_it_does() -> None:
    """'memoryd run --help' (status, compile, ui, sync, inspect, conflicts, doctor...) gave
    the usage and options and not a word of what the command is."""
    import argparse

    from memoryd.commands import build_parser
    from tests.helpers import run_cli as in_process

    parser = build_parser()
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    helps = {action.dest: action.help for action in sub._choices_actions}
    for name in sub.choices:
        text = in_process(name, "--help").stdout
        paragraphs = text.split("\n\n")
        assert len(paragraphs) > 2 and not paragraphs[1].startswith(("positional", "options")), (
            f"memoryd {name} --help has no description:\n{text}"
        )
    for name in ("run", "status", "compile", "ui", "inspect", "conflicts", "doctor"):
        said = helps[name] or ""  # these give none of their own: the command list's line
        assert sub.choices[name].description == said[0].upper() + said[1:] + "."
    assert run_cli("run", "--help").stdout.split("\n\n")[1].startswith("Run the daemon")


def test_unknown_command_is_a_usage_error() -> None:
    done = run_cli("frobnicate")
    assert done.returncode == 2
    assert "invalid choice: 'frobnicate'" in done.stderr


def test_init_creates_the_global_root_once(isolated_home: Path) -> None:
    first = run_cli("init", "--json")
    assert first.returncode == 0, first.stderr
    data = json.loads(first.stdout)
    assert data["root"] == str(isolated_home / "memory")
    assert "ROOT.md" in data["created"]
    assert (isolated_home / "config.yaml").exists()
    again = run_cli("init")
    assert again.returncode == 0
    assert again.stdout == f"{isolated_home / 'memory'}: already set up, nothing changed\n"


def test_init_warns_when_git_could_not_commit_the_root(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fresh machine where git knows no one: init says so (on stderr, the JSON untouched)
    before the first sync fails; with a name and email it says nothing more."""
    nobody = tmp_path / "nobody.gitconfig"
    nobody.write_text("[user]\n\tuseConfigOnly = true\n\tname = Only A Name\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(nobody))
    monkeypatch.delenv("EMAIL", raising=False)
    done = run_cli("init", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["root"] == str(isolated_home / "memory")
    assert done.stderr == (
        "memoryd: WARNING: git does not know who commits on this machine: no email was given "
        f"and auto-detection is disabled; memoryd cannot commit {isolated_home / 'memory'} "
        "until it does\n"
        '  hint: tell git who commits on this machine: git config --global user.name "Your Name" '
        '&& git config --global user.email "you@example.com"\n'
    )
    git(tmp_path, "config", "--file", str(nobody), "user.email", "me@example.invalid")
    again = run_cli("init")
    assert (again.returncode, again.stderr) == (0, "")


def test_init_project_registers_the_root(tmp_path: Path, isolated_home: Path) -> None:
    repo = tmp_path / "proj"
    (repo / "src").mkdir(parents=True)
    git(repo, "init", "-q")
    done = run_cli("init", "--project", "src", cwd=repo)
    assert done.returncode == 0, done.stderr
    assert (repo / ".memory" / "ROOT.md").exists()
    assert (repo / ".memory" / ".gitignore").read_text() == ".state.json\n"
    config = yaml.safe_load((isolated_home / "config.yaml").read_text())
    assert {"path": str(repo / ".memory"), "layout": "plugin", "scope": "project"} in config[
        "roots"
    ]
    again = run_cli(
        "init",
        "--project",
        cwd=repo,
    )
    assert again.returncode == 0
    assert "already set up, nothing changed" in again.stdout


def test_init_project_outside_a_repo_names_the_fix(tmp_path: Path) -> None:
    done = run_cli("init", "--project", str(tmp_path))
    assert done.returncode == 1
    assert done.stderr == (
        f"memoryd: error: {tmp_path} is not inside a git repository\n"
        f"  hint: run 'git init' in {tmp_path} first, or pass a folder inside a repository\n"
    )
    assert "Traceback" not in done.stderr


def test_bad_config_is_one_clear_line(isolated_home: Path) -> None:
    isolated_home.mkdir()
    (isolated_home / "config.yaml").write_text("search:\n  limt: 3\n")
    done = run_cli("init")
    assert done.returncode == 1
    assert done.stderr.startswith(
        f"memoryd: error: {isolated_home / 'config.yaml'}: search.limt: unknown key"
    )
    assert "Traceback" not in done.stderr


def test_relative_memoryd_home_is_a_clear_error(monkeypatch: object) -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "MEMORYD_HOME": "relative"}
    done = subprocess.run(
        [sys.executable, "-m", "memoryd", "init"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert "MEMORYD_HOME must be an absolute path, got 'relative'" in done.stderr
