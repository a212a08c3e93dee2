"""Devices that never settled (issue 16): compiled files, branch names, temp files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memoryd.conflicts import copy_path
from memoryd.sync.derived import recompile
from memoryd.sync.state import load_state
from tests.helpers import git, run_cli
from tests.sync.world import World, make_conflict, memory

LINES = "".join(f"line {n}\n" for n in range(1, 9))
LEAK = "db at postgres://admin:S3cr3tPassw0rdXYZ@db.internal:5432/app\n"


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


def _x_conflict(tmp_path: Path) -> tuple[World, str]:
    """facts/x.md changed on line 4 by both devices: the world and the copy's path."""
    return make_conflict(
        tmp_path, "facts/x.md", memory("facts/x", "shared", LINES),
        memory("facts/x", "shared", LINES.replace("line 4", "A4")),
        memory("facts/x", "shared", LINES.replace("line 4", "B4")),
    )  # fmt: skip


def test_conflict_copies_are_listed_in_conflicts_md_only(tmp_path: Path) -> None:
    world, copy = _x_conflict(tmp_path)
    copy_id = copy[:-3]
    for device in world.devices:
        assert copy_id not in device.read("facts/index.md")
        assert copy_id not in device.read("ROOT.md")
        assert copy_id in device.read("CONFLICTS.md")


def test_a_copy_made_or_deleted_by_hand_is_told_in_conflicts_md_by_the_next_cycle(
    world: World,
) -> None:
    """A cycle walks the root for conflict copies only when git sees one change (or while
    CONFLICTS.md exists): a copy put back by hand (from a backup) is listed by the next
    sync, on both devices, and its deletion by hand takes CONFLICTS.md away again."""
    world.a.write("facts/x.md", memory("facts/x", "shared", LINES))
    world.settle()
    text = memory("facts/x", "shared", LINES.replace("line 4", "kept aside"))
    copy = copy_path("facts/x.md", "desktop", text.encode(), set())
    world.a.write(copy, text)
    world.a.write("facts/y.md", memory("facts/y", "an edit beside it", "y\n"))
    assert world.a.sync().pushed
    world.settle()
    for device in world.devices:
        assert copy[:-3] in device.read("CONFLICTS.md")
    world.b.delete(copy)
    assert world.b.sync().pushed
    world.settle()
    for device in world.devices:
        assert not (device.root / "CONFLICTS.md").exists()
        assert copy not in device.files()
    world.a.write("facts/y.md", memory("facts/y", "an edit beside it", "y, again\n"))
    assert world.a.sync().pushed  # an edit's cycle: no copy changed, none listed
    assert not (world.a.root / "CONFLICTS.md").exists()


def test_a_tracked_conflict_copy_held_back_on_one_device_lets_devices_settle(
    tmp_path: Path,
) -> None:
    """A conflict copy the user pasted conflict markers into on one device: its index.md
    listed the copy (committed text of a held-back file), the other's did not, and the two
    rewrote each other's index.md forever, a commit per cycle per device."""
    world, rel = _x_conflict(tmp_path)
    copy = world.b.root / rel
    copy.write_bytes(copy.read_bytes() + b"<<<<<<< mine\nA\n=======\nB\n>>>>>>> theirs\n")
    recompile(world.b.root_config, world.b.config)
    for _ in range(2):
        for device in world.devices:
            assert device.sync().ok
    for device in world.devices:
        outcome = device.sync()
        assert outcome.commits == [] and outcome.action == "up to date", (device.name, outcome)
        assert rel[:-3] not in device.read("facts/index.md")


def _join_on_master(world: World) -> None:
    """Device B made its own repo with plain 'git init' (branch master), then added the remote."""
    import shutil

    from memoryd.roots import init_root

    shutil.rmtree(world.b.root)
    init_root(world.b.root)
    git(world.b.root, "init", "-q", "-b", "master")
    git(world.b.root, "remote", "add", "origin", str(world.remote))


