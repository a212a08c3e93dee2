from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from memoryd.app import App
from memoryd.init.plugin import init_global, init_project
from tests.helpers import git


@dataclass(frozen=True)
class Setup:
    home: Path
    repo: Path  # a git work tree named "proj"; commands run here
    project: Path  # its .memory root
    global_root: Path

    def memories(self, root: Path | None = None) -> dict[str, str]:
        """Every memory file of a root (the project's by default), by relative path."""
        top = root or self.project
        return {
            p.relative_to(top).as_posix(): p.read_text()
            for p in sorted(top.rglob("*.md"))
            if p.name not in ("ROOT.md", "index.md") and ".git" not in p.parts
        }


@pytest.fixture
def setup(tmp_path: Path, isolated_home: Path) -> Setup:
    repo = tmp_path / "proj"
    repo.mkdir()
    git(repo, "init", "-q")
    app = App(cwd=repo)
    init_global(app)
    init_project(app, repo)
    return Setup(tmp_path / "home", repo, repo / ".memory", isolated_home / "memory")
