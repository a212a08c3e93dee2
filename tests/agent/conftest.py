from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from memoryd.app import App
from memoryd.init.plugin import init_global, init_project
from tests.helpers import git


@dataclass(frozen=True)
class Setup:
    repo: Path  # a git work tree; commands run here
    project: Path  # its .memory root
    global_root: Path

    def snapshot(self) -> dict[str, bytes]:
        """Every file under both roots, by path (to prove a refusal wrote nothing)."""
        files: dict[str, bytes] = {}
        for root in (self.project, self.global_root):
            for path in sorted(root.rglob("*")):
                if path.is_file() and not path.is_symlink():
                    files[str(path)] = path.read_bytes()
        return files


@pytest.fixture
def setup(tmp_path: Path, isolated_home: Path) -> Setup:
    repo = tmp_path / "proj"
    repo.mkdir()
    git(repo, "init", "-q")
    app = App(cwd=repo)  # in-process: the same as `memoryd init` and `init --project`
    init_global(app)
    init_project(app, repo)
    return Setup(repo, repo / ".memory", isolated_home / "memory")
