"""A tracked memory memoryd will not commit, edited on another device, never wedges sync.

Issue 16: the fast-forward's ``read-tree -m -u`` refused ("Entry ... not uptodate")
on every cycle, so nothing arrived and nothing left. The local bytes stay at the
path (still not committed), the other device's version is saved beside them, and
the rest of the root syncs.
"""

from __future__ import annotations

import pytest

from memoryd.sync.report import sync_problems
from tests.helpers import git
from tests.sync.world import World, memory

LINES = "".join(f"line {n}\n" for n in range(1, 9))
HELD = {
    "markers": "<<<<<<< mine\nA's idea\n=======\nother idea\n>>>>>>> theirs\n",
    "secret": memory("facts/t", "t", "db at postgres://admin:S3cr3tPassw0rdXYZ@db.internal/app\n"),
    "oversize": "x" * (1024 * 1024 + 10),
}


@pytest.mark.parametrize("why", sorted(HELD))
@pytest.mark.parametrize("remote_moves", ["edit", "delete"])
def test_a_held_back_file_edited_elsewhere_does_not_wedge(
    world: World, why: str, remote_moves: str
) -> None:
    world.a.write("facts/t.md", memory("facts/t", "t", LINES))
    world.settle()
    local = HELD[why].encode()
    (world.a.root / "facts/t.md").write_bytes(local)
    if remote_moves == "edit":
        world.b.write("facts/t.md", memory("facts/t", "t", LINES.replace("line 3", "B3")))
    else:
        world.b.delete("facts/t.md")
    world.b.write("facts/news.md", memory("facts/news", "news", "from B\n"))
    assert world.b.sync().pushed
    world.a.write("facts/mine.md", memory("facts/mine", "mine", "from A\n"))
    for _ in range(2):
        outcome = world.a.sync()
        assert outcome.ok, outcome
    assert (world.a.root / "facts/t.md").read_bytes() == local  # the local bytes stay
    assert (world.a.root / "facts/news.md").exists()  # the rest arrives ...
    assert world.b.sync().ok
    assert (world.b.root / "facts/mine.md").exists()  # ... and leaves
    remote_text = git(world.remote, "log", "--all", "-p")
    assert "S3cr3tPassw0rdXYZ" not in remote_text and "A's idea" not in remote_text
    copies = list((world.a.root / "facts").glob("t.conflict-*.md"))
    if remote_moves == "edit":  # the other device's version is beside the local bytes
        assert [c.read_text() for c in copies] == [
            memory("facts/t", "t", LINES.replace("line 3", "B3"))
        ]
        assert copies[0].name.startswith("t.conflict-desktop-")
        assert copies[0].name not in git(world.a.root, "status", "--porcelain")  # kept here
        assert copies[0].name not in world.b.files()
        assert any(
            "facts/t.md" in n and copies[0].name in n for n in outcome.notices + _told(world)
        )
    else:
        assert copies == []
    problems = sync_problems(world.a.config, world.a.paths)
    assert any(p.path == "facts/t.md" for p in problems), problems
    assert git(world.a.root, "diff", "--cached", "--name-only") == ""


def _told(world: World) -> list[str]:
    from memoryd.sync.state import load_state

    return [n["text"] for n in load_state(world.a.paths, world.a.root).notices]


def test_a_rename_elsewhere_onto_a_held_back_untracked_file_moves_it_aside(world: World) -> None:
    """Found by the simulation: git's diff saw the incoming file as a rename, not an add."""
    world.a.write("facts/x.md", memory("facts/x", "x", LINES))
    world.settle()
    secret = HELD["secret"].encode()
    (world.a.root / "facts/r2.md").write_bytes(secret)  # untracked, quarantined
    world.a.sync()
    (world.b.root / "facts/x.md").rename(world.b.root / "facts/r2.md")
    assert world.b.sync().pushed
    outcome = world.a.sync()
    assert outcome.ok, outcome
    [moved] = [n for n in outcome.notices if "your local file was moved to" in n]
    aside = moved.rsplit(" ", 1)[-1]
    assert (world.a.root / aside).read_bytes() == secret
    assert "S3cr3tPassw0rdXYZ" not in git(world.remote, "log", "--all", "-p")
