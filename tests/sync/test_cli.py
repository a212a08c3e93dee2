"""The sync commands through the real CLI: init's git repo, sync, conflicts, resolve."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.helpers import git, run_cli
from tests.sync.world import World, make_world, memory, three_of_four_deleted, two_conflicts

LINES = "".join(f"line {n}\n" for n in range(1, 6))


def _cli(world_device_home: Path, *args: str) -> tuple[int, str, str]:
    env_home = os.environ["MEMORYD_HOME"]
    os.environ["MEMORYD_HOME"] = str(world_device_home)
    try:
        done = run_cli(*args)
    finally:
        os.environ["MEMORYD_HOME"] = env_home
    return done.returncode, done.stdout, done.stderr


@pytest.fixture
def conflicted(tmp_path: Path) -> tuple[World, str]:
    world = make_world(tmp_path)
    for device in world.devices:
        device.paths.config_file.write_text(f"device: {device.name}\n")
    world.a.write("facts/x.md", memory("facts/x", "shared", LINES))
    world.settle()
    world.a.write("facts/x.md", memory("facts/x", "shared", LINES.replace("line 2", "A2")))
    world.b.write("facts/x.md", memory("facts/x", "shared", LINES.replace("line 2", "B2")))
    world.a.sync()
    outcome = world.b.sync()
    world.settle()
    return world, outcome.conflicts[0]["copy"]


def test_init_makes_the_global_root_a_git_repository(isolated_home: Path) -> None:
    done = run_cli("init", "--json")
    assert done.returncode == 0, done.stderr
    assert ".git/" in json.loads(done.stdout)["created"]
    root = isolated_home / "memory"
    assert git(root, "rev-parse", "--show-toplevel").strip() == str(root)
    again = run_cli("init", "--json")
    assert ".git/" not in json.loads(again.stdout)["created"]


def test_init_inside_another_repository_says_memory_goes_onto_its_branch(
    isolated_home: Path,
) -> None:
    """A home folder kept as a dotfiles repository: init gave the global root no repository
    of its own, said nothing, and every sync committed memories onto the dotfiles branch and
    pushed it (to a remote that is often public)."""
    isolated_home.mkdir(parents=True, exist_ok=True)
    git(isolated_home, "init", "-q")
    done = run_cli("init")
    assert done.returncode == 0, done.stderr
    root, config = isolated_home / "memory", isolated_home / "config.yaml"
    assert ".git/" not in done.stdout
    assert done.stderr == (
        f"memoryd: WARNING: {root} is inside the git repository {isolated_home.resolve()}: "
        "memoryd commits memories onto its branch and pushes that branch to its remote\n"
        f"  hint: give memory a repository of its own (git init {root}; ignore it in "
        f"{isolated_home.resolve()}), or keep it on this machine: sync: {{push: false, "
        f"pull: false}} for this root in {config}\n"
    )
    git(root, "init", "-q")  # the first way out: no warning once it is its own repository
    assert run_cli("init").stderr == ""


def test_sync_command_commits_and_reports(isolated_home: Path) -> None:
    assert run_cli("init").returncode == 0
    root = isolated_home / "memory"
    (root / "facts/a.md").write_text(memory("facts/a", "a", "a\n"))
    done = run_cli("sync", "--json")
    assert done.returncode == 0, done.stderr
    [outcome] = json.loads(done.stdout)
    assert outcome["status"] == "ok" and len(outcome["commits"]) == 1
    assert outcome["action"] == "committed locally (no remote 'origin')"
    assert "facts/a.md" in git(root, "ls-files")
    text = run_cli("sync", "--root", str(root))
    assert text.returncode == 0 and text.stdout.startswith(f"{root}: ok")


def test_sync_exits_1_naming_each_file_it_held_back_and_the_fix(isolated_home: Path) -> None:
    """'memoryd sync && ...' went on after a secret was kept out ('quarantined: ... not
    committed', exit 0) while 'memoryd scan' exits 1 on the same finding."""
    assert run_cli("init").returncode == 0
    root = isolated_home / "memory"
    leak = "connect with postgres://admin:S3cr3tPassw0rdXYZ@db.internal:5432/app\n"
    (root / "facts/db.md").write_text(memory("facts/db", "database", leak))
    (root / "facts/big.md").write_text(memory("facts/big", "big", "x" * 1_100_000 + "\n"))
    (root / "facts/fine.md").write_text(memory("facts/fine", "fine", "nothing secret\n"))
    done = run_cli("sync")
    assert done.returncode == 1, done.stdout
    assert "facts/fine.md" in git(root, "ls-files")
    assert done.stdout.splitlines()[1:] == [
        "  quarantined: facts/db.md:6 url-credentials (S3c…XYZ): not committed",
        "    fix: remove the secret (or allow it: see memoryd scan); it syncs once it is gone",
        "  left out: facts/big.md (1100047 bytes, over the 1048576-byte limit "
        "(search.max_file_bytes)): not committed",
        "    fix: split it into smaller memories, or raise search.max_file_bytes in "
        "config.yaml; it syncs once it fits",
    ]
    assert run_cli("scan", str(root / "facts/db.md")).returncode == 1
    (root / "facts/db.md").write_text(memory("facts/db", "database", "use the vault\n"))
    (root / "facts/big.md").unlink()
    assert run_cli("sync").returncode == 0


def test_sync_command_unknown_root_is_an_error(isolated_home: Path, tmp_path: Path) -> None:
    done = run_cli("sync", "--root", str(tmp_path / "nowhere"))
    assert done.returncode == 1
    assert f"{tmp_path / 'nowhere'} is not a configured memory root" in done.stderr


def test_sync_command_mass_delete_exit_code_and_flag(isolated_home: Path) -> None:
    assert run_cli("init").returncode == 0
    root = isolated_home / "memory"
    three_of_four_deleted(root)
    paused = run_cli("sync")
    assert paused.returncode == 1
    assert "3 of 4 memories deleted in one go: nothing committed" in paused.stdout
    assert "--allow-mass-delete" in paused.stdout
    assert run_cli("sync", "--allow-mass-delete").returncode == 0
    assert git(root, "ls-files", "facts").split() == ["facts/m3.md"]


def test_conflicts_lists_the_copy_on_both_devices(conflicted: tuple[World, str]) -> None:
    world, copy = conflicted
    for device in world.devices:
        code, out, _ = _cli(device.home, "conflicts", "--json")
        assert code == 0
        [item] = json.loads(out)
        assert item["id"] == copy[:-3] and item["path"] == "facts/x.md"
        assert item["device"] == "desktop"
        assert item["path_exists"] is True  # a JSON boolean, not the string "true"


@pytest.mark.parametrize(
    ("keep", "at_path", "extra"),
    [("remote", "A2", None), ("local", "B2", None), ("both", "A2", "facts/x-desktop.md")],
)
def test_resolve_settles_one_conflict(
    conflicted: tuple[World, str], keep: str, at_path: str, extra: str | None
) -> None:
    world, copy = conflicted
    code, _out, err = _cli(world.a.home, "resolve", copy[:-3], "--keep", keep)
    assert code == 0, err
    assert at_path in world.a.read("facts/x.md")
    assert not (world.a.root / copy).exists()
    assert not (world.a.root / "CONFLICTS.md").exists()
    if keep == "local":
        assert "conflict_of" not in world.a.read("facts/x.md")
        assert "id: facts/x\n" in world.a.read("facts/x.md")
    if extra:
        kept = world.a.read(extra)
        assert "B2" in kept and "id: facts/x-desktop" in kept and "conflict_of" not in kept
    world.settle()
    assert _cli(world.b.home, "conflicts", "--json")[1].strip() == "[]"


def test_resolve_unknown_id(isolated_home: Path) -> None:
    assert run_cli("init").returncode == 0
    done = run_cli("resolve", "facts/nothing", "--keep", "local")
    assert done.returncode == 1
    assert "no sync conflict with id 'facts/nothing'" in done.stderr


def test_inspect_reports_conflicts_and_pauses(conflicted: tuple[World, str]) -> None:
    world, copy = conflicted
    for n in range(4):
        world.a.write(f"facts/m{n}.md", memory(f"facts/m{n}", "m", f"{n}\n"))
    world.a.sync()
    for n in range(4):
        world.a.delete(f"facts/m{n}.md")
    assert world.a.sync().status == "paused"
    code, out, _ = _cli(world.a.home, "inspect", "--json")
    assert code == 1
    text = json.dumps(json.loads(out))
    assert "sync.conflicts" in text and copy in text
    assert "sync.state" in text and "sync paused: 4 of" in text


def test_status_lists_paused_roots_and_unpushed_commits(isolated_home: Path) -> None:
    from memoryd.daemon.status import StatusBoard
    from memoryd.paths import resolve_paths
    from memoryd.runlock import DaemonLock
    from memoryd.sync.state import SyncState, save_state

    assert run_cli("init").returncode == 0
    paths = resolve_paths()
    root = isolated_home / "memory"
    paused = {"reason": "5 of 6 memories deleted in one go", "deleted": 5, "total": 6}
    save_state(paths, SyncState(root=str(root), paused=paused, not_pushed=2))
    StatusBoard(paths.status_file).root(root, mode="events", state="watching")
    with DaemonLock(paths.lock_file):
        done = run_cli("status")
        data = json.loads(run_cli("status", "--json").stdout)
    assert done.returncode == 0, done.stderr
    assert f"  sync: {root}: sync paused: 5 of 6 memories deleted in one go" in done.stdout
    assert f"  sync: {root}: 2 commit(s) not pushed" in done.stdout
    assert {p["code"] for p in data["sync"]} == {"sync.paused", "sync.not-pushed"}


@pytest.mark.parametrize("keep", ["both", "remote", "local"])
def test_resolve_all_settles_every_conflict_only_when_asked(tmp_path: Path, keep: str) -> None:
    world = make_world(tmp_path)
    for device in world.devices:
        device.paths.config_file.write_text(f"device: {device.name}\n")
    copies = two_conflicts(world, LINES)
    assert len(copies) == 2
    for _ in range(2):  # sync alone never settles anything
        world.a.sync()
    assert all((world.a.root / c).exists() for c in copies)
    code, out, err = _cli(world.a.home, "resolve", "--all", "--keep", keep)
    assert code == 0, err
    assert out.splitlines()[-1] == "settled 2 conflict(s), 0 left pending (the next sync shares it)"
    assert not any((world.a.root / c).exists() for c in copies)
    for name in ("x", "y"):
        text = world.a.read(f"facts/{name}.md")
        assert ("line B" if keep == "local" else "line A") in text
        if keep == "both":
            assert "line B" in world.a.read(f"facts/{name}-desktop.md")
    world.settle()
    assert _cli(world.b.home, "conflicts", "--json")[1].strip() == "[]"


def test_resolve_all_keep_local_leaves_a_path_with_two_copies_pending(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    for device in world.devices:
        device.paths.config_file.write_text(f"device: {device.name}\n")
    world.a.write("facts/x.md", memory("facts/x", "x", LINES))
    for copy in ("facts/x.conflict-desktop-20261101T000000Z.md",
                 "facts/x.conflict-tablet-20261102T000000Z.md"):  # fmt: skip
        world.a.write(copy, memory("facts/x", "x", LINES.replace("3", copy[18:24])))
    code, out, _ = _cli(world.a.home, "resolve", "--all", "--keep", "local")
    assert code == 1
    assert out.splitlines()[-1] == "settled 0 conflict(s), 2 left pending"
    assert "facts/x.md has 2 conflict copies and only one text fits at the path" in out
    assert len(list((world.a.root / "facts").glob("x.conflict-*"))) == 2
    world.oracle.versions.clear()


def test_recall_finds_a_conflict_copy_and_marks_it(conflicted: tuple[World, str]) -> None:
    world, copy = conflicted
    code, out, err = _cli(world.a.home, "recall", "B2", "--json")
    assert code == 0, err
    [hit] = [h for h in json.loads(out) if h["id"] == copy[:-3]]
    assert hit["conflict_of"] == "facts/x.md" and hit["conflict_device"] == "desktop"
    code, text, _ = _cli(world.a.home, "recall", "B2")
    assert "   sync conflict copy: desktop's version of facts/x.md (see CONFLICTS.md)" in text


def test_the_users_index_never_shows_memories_deleted_when_the_branch_moves(
    isolated_home: Path,
) -> None:
    """A new root's first commit moved the branch while .git/index did not exist yet: for
    as long as the refresh took (18 s at 20,000 files) 'git status' showed every memory
    staged for deletion, and a 'git commit' typed then would record it. git's
    reference-transaction hook looks at the index the moment the branch has moved."""
    assert run_cli("init").returncode == 0
    root = isolated_home / "memory"
    for n in range(3):
        (root / f"facts/m{n}.md").write_text(memory(f"facts/m{n}", f"m{n}", f"{n}\n"))
    seen = root.parent / "seen-by-hook"
    hook = root / ".git/hooks/reference-transaction"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(
        "#!/bin/sh\n"
        '[ "$1" = committed ] || exit 0\n'
        f"git diff --cached --name-status HEAD >> {seen}\n"
        f"echo moved >> {seen}\n"
    )
    hook.chmod(0o755)
    for n in range(3, 5):  # the first commit, then one more
        done = run_cli("sync")
        assert done.returncode == 0, done.stdout
        (root / f"facts/m{n}.md").write_text(memory(f"facts/m{n}", f"m{n}", f"{n}\n"))
    moves = seen.read_text().splitlines()  # each ref moved: the branch's, memoryd's keep refs
    assert set(moves) == {"moved"} and len(moves) >= 2  # nothing staged, nothing lost
    assert git(root, "status", "--porcelain") == "?? facts/m4.md\n"


def test_a_copy_is_one_problem_and_context_never_injects_it(
    conflicted: tuple[World, str],
) -> None:
    """A copy keeps the other version's bytes, 'id:' line and all: inspect also called it
    malformed, with a fix that would edit the bytes resolve uses, and context spent two of
    its four hits on the copy and on CONFLICTS.md."""
    world, copy = conflicted
    code, out, _ = _cli(world.b.home, "inspect", "--json")
    assert code == 1
    about_copy = [
        (p["check"], p["message"]) for p in json.loads(out)["problems"] if copy in p["path"]
    ]
    assert about_copy == [
        ("sync.conflicts", "sync conflict: desktop's version of facts/x.md (both versions kept)")
    ]  # not also "id 'facts/x' does not match its path", whose fix edits the copy
    code, out, _ = _cli(world.b.home, "recall", "--json", "shared line")
    recalled = [hit["id"] for hit in json.loads(out)]
    assert copy.removesuffix(".md") in recalled  # recall still finds it, marked
    code, out, err = _cli(world.b.home, "context", "--json", "shared line")
    assert code == 0, err
    block = json.loads(out)
    hits = block["text"].split("## Relevant memories", 1)[1]
    assert "### facts/x (global fact)" in hits
    assert "conflict-" not in hits and "CONFLICTS" not in hits
    assert [e["id"] for e in block["entries"]] == ["facts/x"]  # the copy took a second hit
