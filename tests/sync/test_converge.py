"""Devices that meet the same conflict, or a rewritten remote, converge (issue 38).

Conflict copies were named by device and UTC time: a replay run again (a kill between
writing the work tree and moving the branch) saved the same text a second time under a
new name, and after a history rewrite every differing memory became a copy on every
device. Copies are now named by their content, and a rewritten remote is merged from
the fork point.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memoryd.sync.git import Git
from tests.helpers import git
from tests.sync.world import World, memory


def _copies(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "facts").glob("*.conflict-*"))


def test_a_replay_cut_short_and_run_again_makes_one_copy_of_a_text(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    world.a.write("facts/x.md", memory("facts/x", "x", "base\n"))
    world.settle()
    world.a.write("facts/x.md", memory("facts/x", "x", "laptop's line\n"))
    world.b.write("facts/x.md", memory("facts/x", "x", "desktop's line\n"))
    assert world.a.sync().pushed
    real = Git.update_ref

    def cut(self: Git, ref: str, new: str, old: str | None, reason: str, **kw: str) -> None:
        if reason == "memoryd: replay local commits":  # the files moved; the branch did not
            raise KeyboardInterrupt
        real(self, ref, new, old, reason, **kw)

    monkeypatch.setattr(Git, "update_ref", cut)
    with pytest.raises(KeyboardInterrupt):
        world.b.sync()
    monkeypatch.undo()
    [copy] = _copies(world.b.root)
    assert "desktop's line" in (world.b.root / "facts" / copy).read_text()
    world.settle()
    for device in world.devices:
        assert _copies(device.root) == [copy], device.name


def _rewrite(world: World, tmp_path: Path, edits: dict[str, tuple[str, str]]) -> None:
    """Rewrite the remote's whole history into one new commit (as filter-repo or a squash
    with an edit does), with ``edits`` (path: (old, new) text) in its tree, force-pushed."""
    work = tmp_path / "rewrite"
    subprocess.run(["git", "clone", "-q", str(world.remote), str(work)], check=True)
    for rel, (old, new) in edits.items():
        text = (work / rel).read_text()
        assert old in text
        (work / rel).write_text(text.replace(old, new))
    git(work, "add", "-A")
    tree = git(work, "write-tree").strip()
    commit = git(work, "commit-tree", tree, "-m", "rewritten").strip()
    git(work, "push", "-q", "--force", "origin", f"{commit}:refs/heads/main")


def _three(world: World) -> None:
    for name in ("f1", "f2", "f3"):
        body = "".join(f"{name} line {n}\n" for n in range(6))
        world.a.write(f"facts/{name}.md", memory(f"facts/{name}", name, body))
    world.settle()


def test_a_rewritten_remote_is_taken_as_it_is_by_a_device_with_no_change(
    world: World, tmp_path: Path
) -> None:
    _three(world)
    _rewrite(
        world, tmp_path, {f"facts/{n}.md": (f"{n} line 0", f"{n} PURGED") for n in ("f1", "f2")}
    )
    for device in world.devices:
        outcome = device.sync()
        assert outcome.ok and outcome.conflicts == [], (device.name, outcome)
        assert _copies(device.root) == [], device.name
        assert "f1 PURGED" in device.read("facts/f1.md")
        assert device.head() == world.remote_head(), device.name


def test_a_rewritten_remote_merges_an_unpushed_edit_from_the_fork_point(
    world: World, tmp_path: Path
) -> None:
    _three(world)
    world.a.write("facts/f3.md", world.a.read("facts/f3.md").replace("f3 line 2", "f3 EDITED"))
    world.a.write("facts/f1.md", world.a.read("facts/f1.md").replace("f1 line 4", "f1 EDITED"))
    _rewrite(
        world, tmp_path, {f"facts/{n}.md": (f"{n} line 0", f"{n} PURGED") for n in ("f1", "f2")}
    )
    outcome = world.a.sync()
    assert outcome.pushed and outcome.conflicts == [], outcome
    assert _copies(world.a.root) == []
    assert "f3 EDITED" in world.a.read("facts/f3.md")  # untouched by the rewrite: an edit
    assert "f1 PURGED" in world.a.read("facts/f1.md")  # both changed f1, other lines: merged
    assert "f1 EDITED" in world.a.read("facts/f1.md")
    world.settle()
    assert _copies(world.b.root) == []
    assert "f3 EDITED" in world.b.read("facts/f3.md")
