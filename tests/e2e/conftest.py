"""Fixtures of the end-to-end suite: the installed clients, a project, a fake model API.

Every test module here sets ``pytestmark = pytest.mark.e2e`` (``pytest -m "not e2e"``
leaves them out). Without
node and npm they are skipped with a warning in the summary; with them, a failing
``npm ci`` fails the suite rather than hiding it.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e import clients
from tests.helpers import git, run_cli


@pytest.fixture(scope="session")
def node_bin() -> Path:
    try:
        return clients.install()
    except clients.NodeMissing as exc:
        message = (
            f"SKIPPING THE END-TO-END SUITE: {exc}. Install node (>= 20) and npm to prove "
            "memoryd with the real Claude Code, OpenCode, Codex CLI, Gemini CLI and MCP Inspector "
            "clients."
        )
        warnings.warn(message, stacklevel=1)
        pytest.skip(message)


@dataclass(frozen=True)
class Project:
    home: Path  # the clients' HOME (the autouse fixture's)
    repo: Path  # a git work tree with a .memory root; the clients run here
    global_root: Path

    @property
    def memory(self) -> Path:
        return self.repo / ".memory"

    def remember(self, *args: str) -> None:
        done = run_cli("remember", *args, cwd=self.repo)
        assert done.returncode == 0, done.stderr

    def linked_worktree(self) -> Path:
        """A linked worktree of the repository outside its main checkout (``wt/feature``,
        branch ``feature``) on a first commit: where a session works before removing it."""
        (self.repo / "README.md").write_text("app\n")
        git(self.repo, "add", "README.md")
        git(self.repo, "commit", "-qm", "start")
        worktree = self.repo.parent / "wt" / "feature"
        git(self.repo, "worktree", "add", "-q", "-b", "feature", str(worktree))
        return worktree

    def seed(self) -> None:
        """The iron rule and the pitfall the prompt tests look for."""
        self.remember("--kind", "rule", "--summary", "部署只用 pnpm")
        self.remember(
            "--kind", "pitfall", "--summary", "FTS5 unicode61 merges a Chinese run",
            "--load-when", "FTS5", "unicode61 keeps 部署脚本 as one token; split bigrams",
        )  # fmt: skip


@pytest.fixture
def project(tmp_path: Path, isolated_home: Path) -> Project:
    home = tmp_path / "home"
    repo = tmp_path / "app"
    repo.mkdir()
    git(repo, "init", "-q")
    for args in (("init",), ("init", "--project")):
        done = run_cli(*args, cwd=repo)
        assert done.returncode == 0, done.stderr
    return Project(home, repo, isolated_home / "memory")


@pytest.fixture
def fake_api() -> Iterator[type]:
    """The FakeModelAPI class (tests script their own turns)."""
    from tests.e2e.fake_models import FakeModelAPI

    yield FakeModelAPI
