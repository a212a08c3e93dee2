"""Fixtures for the index tests: a global and a project root, real files, a real database."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from memoryd.config.sections import Config, RootConfig
from memoryd.index import IndexDB, open_index
from memoryd.paths import Paths, resolve_paths

DAY_MS = 86_400_000
NOW_MS = 1_800_000_000_000


@dataclass
class World:
    paths: Paths
    global_root: RootConfig
    project_root: RootConfig

    @property
    def config(self) -> Config:
        return Config(roots=(self.global_root, self.project_root))

    @property
    def roots(self) -> list[RootConfig]:
        return [self.global_root, self.project_root]

    def write(self, root: RootConfig, rel: str, body: str, **meta: Any) -> Path:
        return write_memory(root.path, rel, body, **meta)


def write_memory(root: Path, rel: str, body: str, **meta: Any) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    front = ""
    if meta:
        front = "---\n" + yaml.safe_dump(meta, allow_unicode=True, sort_keys=False) + "---\n"
    path.write_text(front + body + "\n", encoding="utf-8")
    past = (NOW_MS - DAY_MS) / 1000  # settled files: the racy-mtime guard does not re-read them
    os.utime(path, (past, past))
    return path


@pytest.fixture
def world(tmp_path: Path) -> World:
    paths = resolve_paths(dict(os.environ))
    g = RootConfig(path=tmp_path / "global", scope="global")
    p = RootConfig(path=tmp_path / "repo" / ".memory", scope="project")
    g.path.mkdir()
    p.path.mkdir(parents=True)
    return World(paths, g, p)


@pytest.fixture
def db(world: World) -> Iterator[IndexDB]:
    with open_index(world.paths) as index:
        yield index
