"""Devices that never settled (issue 16): compiled files, branch names, temp files."""

from __future__ import annotations

from pathlib import Path

import pytest

from memoryd.sync.derived import recompile
from tests.helpers import git
from tests.sync.world import World, make_world, memory

LINES = "".join(f"line {n}\n" for n in range(1, 9))
LEAK = "db at postgres://admin:S3cr3tPassw0rdXYZ@db.internal:5432/app\n"


@pytest.fixture
def world(tmp_path: Path) -> World:
    return make_world(tmp_path)


@pytest.mark.parametrize("why", ["oversize", "secret"])
def test_a_left_out_memory_is_not_compiled_and_devices_settle(world: World, why: str) -> None:
    world.a.write("facts/ok.md", memory("facts/ok", "an ordinary memory", "fine\n"))
    if why == "oversize":
        text = memory("facts/held", "summary of a huge secret plan", "x" * (1024 * 1024))
    else:
        text = memory("facts/held", "summary of a huge secret plan", LEAK)
    world.a.write("facts/held.md", text)
    recompile(world.a.root_config, world.a.config)  # the daemon compiles what it sees
    world.oracle.versions = [v for v in world.oracle.versions if v[0] != "facts/held.md"]
    world.a.sync()
    world.settle()
    for device in world.devices:
        index = device.read("facts/index.md")
        assert "ordinary memory" in index and "held" not in index
        assert "held" not in device.read("ROOT.md")
    assert "summary of a huge secret plan" not in git(world.remote, "log", "--all", "-p")
    for device in world.devices:  # quiet: nobody commits on the timer any more
        assert device.sync().commits == []


def test_conflict_copies_are_listed_in_conflicts_md_only(world: World) -> None:
    world.a.write("facts/x.md", memory("facts/x", "shared", LINES))
    world.settle()
    world.a.write("facts/x.md", memory("facts/x", "shared", LINES.replace("line 4", "A4")))
    world.b.write("facts/x.md", memory("facts/x", "shared", LINES.replace("line 4", "B4")))
    world.a.sync()
    [conflict] = world.b.sync().conflicts
    world.settle()
    copy_id = conflict["copy"][:-3]
    for device in world.devices:
        assert copy_id not in device.read("facts/index.md")
        assert copy_id not in device.read("ROOT.md")
        assert copy_id in device.read("CONFLICTS.md")
