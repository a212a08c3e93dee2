"""Names that differ only in case (issue 38): a Mac's disk holds one file for both.

A Linux device's ``facts/Foo.md`` and ``facts/foo.md`` share one file on a case-insensitive,
case-preserving work tree: memoryd read foo.md's bytes for the ``Foo.md`` entry and
committed them as an edit, and Foo.md's text ended in no file on any device. Two devices
creating ``note.md`` and ``Note.md`` left both on the remote.

The Mac is a real case-insensitive file system where FUSE can be mounted (tests/sync/cifs.py,
skipped with the reason where it cannot), and a checkout with ``core.ignorecase`` and the
pair hard-linked (one file, two names) everywhere.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memoryd.paths import resolve_paths
from tests.helpers import git
from tests.sync.cifs import mounted
from tests.sync.world import Device, World, memory

UPPER = memory("facts/Foo", "upper", "the upper-case text\n")
LOWER = memory("facts/foo", "lower", "the lower-case text\n")


def _by_hand(world: World) -> None:
    """The pair, committed and pushed by a plain git (an old memoryd, a person)."""
    for rel, text in (("facts/Foo.md", UPPER), ("facts/foo.md", LOWER)):
        world.a.write(rel, text)
    git(world.a.root, "add", "facts")
    git(world.a.root, "commit", "-q", "-m", "by hand")
    git(world.a.root, "push", "-q", "origin", "main")


def _mac(world: World, tmp_path: Path, root: Path) -> Device:
    paths = resolve_paths({"MEMORYD_HOME": str(tmp_path / "mac")})
    paths.config_file.parent.mkdir(parents=True, exist_ok=True)
    paths.config_file.write_text("device: mac\n")
    subprocess.run(["git", "clone", "-q", str(world.remote), str(root)], check=True)
    return Device("mac", root, paths, world.oracle)


@pytest.fixture(params=["fuse", "links"])
def mac_disk(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[World], Device]]:
    """Makes the Mac: a clone on a case-insensitive disk."""
    if request.param == "links":

        def on_links(world: World) -> Device:
            mac = _mac(world, tmp_path, tmp_path / "mac-root")
            git(mac.root, "config", "core.ignorecase", "true")
            one = mac.root / "facts/foo.md"  # a Mac keeps one file: the last checked out
            os.unlink(mac.root / "facts/Foo.md")
            os.link(one, mac.root / "facts/Foo.md")
            return mac

        yield on_links
        return
    with mounted(tmp_path / "backing", tmp_path / "mnt") as disk:
        if isinstance(disk, str):
            pytest.skip(f"NO CASE-INSENSITIVE FUSE DISK, the 'links' run stands in: {disk}")

        def on_fuse(world: World) -> Device:
            mac = _mac(world, tmp_path, disk / "memory")
            assert git(mac.root, "config", "core.ignorecase").strip() == "true"  # git probed it
            return mac

        yield on_fuse


def _texts(root: Path) -> list[bytes]:
    return [p.read_bytes() for p in (root / "facts").iterdir() if p.is_file()]


def test_a_pair_one_mac_file_holds_is_never_committed_as_an_edit(
    world: World, mac_disk: Callable[[World], Device]
) -> None:
    _by_hand(world)
    mac = mac_disk(world)
    before = mac.head()
    outcome = mac.sync()
    assert outcome.ok, outcome
    assert git(mac.root, "show", "HEAD:facts/Foo.md") == UPPER  # neither was rewritten
    assert git(mac.root, "show", "HEAD:facts/foo.md") == LOWER
    assert {item["path"] for item in outcome.left_out} == {"facts/Foo.md", "facts/foo.md"}
    [said] = [n for n in outcome.notices if "differ only in case" in n]
    assert "this disk holds one file for both" in said
    texts = _texts(mac.root)
    assert UPPER.encode() in texts and LOWER.encode() in texts  # the twin: a named copy
    assert mac.head() != before  # the copy travels, so every device is told
    assert world.a.sync().ok
    texts = _texts(world.a.root)
    assert UPPER.encode() in texts and LOWER.encode() in texts
    again = mac.sync()
    assert again.ok and again.commits == [], again  # settled: one copy, once
    assert [p.name for p in (world.a.root / "facts").glob("*.conflict-*")] == [
        p.name for p in (mac.root / "facts").glob("*.conflict-*")
    ]


def test_a_new_name_folding_onto_a_tracked_one_becomes_a_conflict_copy(world: World) -> None:
    world.a.write("facts/note.md", memory("facts/note", "note", "lower\n"))
    world.settle()
    world.b.write("facts/Note.md", memory("facts/Note", "Note", "upper, later\n"))
    outcome = world.b.sync()
    assert outcome.pushed, outcome
    [said] = [n for n in outcome.notices if "differs only in case" in n]
    assert said.startswith("facts/Note.md differs only in case from facts/note.md")
    tracked = git(world.remote, "ls-tree", "-r", "--name-only", "main", "facts").split()
    assert "facts/Note.md" not in tracked
    [copy] = [p for p in tracked if ".conflict-desktop-" in p]
    assert "upper, later" in git(world.remote, "show", f"main:{copy}")


def test_two_devices_adding_a_name_in_two_cases_push_one_of_them(world: World) -> None:
    world.a.write("facts/note.md", memory("facts/note", "note", "from laptop\n"))
    world.b.write("facts/Note.md", memory("facts/Note", "Note", "from desktop\n"))
    assert world.a.sync().pushed
    outcome = world.b.sync()
    assert outcome.pushed, outcome
    assert any("which another device added" in n for n in outcome.notices), outcome
    world.settle()
    tracked = git(world.remote, "ls-tree", "-r", "--name-only", "main", "facts").split()
    folded = [p.casefold() for p in tracked]
    assert len(folded) == len(set(folded)), tracked
    for device in world.devices:
        texts = _texts(device.root)
        assert any(b"from laptop" in t for t in texts) and any(b"from desktop" in t for t in texts)


def test_a_rename_that_changes_only_case_stays_a_rename(world: World) -> None:
    world.a.write("facts/note.md", memory("facts/note", "note", "renamed\n"))
    world.settle()
    os.rename(world.a.root / "facts/note.md", world.a.root / "facts/Note.md")
    outcome = world.a.sync()
    assert outcome.pushed and not [n for n in outcome.notices if "only in case" in n], outcome
    tracked = git(world.remote, "ls-tree", "-r", "--name-only", "main", "facts").split()
    assert "facts/Note.md" in tracked and "facts/note.md" not in tracked
    assert not [p for p in tracked if ".conflict-" in p]


def test_a_name_a_mac_committed_offline_meets_its_case_twin_from_another_device(
    world: World, tmp_path: Path
) -> None:
    """The Mac committed note.md offline; another device pushed Note.md. The replay saves
    the Mac's text as a conflict copy of Note.md, and moving the work tree then found
    "Note.md" on the disk (note.md, one file) and moved it aside under that very copy's
    name: git refused to write the copy over it ("Untracked working tree file ... would be
    overwritten"), and every cycle failed the same way. Found by the long simulation (seed
    23). A tracked file in another case is git's to move; only untracked ones go aside."""
    with mounted(tmp_path / "backing", tmp_path / "mnt") as disk:
        if isinstance(disk, str):
            pytest.skip(f"NO CASE-INSENSITIVE FUSE DISK: {disk}")
        mac = _mac(world, tmp_path, disk / "memory")
        away = world.remote.with_name("away.git")
        world.remote.rename(away)
        mac.write("facts/note.md", memory("facts/note", "note", "from the mac, offline\n"))
        assert mac.sync().status == "offline"
        away.rename(world.remote)
        world.b.write("facts/Note.md", memory("facts/Note", "Note", "from the desktop\n"))
        assert world.b.sync().pushed
        outcome = mac.sync()
        assert outcome.ok and outcome.pushed, outcome
        assert [n for n in outcome.notices if "which another device added" in n], outcome
        texts = _texts(mac.root)
        assert [t for t in texts if b"from the mac" in t] and [
            t for t in texts if b"from the desktop" in t
        ], texts
        assert git(mac.root, "status", "--porcelain", "--untracked-files=all", "facts") == ""
        again = mac.sync()
        assert again.ok and again.commits == [], again
