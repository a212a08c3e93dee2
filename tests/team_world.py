"""A team in one test: people with a home each (MEMORYD_HOME, git identity, device name),
one bare repository as the team's memory remote, and a shared project repository.

A person's commands run as ``memoryd`` in this process with that person's environment
(``os.environ`` swapped for the call: git reads it too). An agent's call carries Claude
Code's marker; its MCP tool calls go through :class:`memoryd.agent.mcp_server.Tools`.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.helpers import git, run_cli

TEAM = "acme"
AGENT_MARKERS = ("CLAUDECODE", "AI_AGENT", "OPENCODE")


@dataclass
class Person:
    name: str
    home: Path
    base_env: dict[str, str]

    @property
    def env(self) -> dict[str, str]:
        gitconfig = self.home / "gitconfig"
        return {
            **self.base_env,
            "MEMORYD_HOME": str(self.home / "memoryd"),
            "HOME": str(self.home / "home"),
            "XDG_CONFIG_HOME": str(self.home / "home/.config"),
            "GIT_CONFIG_GLOBAL": str(gitconfig),
        }

    @property
    def team_root(self) -> Path:
        return self.home / "memoryd" / "teams" / TEAM

    @contextlib.contextmanager
    def environ(self, agent: bool = False) -> Iterator[dict[str, str]]:
        saved = dict(os.environ)
        os.environ.clear()
        os.environ.update(self.env)
        for key in AGENT_MARKERS:
            os.environ.pop(key, None)
        if agent:
            os.environ["CLAUDECODE"] = "1"
            os.environ["MEMORYD_SESSION_ID"] = f"session-of-{self.name}"
        try:
            yield dict(os.environ)
        finally:
            os.environ.clear()
            os.environ.update(saved)

    def cli(
        self, *args: str, cwd: Path | None = None, agent: bool = False, ok: bool = True,
        input: str | None = None,
    ) -> subprocess.CompletedProcess[str]:  # fmt: skip
        with self.environ(agent):
            done = run_cli(*args, cwd=cwd or self.home, input=input)
        if ok:
            assert done.returncode == 0, f"{self.name}: memoryd {' '.join(args)}\n{done.stderr}"
        return done

    def json(self, *args: str, cwd: Path | None = None, agent: bool = False) -> Any:
        return json.loads(self.cli(*args, "--json", cwd=cwd, agent=agent).stdout)

    def recalled(self, query: str, cwd: Path | None = None) -> set[str]:
        """The paths of every memory ``memoryd recall`` finds for ``query``."""
        hits = self.json("recall", query, "--limit", "50", cwd=cwd)
        return {hit["path"] for hit in hits}

    def mcp_remember(self, cwd: Path, **fields: Any) -> str:
        """``memory_remember`` as an agent's MCP client calls it; the tool's text."""
        from memoryd.agent import remember
        from memoryd.agent.mcp_server import Tools
        from memoryd.app import App

        with self.environ(agent=True) as env:
            tools = Tools(App(env=env, cwd=cwd, out=io.StringIO(), err=io.StringIO()), None)
            request = remember.Request(agent=True, **fields)
            result = tools.call(lambda: tools.remember(request))
        text = result.content[0].text  # type: ignore[union-attr]
        assert not result.is_error, text
        return text

    def mcp_recall(self, cwd: Path, query: str) -> str:
        from memoryd.agent.mcp_server import Tools
        from memoryd.app import App

        with self.environ(agent=True) as env:
            tools = Tools(App(env=env, cwd=cwd, out=io.StringIO(), err=io.StringIO()), None)
            result = tools.call(
                lambda: tools.recall(query, 50, kind=None, scope=None, type=None, scope_id=None)
            )
        return result.content[0].text  # type: ignore[union-attr]


def make_team(tmp_path: Path, names: list[str]) -> tuple[list[Person], Path]:
    """People with a home each (their device named after them) and the team's bare remote."""
    remote = tmp_path / "team-memory.git"
    subprocess.run(["git", "init", "--bare", "-q", "-b", "main", str(remote)], check=True)
    base = dict(os.environ)
    people = []
    for name in names:
        home = tmp_path / "people" / name
        (home / "home").mkdir(parents=True)
        (home / "memoryd").mkdir(mode=0o700)
        (home / "gitconfig").write_text(
            f"[user]\n\tname = {name.title()}\n\temail = {name}@team.invalid\n"
            "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n"
        )
        (home / "memoryd" / "config.yaml").write_text(f"device: {name}-laptop\n")
        people.append(Person(name, home, base))
    return people, remote


def join(people: list[Person], remote: Path) -> None:
    """Each person runs ``memoryd init`` and ``memoryd init --team``, in turn, syncing."""
    for person in people:
        person.cli("init")
        person.cli("init", "--team", TEAM, "--remote", str(remote))
        person.cli("sync")


def remote_files(remote: Path, branch: str = "main") -> dict[str, str]:
    """Every file on ``branch`` of the bare remote, with its text."""
    names = git(remote, "ls-tree", "-r", "--name-only", branch).splitlines()
    return {name: git(remote, "show", f"{branch}:{name}") for name in names}


def through_branches(people: list[Person]) -> None:
    """Each person's team root syncs through a proposals branch from now on."""
    for person in people:
        config = person.home / "memoryd/config.yaml"
        data = yaml.safe_load(config.read_text())
        for root in data["roots"]:
            if root.get("team") == TEAM:
                root["sync"] = {"team_branch": True}
        config.write_text(yaml.safe_dump(data))