def test_a_device_on_master_follows_the_remotes_main(world: World) -> None:
    world.a.write("facts/a.md", memory("facts/a", "from a", "alpha\n"))
    world.a.sync()
    _join_on_master(world)
    world.b.write("facts/b.md", memory("facts/b", "from b", "beta\n"))
    outcome = world.b.sync()
    assert outcome.ok and outcome.pushed, outcome
    assert git(world.remote, "branch", "--list").split() == ["*", "main"]  # no second branch
    assert "alpha" in world.b.read("facts/a.md")
    world.a.sync()
    assert "beta" in world.a.read("facts/b.md")
    assert world.b.head() == world.remote_head() == world.a.head()


def test_a_remote_without_a_default_branch_is_refused_clearly(world: World) -> None:
    world.a.write("facts/a.md", memory("facts/a", "from a", "alpha\n"))
    world.a.sync()
    git(world.remote, "branch", "other", "main")
    git(world.remote, "symbolic-ref", "HEAD", "refs/heads/trunk")  # names no branch
    _join_on_master(world)
    outcome = world.b.sync()
    assert outcome.status == "refused", outcome
    assert outcome.error == (
        "cannot tell which branch of origin to sync with: it has main, other and no default"
    )
    assert outcome.hint == (
        f"pick one: git -C {world.b.root} branch --set-upstream-to=origin/<branch> "
        "(after git fetch origin)"
    )


def test_old_memoryd_temp_files_are_cleaned_up_and_only_those(world: World) -> None:
    import os

    facts = world.a.root / "facts"
    facts.mkdir(exist_ok=True)
    old, fresh = facts / ".memoryd-tmp-k3x_9qzb", facts / ".memoryd-tmp-a1b2c3d4"
    other = facts / ".memoryd-tmp-notes.md"  # not a name memoryd makes
    for path in (old, fresh, other):
        path.write_bytes(b"half-written by a killed write")
    os.utime(old, (1, 1))
    os.utime(other, (1, 1))
    world.a.write("facts/a.md", memory("facts/a", "a", "a\n"))
    outcome = world.a.sync()
    assert outcome.ok
    assert not old.exists() and fresh.exists() and other.exists()
    assert ".memoryd-tmp-k3x_9qzb" not in git(world.a.root, "status", "--porcelain")


def test_a_tracked_held_back_memory_is_compiled_as_committed(world: World) -> None:
    """Found by the simulation: left out of index.md on its own device only, it never settled."""
    world.a.write("facts/t.md", memory("facts/t", "as committed", LINES))
    world.settle()
    held = memory("facts/t", "a summary that must not travel", LINES)
    held += "<<<<<<< mine\nA\n=======\nB\n>>>>>>> theirs\n"
    (world.a.root / "facts/t.md").write_text(held)
    recompile(world.a.root_config, world.a.config)
    for _ in range(2):
        world.a.sync()
        world.b.sync()
    assert world.a.read("facts/index.md") == world.b.read("facts/index.md")
    assert "as committed" in world.a.read("facts/index.md")
    assert "must not travel" not in git(world.remote, "log", "--all", "-p")
    assert [world.a.sync().commits, world.b.sync().commits] == [[], []]
    assert world.a.head() == world.b.head() == world.remote_head()
    world.oracle.versions.clear()


