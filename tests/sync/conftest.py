"""The sync tests' one two-device world (tests.sync.world), fresh for each test."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sync.world import World, make_world


@pytest.fixture
def world(tmp_path: Path) -> World:
    """Two devices (laptop, desktop) on one bare remote, each named in its config.yaml."""
    return make_world(tmp_path)
