"""Wrong verdicts of the sync cycle (issue 16), each with real git and a bare remote."""

from __future__ import annotations

from pathlib import Path

import pytest

from memoryd.sync.state import load_state
from tests.helpers import git
from tests.sync.world import World, make_world, memory


@pytest.fixture
def world(tmp_path: Path) -> World:
    return make_world(tmp_path)


def _six(world: World) -> None:
    for n in range(6):
        world.a.write(f"facts/m{n}.md", memory(f"facts/m{n}", f"m{n}", f"memory {n}\n"))
    world.settle()


def test_moving_memories_to_another_folder_is_not_a_mass_delete(world: World) -> None:
    _six(world)
    (world.a.root / "pitfalls").mkdir(exist_ok=True)
    for n in range(4):
        (world.a.root / f"facts/m{n}.md").rename(world.a.root / f"pitfalls/m{n}.md")
    outcome = world.a.sync()
    assert outcome.status == "ok" and outcome.pushed, outcome
    assert load_state(world.a.paths, world.a.root).paused is None
    world.settle()
    assert {f"pitfalls/m{n}.md" for n in range(4)} <= world.b.files()


def test_a_kill_between_moving_files_and_the_branch_does_not_pause_forever(
    world: World,
) -> None:
    _six(world)
    for n in range(5):  # the other device deletes most memories, on purpose
        world.b.delete(f"facts/m{n}.md")
    assert world.b.sync(allow_mass_delete=True).pushed
    git(world.a.root, "fetch", "-q", "origin")
    git(world.a.root, "read-tree", "-m", "-u", "HEAD", "origin/main")  # then SIGKILL
    assert not (world.a.root / "facts/m0.md").exists()
    outcome = world.a.sync()
    assert outcome.status == "ok", outcome
    assert load_state(world.a.paths, world.a.root).paused is None
    world.settle()
    assert world.a.head() == world.remote_head()


def test_a_real_mass_delete_still_pauses(world: World) -> None:
    _six(world)
    for n in range(4):
        world.a.delete(f"facts/m{n}.md")
    (world.a.root / "facts/m4.md").rename(world.a.root / "facts/renamed.md")
    outcome = world.a.sync()
    assert outcome.status == "paused"
    assert outcome.error is not None and outcome.error.startswith("4 of 6 memories deleted")
    world.a.sync(allow_mass_delete=True)
    world.settle()