def test_a_clone_of_a_remote_whose_head_names_no_branch_syncs_with_the_one_it_has(
    tmp_path: Path,
) -> None:
    """A bare remote made with -b main, a first device on master: its push left the remote's
    HEAD naming main, which nobody pushed. 'git clone' then set the upstream to that missing
    main, and memoryd pushed main as a second branch: the devices on it and the device on
    master never saw each other's memories again, and every sync said ok."""
    import subprocess

    from memoryd.roots import init_root
    from tests.sync.world import Oracle, _device

    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    oracle = Oracle()
    a = _device("laptop", tmp_path / "a", oracle)
    init_root(a.root)
    git(a.root, "init", "-q", "-b", "master")
    git(a.root, "remote", "add", "origin", str(remote))
    a.write("facts/a.md", memory("facts/a", "from a", "alpha\n"))
    assert a.sync().pushed
    b = _device("desktop", tmp_path / "b", oracle)
    subprocess.run(["git", "clone", "-q", str(remote), str(b.root)], check=True)
    b.write("facts/b.md", memory("facts/b", "from b", "beta\n"))
    outcome = b.sync()
    assert outcome.ok and outcome.pushed, outcome
    assert git(remote, "for-each-ref", "--format=%(refname)", "refs/heads").split() == [
        "refs/heads/master"
    ]
    assert (
        "origin has no branch main (the upstream of main here): main syncs with origin/master, "
        "its only branch, from now on (instead of pushing main as a second branch)"
    ) in outcome.notices
    assert "alpha" in b.read("facts/a.md")
    assert git(b.root, "rev-parse", "--abbrev-ref", "main@{upstream}").strip() == "origin/master"
    assert a.sync().ok
    assert "beta" in a.read("facts/b.md")
    again = b.sync()
    assert (again.action, again.notices) == ("up to date", [])
    assert a.head() == b.head() == git(remote, "rev-parse", "master").strip()
    assert not oracle.lost([remote, a.root, b.root], [a.root, b.root])


def test_a_remote_that_renamed_its_default_branch_is_followed(world: World) -> None:
    """GitHub's rename (master to main, here main to trunk): every clone's upstream, and the
    default branch memoryd kept, still named the old branch, and the next sync pushed it back
    as a second branch, where only the devices that had not noticed met."""
    world.a.write("facts/a.md", memory("facts/a", "from a", "alpha\n"))
    world.settle()  # both have seen origin's default branch
    git(world.remote, "branch", "-m", "main", "trunk")
    world.a.write("facts/a2.md", memory("facts/a2", "from a", "after the rename\n"))
    world.b.write("facts/b.md", memory("facts/b", "from b", "beta\n"))
    for device in world.devices:
        outcome = device.sync()
        assert outcome.ok and outcome.pushed, outcome
    assert git(world.remote, "for-each-ref", "--format=%(refname)", "refs/heads").split() == [
        "refs/heads/trunk"
    ]
    assert world.a.sync().ok
    for device in world.devices:
        assert "beta" in device.read("facts/b.md")
        assert "after the rename" in device.read("facts/a2.md")
    assert world.a.head() == world.b.head() == git(world.remote, "rev-parse", "trunk").strip()


def test_many_conflicts_in_one_cycle_are_one_line_and_one_notice(world: World) -> None:
    """Ten memories edited on both devices: 'memoryd sync' printed ten conflict lines, and
    the state's last 20 notices (what the ui shows) lost every other one to them."""
    names = [f"facts/m{i}.md" for i in range(10)]
    for name in names:
        world.a.write(name, memory(name[:-3], "shared", LINES))
    world.settle()
    for name in names:
        world.a.write(name, memory(name[:-3], "shared", LINES.replace("line 4", "A4")))
        world.b.write(name, memory(name[:-3], "shared", LINES.replace("line 4", "B4")))
    world.a.sync()
    saved = os.environ["MEMORYD_HOME"]
    os.environ["MEMORYD_HOME"] = str(world.b.paths.home)
    try:
        done = run_cli("sync")
    finally:
        os.environ["MEMORYD_HOME"] = saved
    assert done.returncode == 0, done.stdout + done.stderr
    fix = (
        "'memoryd conflicts' lists the copies, 'memoryd resolve ID --keep local|remote|both' "
        "settles each"
    )
    line = (
        "conflict: 10 conflict copies saved beside facts/m0.md, facts/m1.md, facts/m2.md and "
        f"7 more (changed on two devices); {fix}"
    )
    assert [x for x in done.stdout.splitlines() if "conflict: " in x] == [f"  {line}"]
    notices = [n["text"] for n in load_state(world.b.paths, world.b.root).notices]
    assert [n for n in notices if n.startswith("conflict")] == [line]
    assert len(list((world.b.root / "facts").glob("*.conflict-*.md"))) == 10
