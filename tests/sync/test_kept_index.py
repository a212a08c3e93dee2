"""A cycle's private index is kept for the next one, with git's stat data.

So ``git status`` in the next cycle reads the files whose size or times changed, not
every byte under the root; git's racy-entry rule still catches a rewrite in the same
tick, and a cycle that does not finish leaves no index behind.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.helpers import git
from tests.sync.world import World, memory


def kept(world: World) -> list[Path]:
    folder = world.a.paths.state_dir / "sync" / "kept"
    return sorted(folder.glob("*.index")) if folder.is_dir() else []


def test_the_index_of_a_finished_cycle_is_kept_with_stat_data(world: World) -> None:
    for n in range(5):
        world.a.write(f"facts/m{n}.md", memory(f"facts/m{n}", f"m{n}", f"{n}\n"))
    assert world.a.sync().commits
    [index] = kept(world)
    assert index.with_suffix(".head").read_text().split()[0] == world.a.head()
    debug = subprocess.run(
        ["git", "ls-files", "--debug", "--", "facts"], cwd=world.a.root, check=True,
        capture_output=True, text=True, env={**os.environ, "GIT_INDEX_FILE": str(index)},
    ).stdout  # fmt: skip
    mtimes = [line.split()[1] for line in debug.splitlines() if line.strip().startswith("mtime:")]
    assert len(mtimes) == 5 and all(m != "0:0" for m in mtimes), debug
    world.a.write("facts/m1.md", memory("facts/m1", "m1", "one changed\n"))
    outcome = world.a.sync()
    assert outcome.commits and outcome.ok
    assert git(world.a.root, "show", "--name-only", "--format=", "HEAD").split() == ["facts/m1.md"]
    assert kept(world) == [index]


def test_a_same_size_rewrite_right_after_a_cycle_is_committed(world: World) -> None:
    for n in range(12):
        world.a.write("facts/shared.md", memory("facts/shared", "shared", f"laptop {n % 10}\n"))
        outcome = world.a.sync()  # each rewrite the same size, at once after the last cycle
        assert outcome.ok, outcome
        shown = git(world.a.root, "show", "HEAD:facts/shared.md")
        assert shown.endswith(f"laptop {n % 10}\n"), (n, shown)


def test_a_cycle_that_does_not_commit_keeps_no_index(world: World) -> None:
    for n in range(6):
        world.a.write(f"facts/m{n}.md", memory(f"facts/m{n}", f"m{n}", f"{n}\n"))
    world.settle()
    assert kept(world)
    for n in range(4):
        world.a.delete(f"facts/m{n}.md")
    assert world.a.sync().status == "paused"  # a mass delete: staged, never committed
    assert kept(world) == []
    outcome = world.a.sync(allow_mass_delete=True)
    assert outcome.ok and outcome.pushed
    assert len(kept(world)) == 1
