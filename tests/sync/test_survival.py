"""Every side's version of every path ends in a file, whatever the replay reaches first.

Issue 16: a rename on one device met, on another, an edit of the source and a new
memory at the target; depending on which path sorted first, one of the two versions
was in no file on any device. Conflict copies also hold the user's exact bytes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import git
from tests.sync.world import World, memory

BODY = "".join(f"fact number {n} about the build\n" for n in range(12))


def _texts(root: Path) -> list[bytes]:
    return [p.read_bytes() for p in root.rglob("*.md") if ".git" not in p.relative_to(root).parts]


@pytest.mark.parametrize("target", ["facts/y.md", "facts/a.md"])  # after and before the source
def test_rename_meets_edit_and_add_keeps_every_version(world: World, target: str) -> None:
    world.a.write("facts/x.md", memory("facts/x", "moved", BODY))
    world.settle()
    (world.a.root / "facts/x.md").rename(world.a.root / target)
    edited = memory("facts/x", "moved", BODY.replace("number 5", "FIVE from B"))
    world.b.write("facts/x.md", edited)
    added = memory(target[:-3], "new on B", "a memory B wrote at the target\n")
    world.b.write(target, added)
    assert world.b.sync().pushed
    outcome = world.a.sync()
    assert outcome.ok, outcome
    world.settle()
    for device in world.devices:
        texts = _texts(device.root)
        assert any("FIVE from B" in t.decode() for t in texts), device.name  # B's edit
        assert added.encode() in texts, device.name  # B's new memory, byte for byte
        assert any(b"fact number 0" in t for t in texts), device.name  # A's moved text
    told = outcome.notices + [f"{c['path']} {c['copy']}" for c in outcome.conflicts]
    assert any(target in line for line in told), told


def test_conflict_copy_keeps_invalid_utf8_and_binary_bytes(world: World) -> None:
    world.a.write("facts/u.md", memory("facts/u", "u", "line one\nline two\n"))
    world.a.write("facts/bin.md", "placeholder\n")
    world.settle()
    mine_u = b"---\nid: facts/u\n---\ncaf\xe9 from A \xff\n"
    mine_bin = bytes(range(256)) * 4
    for rel, data in (("facts/u.md", mine_u), ("facts/bin.md", mine_bin)):
        (world.a.root / rel).write_bytes(data)
        world.oracle.record(rel, data)
    world.b.write("facts/u.md", memory("facts/u", "u", "B rewrote it all\n"))
    world.b.write("facts/bin.md", "B's text\n")
    assert world.b.sync().pushed
    outcome = world.a.sync()
    assert sorted(c["path"] for c in outcome.conflicts) == ["facts/bin.md", "facts/u.md"]
    world.settle()
    for device in world.devices:
        for c in outcome.conflicts:
            want = mine_u if c["path"] == "facts/u.md" else mine_bin
            assert (device.root / c["copy"]).read_bytes() == want
        listing = (device.root / "CONFLICTS.md").read_text()
        assert all(c["copy"][:-3] in listing for c in outcome.conflicts)
    assert git(world.a.root, "status", "--porcelain") == ""
