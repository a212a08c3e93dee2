"""The sync issue's scenarios: two devices, one bare remote, nothing lost."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from memoryd.compile.writer import compile_root
from memoryd.conflicts import blob_id
from memoryd.sync.derived import recompile
from memoryd.sync.report import sync_problems
from memoryd.sync.state import load_state
from tests.helpers import git
from tests.secrets.fake_tokens import github
from tests.sync.world import Device, World, memory

LINES = "".join(f"line {n}\n" for n in range(1, 9))


def test_first_sync_pushes_and_second_device_is_equal(world: World) -> None:
    world.b.sync()
    world.settle()
    assert "ROOT.md" in world.b.files()
    assert ".state.json" in (world.a.root / ".gitignore").read_text()


def test_different_files_on_each_side(world: World) -> None:
    world.a.write("facts/a.md", memory("facts/a", "from a", "alpha\n"))
    world.b.write("facts/b.md", memory("facts/b", "from b", "beta\n"))
    assert world.a.sync().pushed
    outcome = world.b.sync()
    assert outcome.pushed and outcome.action.startswith("rebased")
    assert outcome.conflicts == [] and outcome.backup_ref
    world.settle()
    for device in world.devices:
        assert {"facts/a.md", "facts/b.md"} <= device.files()
        assert not list(device.root.rglob("*.conflict-*"))


def test_same_file_different_lines_merges_without_copy(world: World) -> None:
    world.a.write("facts/x.md", memory("facts/x", "shared", LINES))
    world.settle()
    world.a.write("facts/x.md", memory("facts/x", "shared", LINES.replace("line 1\n", "one A\n")))
    world.b.write("facts/x.md", memory("facts/x", "shared", LINES.replace("line 8\n", "eight B\n")))
    world.a.sync()
    outcome = world.b.sync()
    assert outcome.conflicts == []
    world.settle()
    for device in world.devices:
        text = device.read("facts/x.md")
        assert "one A" in text and "eight B" in text
        assert not list(device.root.rglob("*.conflict-*"))


def test_same_line_keeps_both_with_a_conflict_copy_on_both_devices(world: World) -> None:
    world.a.write("facts/x.md", memory("facts/x", "shared", LINES))
    world.settle()
    world.a.write("facts/x.md", memory("facts/x", "shared", LINES.replace("line 4", "A says 4")))
    world.b.write("facts/x.md", memory("facts/x", "shared", LINES.replace("line 4", "B says 4")))
    world.a.sync()
    outcome = world.b.sync()
    assert len(outcome.conflicts) == 1
    copy = outcome.conflicts[0]["copy"]
    mine = memory("facts/x", "shared", LINES.replace("line 4", "B says 4")).encode()
    assert copy == f"facts/x.conflict-desktop-{blob_id(mine)[:10]}.md"  # named by its text
    world.settle()
    for device in world.devices:
        assert "A says 4" in device.read("facts/x.md")  # the remote's text stays at the path
        local = device.read(copy)  # B's exact text: the name and CONFLICTS.md mark it
        assert local == memory("facts/x", "shared", LINES.replace("line 4", "B says 4"))
        assert copy[:-3] in device.read("CONFLICTS.md")  # an agent reading its memory sees it
    notices = load_state(world.b.paths, world.b.root).notices
    assert any(copy in n["text"] for n in notices)  # the user is told


def test_delete_against_edit_keeps_the_edit(world: World) -> None:
    world.a.write("facts/x.md", memory("facts/x", "doomed", "keep me\n"))
    world.settle()
    world.a.delete("facts/x.md")
    world.b.write("facts/x.md", memory("facts/x", "doomed", "keep me, edited on B\n"))
    world.a.sync()
    outcome = world.b.sync()
    assert any("delete of facts/x.md on another device lost" in n for n in outcome.notices)
    world.settle()
    for device in world.devices:
        assert "edited on B" in device.read("facts/x.md")


def test_edit_against_delete_keeps_the_edit(world: World) -> None:
    world.a.write("facts/x.md", memory("facts/x", "doomed", "keep me\n"))
    world.settle()
    world.a.write("facts/x.md", memory("facts/x", "doomed", "keep me, edited on A\n"))
    world.b.delete("facts/x.md")
    world.a.sync()
    outcome = world.b.sync()
    assert any("your delete of facts/x.md lost" in n for n in outcome.notices)
    world.settle()
    for device in world.devices:
        assert "edited on A" in device.read("facts/x.md")


@pytest.mark.parametrize("renamer_first", [False, True])
def test_rename_against_edit_lands_the_edit_at_the_new_path(
    world: World, renamer_first: bool
) -> None:
    body = "".join(f"fact number {n} about the build\n" for n in range(12))
    world.a.write("facts/old.md", memory("facts/old", "renamed", body))
    world.settle()
    (world.a.root / "facts/old.md").rename(world.a.root / "facts/new.md")
    world.b.write("facts/old.md", memory("facts/old", "renamed", body.replace("number 5", "FIVE")))
    order = (world.a, world.b) if renamer_first else (world.b, world.a)
    for device in order:
        device.sync()
    world.settle()
    for device in world.devices:
        assert not (device.root / "facts/old.md").exists()
        assert "FIVE" in device.read("facts/new.md")


def test_an_edit_of_a_path_renamed_and_then_made_again_there_follows_the_rename(
    world: World, tmp_path: Path
) -> None:
    """Another device renamed old.md to new.md, and then (a modify/delete kept on a third
    device) old.md came back with an older copy of its text. Compared with the base the
    remote's old.md looks edited, so this device's edit was line-merged into it: the older
    copy's lines undid the base's, and this device's version (the base's lines with its
    edit) was in no file. Found by the long simulation (seed 18, step 155). The remote's
    history deleted old.md after the base, so its old.md is another file: the edit follows
    the rename to new.md, and the old.md that came back stays as it is."""
    world.a.write("facts/old.md", memory("facts/old", "moved", LINES))
    world.settle()
    world.b.write("facts/old.md", memory("facts/old", "moved", LINES.replace("line 2", "B2")))
    world.settle()  # the base: line 2 edited
    world.a.write("facts/old.md", memory("facts/old", "moved", LINES.replace("line 2", "B2")
                                         .replace("line 6", "A6")))  # fmt: skip
    third = tmp_path / "third"
    subprocess.run(["git", "clone", "-q", str(world.remote), str(third)], check=True)
    git(third, "mv", "facts/old.md", "facts/new.md")
    git(third, "commit", "-q", "-m", "rename")
    older = memory("facts/old", "moved", LINES.replace("line 4", "older 4"))
    (third / "facts/old.md").write_text(older)
    world.oracle.record("facts/old.md", older.encode())
    git(third, "add", "facts/old.md")
    git(third, "commit", "-q", "-m", "an older copy kept against the rename")
    git(third, "push", "-q", "origin", "HEAD:main")
    outcome = world.a.sync()
    assert outcome.ok and outcome.conflicts == [], outcome
    world.settle()
    for device in world.devices:
        assert device.read("facts/new.md") == memory(
            "facts/old", "moved", LINES.replace("line 2", "B2").replace("line 6", "A6")
        )
        assert device.read("facts/old.md") == older


def test_an_edit_from_elsewhere_follows_a_rename_made_here_before_the_path_came_back(
    world: World,
) -> None:
    """The same, mirrored: offline, this device renamed old.md to new.md, synced (a local
    commit), then made old.md again from an older copy; another device edited old.md.
    The other device's edit follows the rename to new.md; old.md stays this device's."""
    world.a.write("facts/old.md", memory("facts/old", "moved", LINES))
    world.settle()
    world.b.write("facts/old.md", memory("facts/old", "moved", LINES.replace("line 6", "B6")))
    assert world.b.sync().pushed
    away = world.remote.with_name("away.git")
    world.remote.rename(away)
    (world.a.root / "facts/old.md").rename(world.a.root / "facts/new.md")
    assert world.a.sync().status == "offline"
    older = memory("facts/old", "moved", LINES.replace("line 4", "older 4"))
    world.a.write("facts/old.md", older)
    assert world.a.sync().status == "offline"
    away.rename(world.remote)
    outcome = world.a.sync()
    assert outcome.ok and outcome.conflicts == [], outcome
    world.settle()
    for device in world.devices:
        assert device.read("facts/new.md") == memory(
            "facts/old", "moved", LINES.replace("line 6", "B6")
        )
        assert device.read("facts/old.md") == older


def test_generated_files_never_conflict(world: World) -> None:
    world.a.write("facts/shared.md", memory("facts/shared", "shared", "x\n"))
    world.settle()
    for device, name in ((world.a, "one"), (world.b, "two")):
        device.write(f"facts/{name}.md", memory(f"facts/{name}", f"{name} fact", "y\n"))
        device.write(f"rules/{name}.md", f"---\nkind: rule\nsummary: rule {name}\n---\n")
        recompile(device.root_config, device.config)  # each device compiles its own view
    human = world.b.read("ROOT.md").replace("## Current goal\n", "## Current goal\n\nship it\n")
    world.b.write("ROOT.md", human)
    world.a.sync()
    outcome = world.b.sync()
    assert outcome.conflicts == [] and outcome.status == "ok"
    world.settle()
    for device in world.devices:
        text = device.read("ROOT.md")
        assert "ship it" in text  # the human edit survives
        assert "rule one" in text and "rule two" in text  # recompiled from both sides
        assert "one fact" in device.read("facts/index.md")
        assert "two fact" in device.read("facts/index.md")
        assert not compile_root(device.root_config, device.config, check=True).stale
        assert not list(device.root.rglob("*.conflict-*"))


def test_state_json_never_in_a_commit(world: World) -> None:
    world.a.write(".state.json", json.dumps({"hits": {"a": 1}}))
    world.b.write(".state.json", json.dumps({"hits": {"b": 2}}))
    world.a.write("facts/a.md", memory("facts/a", "a", "a\n"))
    world.b.write("facts/b.md", memory("facts/b", "b", "b\n"))
    world.a.sync()
    world.b.sync()
    world.settle()
    for device in world.devices:
        assert ".state.json" not in git(device.root, "log", "--all", "--name-only", "--format=")
    assert json.loads(world.a.read(".state.json")) == {"hits": {"a": 1}}
    assert json.loads(world.b.read(".state.json")) == {"hits": {"b": 2}}


def test_tracked_state_json_is_untracked_once_and_reported(world: World) -> None:
    world.a.write(".state.json", '{"hits": {}}')
    git(world.a.root, "add", "-f", ".state.json")
    git(world.a.root, "commit", "-q", "-m", "oops")
    git(world.a.root, "push", "-q", "origin", "main")  # the user's own push, before memoryd
    world.b.write(".state.json", '{"hits": {"b": 3}}')
    outcome = world.b.sync()  # pulls the tracked file, keeps B's counters, untracks it
    assert any(".state.json was tracked by git: untracked it" in n for n in outcome.notices)
    assert ".state.json" not in world.b.files()
    world.a.write(".state.json", '{"hits": {"a": 5}}')
    world.a.sync()
    world.settle()
    assert ".state.json" not in world.a.files()
    assert world.b.read(".state.json") == '{"hits": {"b": 3}}'
    assert world.a.read(".state.json") == '{"hits": {"a": 5}}'


def test_remote_unreachable_then_back(world: World) -> None:
    away = world.remote.with_name("away.git")
    world.remote.rename(away)
    world.a.write("facts/offline.md", memory("facts/offline", "written offline", "x\n"))
    outcome = world.a.sync()
    assert outcome.status == "offline" and outcome.commits and outcome.not_pushed == 1
    world.a.write("facts/offline2.md", memory("facts/offline2", "still offline", "y\n"))
    outcome = world.a.sync()
    assert outcome.status == "offline" and outcome.not_pushed == 2
    state = load_state(world.a.paths, world.a.root)
    assert state.not_pushed == 2 and "git fetch origin" in (state.last_error or "")
    assert state.failures == 2 and state.retry_after_ms > 0
    away.rename(world.remote)
    from memoryd.sync.engine import sync_root

    daemon = sync_root(world.a.config, world.a.paths, world.a.root_config)  # backs off: no try
    assert daemon.status == "offline" and daemon.not_pushed == 2
    assert load_state(world.a.paths, world.a.root).failures == 2
    outcome = world.a.sync()
    assert outcome.pushed and outcome.not_pushed == 0
    assert load_state(world.a.paths, world.a.root).last_error is None
    world.settle()


def test_push_race_fetches_and_goes_again(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    from memoryd.sync import remote

    real_push = remote.push
    raced: list[object] = []

    def push_after_b(*args: object, **kw: str) -> bool:
        if not raced:  # B pushes between A's fetch (or its last one) and A's push
            raced.append("racing")
            raced[0] = world.b.sync()
        return real_push(*args, **kw)  # type: ignore[arg-type]

    world.a.write("facts/a.md", memory("facts/a", "a", "from A\n"))
    world.b.write("facts/b.md", memory("facts/b", "b", "from B\n"))
    with monkeypatch.context() as patch:  # undo only this: undo() would undo the isolated home
        patch.setattr(remote, "push", push_after_b)
        outcome = world.a.sync()
    assert raced and raced[0].pushed  # type: ignore[attr-defined]
    assert outcome.pushed and outcome.action.startswith("rebased")
    world.settle()
    assert {"facts/a.md", "facts/b.md"} <= world.b.files()


def test_users_own_rebase_in_progress_is_refused(world: World) -> None:
    world.a.write("facts/x.md", memory("facts/x", "x", "base\n"))
    world.settle()
    git(world.a.root, "checkout", "-q", "-b", "side")
    world.a.write("facts/x.md", memory("facts/x", "x", "side\n"))
    git(world.a.root, "commit", "-q", "-am", "side")
    git(world.a.root, "checkout", "-q", "main")
    world.a.write("facts/x.md", memory("facts/x", "x", "main\n"))
    git(world.a.root, "commit", "-q", "-am", "main")
    git_dir = world.a.root / ".git"
    with pytest.raises(Exception):  # noqa: B017 (git exits non-zero on the conflict)
        git(world.a.root, "rebase", "side")
    assert (git_dir / "rebase-merge").exists()
    outcome = world.a.sync()
    assert outcome.status == "refused"
    assert outcome.error == f"a rebase is in progress in {world.a.root} (memoryd did not start it)"
    assert (git_dir / "rebase-merge").exists()  # the user's rebase is left alone
    git(world.a.root, "rebase", "--abort")
    world.settle()


@pytest.mark.parametrize(
    ("start", "what", "command"),
    [
        (["merge", "side"], "a merge", "git merge"),
        (["cherry-pick", "side"], "a cherry-pick", "git cherry-pick"),
        (["revert", "HEAD~1"], "a revert", "git revert"),
        (["rebase", "side"], "a rebase", "git rebase"),
        (["rebase", "--apply", "side"], "a rebase", "git rebase"),
        (["am", "side.patch"], "a git am", "git am"),
    ],
)
def test_the_hint_for_an_operation_in_progress_names_its_own_command(
    world: World, start: list[str], what: str, command: str
) -> None:
    """A merge's hint said 'git rebase --continue' or 'git rebase --abort'; the user who ran
    it got "fatal: No rebase in progress?" and the root stayed refused."""
    root = world.a.root
    world.a.write("facts/x.md", memory("facts/x", "x", "base\n"))
    world.settle()
    git(root, "checkout", "-q", "-b", "side")
    world.a.write("facts/x.md", memory("facts/x", "x", "side\n"))
    git(root, "commit", "-q", "-am", "side")
    (root / "side.patch").write_text(git(root, "format-patch", "-1", "--stdout"))
    git(root, "checkout", "-q", "main")
    world.a.write("facts/x.md", memory("facts/x", "x", "main\n"))
    git(root, "commit", "-q", "-am", "main")
    world.a.write("facts/x.md", memory("facts/x", "x", "main, edited again\n"))
    git(root, "commit", "-q", "-am", "main again")
    with pytest.raises(subprocess.CalledProcessError):  # git stops on the conflict
        git(root, *start)
    outcome = world.a.sync()
    assert outcome.status == "refused"
    assert outcome.error == f"{what} is in progress in {root} (memoryd did not start it)"
    assert outcome.hint == (
        f"finish it or abort it ({command} --continue, or {command} --abort); "
        "memoryd syncs again after that"
    )
    git(root, *command.split()[1:], "--abort")  # the hint's own command works
    (root / "side.patch").unlink()
    world.settle()


def test_a_remote_whose_history_was_rewritten_merges_from_where_it_was_left(
    world: World, tmp_path: Path
) -> None:
    """Someone squashed the remote's history into one new commit (as filter-repo does to purge
    a file), edited one line and dropped a memory, and force-pushed. With no common commit the
    replay used an empty base: every file either side had changed became a conflict copy on
    every device. The tracking ref's reflog knows where this device left the remote (git
    merge-base --fork-point), and the replay starts from there; the dropped memory is kept (a
    purge and a remote that is another repository look the same) and the user is told."""
    world.a.write("facts/x.md", memory("facts/x", "x", LINES))
    world.a.write("facts/y.md", memory("facts/y", "y", "to be purged\n"))
    world.settle()
    fork = world.remote_head()
    rewriter = tmp_path / "rewriter"
    subprocess.run(["git", "clone", "-q", str(world.remote), str(rewriter)], check=True)
    tree = git(rewriter, "rev-parse", "HEAD^{tree}").strip()
    squashed = subprocess.run(
        ["git", "commit-tree", tree, "-m", "squashed"],
        cwd=rewriter, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    git(rewriter, "reset", "-q", "--hard", squashed)
    text = (rewriter / "facts/x.md").read_text().replace("line 1\n", "line 1 rewritten\n")
    (rewriter / "facts/x.md").write_text(text)
    world.oracle.record("facts/x.md", text.encode())
    git(rewriter, "rm", "-q", "facts/y.md")
    git(rewriter, "commit", "-q", "-am", "edit x, purge y")
    git(rewriter, "push", "-q", "--force", "origin", "HEAD:main")
    world.b.write("facts/x.md", memory("facts/x", "x", LINES.replace("line 8", "line 8 on b")))
    world.b.write("facts/z.md", memory("facts/z", "z", "new on b\n"))
    outcome = world.b.sync()
    assert outcome.ok and outcome.conflicts == [], outcome
    assert "line 1 rewritten" in world.b.read("facts/x.md")
    assert "line 8 on b" in world.b.read("facts/x.md")
    assert world.b.read("facts/y.md").endswith("to be purged\n")
    assert outcome.notices == [
        "the remote's history shares no commit with this branch (rewritten and force-pushed, "
        f"or another repository): merged from where this device last fetched it ({fork[:12]}); "
        "1 file(s) it no longer has are kept here"
    ]
    before = world.remote_head()
    outcome = world.a.sync()  # nothing of its own since: the remote's head as it is
    assert outcome.ok and outcome.commits == [] and world.a.head() == before, outcome
    world.settle()
    assert not any("conflict" in p for device in world.devices for p in device.files())


def test_a_remote_that_is_another_repository_still_keeps_both_versions(
    world: World, tmp_path: Path
) -> None:
    """origin pointed at a different memory repository that has its own facts/x.md: nothing
    in its history is a rewrite of this one (no tree in common), so the fork point does not
    apply and the two texts meet as unrelated: the remote's at the path, this device's as a
    conflict copy (not the remote's silently, as a rewrite's base would have it)."""
    world.a.write("facts/x.md", memory("facts/x", "x", "this repository's x\n"))
    world.settle()
    other = tmp_path / "other.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(other)], check=True)
    seed = tmp_path / "seed"
    subprocess.run(["git", "clone", "-q", str(other), str(seed)], capture_output=True, check=True)
    (seed / "facts").mkdir()
    (seed / "facts/x.md").write_text(memory("facts/x", "x", "the other repository's x\n"))
    world.oracle.record("facts/x.md", (seed / "facts/x.md").read_bytes())
    git(seed, "add", "-A")
    git(seed, "commit", "-q", "-m", "other")
    git(seed, "push", "-q", "origin", "HEAD:main")
    git(world.a.root, "remote", "set-url", "origin", str(other))
    outcome = world.a.sync()
    assert outcome.ok, outcome
    [conflict] = outcome.conflicts
    assert conflict["path"] == "facts/x.md"
    assert world.a.read("facts/x.md").endswith("the other repository's x\n")
    assert world.a.read(conflict["copy"]).endswith("this repository's x\n")
    assert not any("shares no commit" in n for n in outcome.notices)


def test_fresh_index_lock_backs_off(world: World) -> None:
    lock = world.a.root / ".git" / "index.lock"
    lock.write_bytes(b"")
    world.a.write("facts/a.md", memory("facts/a", "a", "a\n"))
    outcome = world.a.sync()
    assert outcome.status == "busy" and outcome.commits == []
    assert lock.exists()
    lock.unlink()
    world.settle()


def test_stale_index_lock_is_moved_aside_and_reported(world: World) -> None:
    import os

    lock = world.a.root / ".git" / "index.lock"
    lock.write_bytes(b"")
    os.utime(lock, (1, 1))
    world.a.write("facts/a.md", memory("facts/a", "a", "a\n"))
    outcome = world.a.sync()
    assert outcome.status == "ok" and outcome.pushed
    assert any("moved a stale index.lock" in n for n in outcome.notices)
    assert not lock.exists() and list(lock.parent.glob("index.lock.stale-*"))
    world.settle()


def test_mass_delete_pauses_until_allowed(world: World) -> None:
    for n in range(6):
        world.a.write(f"facts/m{n}.md", memory(f"facts/m{n}", f"m{n}", f"{n}\n"))
    world.settle()
    before = world.a.head()
    for n in range(4):
        world.a.delete(f"facts/m{n}.md")
    outcome = world.a.sync()
    assert outcome.status == "paused" and world.a.head() == before
    assert outcome.error is not None and outcome.error.startswith("4 of 6 memories deleted")
    assert load_state(world.a.paths, world.a.root).paused is not None
    outcome = world.a.sync(allow_mass_delete=True)
    assert outcome.status == "ok" and outcome.pushed
    assert load_state(world.a.paths, world.a.root).paused is None
    world.settle()
    assert not (world.b.root / "facts/m0.md").exists() and (world.b.root / "facts/m5.md").exists()


def test_conflict_markers_are_quarantined_while_the_rest_commits(world: World) -> None:
    world.a.write("facts/bad.md", "<<<<<<< ours\nmine\n=======\ntheirs\n>>>>>>> theirs\n")
    world.a.write("facts/good.md", memory("facts/good", "good", "fine\n"))
    outcome = world.a.sync()
    assert [(q.path, q.line, q.rule) for q in outcome.quarantined] == [
        ("facts/bad.md", 1, "conflict-markers")
    ]
    assert "facts/good.md" in world.a.files() and "facts/bad.md" not in world.a.files()
    assert (world.a.root / "facts/bad.md").exists()  # kept on disk
    state = load_state(world.a.paths, world.a.root)
    assert state.quarantined[0]["path"] == "facts/bad.md"
    [problem] = sync_problems(world.a.config, world.a.paths)  # not "remove the secret"
    assert (problem.message, problem.fix) == (
        "kept out of sync: line 1: conflict markers",
        "keep the text you want and delete the <<<<<<<, ======= and >>>>>>> lines; "
        "it syncs once they are gone",
    )
    world.a.write("facts/bad.md", memory("facts/bad", "fixed", "fixed\n"))
    world.oracle.versions.pop(0)  # the user overwrote the quarantined text: never meant to sync
    assert world.a.sync().quarantined == []
    world.settle()
    assert "facts/bad.md" in world.b.files()


def test_sync_false_and_oversize_files_stay_local(world: World) -> None:
    local = "---\nid: facts/here\nsync: false\n---\nonly on this machine\n"
    world.a.write("facts/here.md", local)
    world.a.write("facts/big.md", "x" * (1024 * 1024 + 1))
    outcome = world.a.sync()
    assert [i["path"] for i in outcome.left_out] == ["facts/big.md"]
    files = world.a.files()
    assert "facts/here.md" not in files and "facts/big.md" not in files
    exclude = (world.a.root / ".git/info/exclude").read_text()
    assert "/facts/here.md" in exclude
    assert "facts/here.md" not in git(world.a.root, "status", "--porcelain")
    world.a.write("facts/here.md", local.replace("sync: false", "sync: true"))
    world.a.sync()
    assert "facts/here.md" in world.a.files()
    assert "/facts/here.md" not in (world.a.root / ".git/info/exclude").read_text()
    (world.a.root / "facts/big.md").unlink()
    world.oracle.versions = [v for v in world.oracle.versions if v[0] != "facts/big.md"]
    world.settle()


def test_second_device_with_its_own_history_joins(world: World) -> None:
    import shutil

    world.a.write("facts/a.md", memory("facts/a", "a", "from A\n"))
    world.a.sync()
    shutil.rmtree(world.b.root)
    from memoryd.roots import init_root

    init_root(world.b.root)
    git(world.b.root, "init", "-q", "-b", "main")
    world.b.write("facts/a.md", memory("facts/a", "a", "B's own idea of a\n"))
    world.b.write("facts/b.md", memory("facts/b", "b", "from B\n"))
    assert world.b.sync().action.startswith("committed locally")
    git(world.b.root, "remote", "add", "origin", str(world.remote))
    outcome = world.b.sync()
    assert outcome.pushed and [c["path"] for c in outcome.conflicts] == ["facts/a.md"]
    world.settle()
    assert "from B" in world.a.read("facts/b.md") and "from A" in world.a.read("facts/a.md")


def test_the_status_line_counts_quarantined_files_not_findings(world: World) -> None:
    """A pasted .env with four secrets read 'pushed; 4 file(s) quarantined' for one file."""
    env = "".join(f"{name}_TOKEN={github(name)}\n" for name in ("CI", "BOT", "DEPLOY"))
    world.a.write("facts/env.md", memory("facts/env", "env", env))
    world.a.write("facts/ci.md", memory("facts/ci", "ci", f"GH={github('one')}\n"))
    outcome = world.a.sync()
    assert len(outcome.quarantined) == 4
    assert outcome.message == "pushed; 2 file(s) quarantined"


def test_a_secret_in_a_file_name_is_quarantined_until_renamed(world: World) -> None:
    """A memory written by hand as facts/<token>.md went to the remote: the name (in the
    tree, in the commit message and in facts/index.md) was never scanned."""
    token = github("in-a-name")
    world.a.write(f"facts/{token}.md", "---\nsummary: a token to keep\n---\nsee the name\n")
    world.a.write("facts/fine.md", memory("facts/fine", "fine", "nothing secret\n"))
    outcome = world.a.sync()
    assert outcome.pushed
    assert [(q.path, q.line, q.rule) for q in outcome.quarantined] == [
        (f"facts/{token}.md", 0, "github-token")
    ]
    assert world.a.files() >= {"facts/fine.md", "facts/index.md"}
    assert token not in git(world.remote, "log", "--all", "-p", "--stat")
    [problem] = sync_problems(world.a.config, world.a.paths)
    assert (problem.code, problem.path, problem.message, problem.fix) == (
        "sync.quarantined",
        f"facts/{token}.md",
        f"kept out of sync: its file name: github-token ({token[:4]}…{token[-4:]})",
        "rename it to a name without the secret (or allow it: see memoryd scan); "
        "it syncs once the name is clean",
    )
    (world.a.root / f"facts/{token}.md").rename(world.a.root / "facts/kept-token.md")
    assert world.a.sync().quarantined == []  # released once the name is clean
    world.settle()
    assert "facts/kept-token.md" in world.b.files()
    for device in (world.a.root, world.b.root, world.remote):
        assert token not in git(device, "log", "--all", "-p", "--stat")


def test_a_secret_is_quarantined_while_the_rest_commits(world: World) -> None:
    leak = "connect with postgres://admin:S3cr3tPassw0rdXYZ@db.internal:5432/app\n"
    world.a.write("facts/db.md", memory("facts/db", "database", "intro\n" + leak))
    world.a.write("facts/fine.md", memory("facts/fine", "fine", "nothing secret\n"))
    outcome = world.a.sync()
    assert outcome.pushed
    assert [(q.path, q.line, q.rule) for q in outcome.quarantined] == [
        ("facts/db.md", 7, "url-credentials")
    ]
    assert "S3cr3tPassw0rdXYZ" not in str(outcome.to_json())  # only the redacted preview
    files = world.a.files()
    assert "facts/fine.md" in files and "facts/db.md" not in files
    assert (world.a.root / "facts/db.md").exists()
    problems = sync_problems(world.a.config, world.a.paths)
    assert any(p.code == "sync.quarantined" and p.path == "facts/db.md" for p in problems)
    world.a.write("facts/db.md", memory("facts/db", "database", "intro\nuse the vault\n"))
    world.oracle.versions = [v for v in world.oracle.versions if b"S3cr3t" not in v[1]]
    assert world.a.sync().quarantined == []  # released once the finding is gone
    world.settle()
    assert "facts/db.md" in world.b.files()
    for device in (world.a.root, world.b.root, world.remote):
        assert "S3cr3tPassw0rdXYZ" not in git(device, "log", "--all", "-p")


def test_a_secret_in_a_commit_made_by_hand_is_not_pushed(world: World) -> None:
    """git add + git commit in the memory repository passes no gate: the next sync pushed the
    credential to the remote and so to every device, and said "ok: pushed"."""
    from memoryd.secrets.scanner import scan
    from tests.secrets.fake_tokens import github

    root = world.a.root
    body = f"intro\ntoken {github('by-hand')}\n"
    (root / "facts/hand.md").write_text(memory("facts/hand", "hand", body))
    git(root, "add", "facts/hand.md")
    git(root, "commit", "-q", "-m", "my own notes")
    made = git(root, "rev-parse", "HEAD").strip()
    [found] = scan((root / "facts/hand.md").read_text())
    before = world.remote_head()
    outcome = world.a.sync()
    assert (outcome.status, outcome.error, outcome.hint) == (
        "refused",
        f"a commit not pushed yet adds a secret: facts/hand.md:7 github-token {found.preview} "
        f"(commit {made[:12]} 'my own notes'); memoryd does not push it",
        f"take it out of that commit (git rebase -i {before[:12]} in {root}) and rotate it if "
        f"it was real; a false positive: add {found.fingerprint} to {root}/.memoryd-allowlist",
    )
    assert world.remote_head() == before and outcome.not_pushed == 1
    git(root, "reset", "-q", "--soft", "HEAD~1")  # out of the commit, still on disk
    git(root, "restore", "--staged", "facts/hand.md")
    outcome = world.a.sync()
    assert outcome.ok and [q.path for q in outcome.quarantined] == ["facts/hand.md"], outcome
    assert github("by-hand") not in git(world.remote, "log", "--all", "-p")


def test_a_secret_in_the_name_of_a_file_committed_by_hand_is_not_pushed(world: World) -> None:
    """The outgoing check reads names as the commit's quarantine does: a hand-made commit of
    facts/<token>.md would put the token in the remote's tree and log; the refusal shows
    the name redacted."""
    from memoryd.secrets.scanner import redact_name, scan_name
    from tests.secrets.fake_tokens import github

    root = world.a.root
    name = f"facts/{github('in-a-name')}.md"
    (root / name).write_text(memory("facts/x", "x", "nothing secret in here\n"))
    git(root, "add", name)
    git(root, "commit", "-q", "-m", "named notes")
    made = git(root, "rev-parse", "HEAD").strip()
    found = scan_name(name)
    before = world.remote_head()
    outcome = world.a.sync()
    assert (outcome.status, outcome.error) == (
        "refused",
        f"a commit not pushed yet adds a secret: {redact_name(name, found)} (its file name) "
        f"github-token {found[0].preview} (commit {made[:12]} 'named notes'); memoryd does "
        "not push it",
    )
    assert outcome.error is not None  # (it is the text above: this tells mypy so)
    assert github("in-a-name") not in outcome.error
    assert world.remote_head() == before


def test_outcome_message_for_the_daemon(world: World) -> None:
    from memoryd.daemon.syncing import describe

    world.remote.rename(world.remote.with_name("gone.git"))
    world.a.write("facts/a.md", memory("facts/a", "a", "a\n"))
    word, message = describe(world.a.sync())
    assert word == "offline"
    assert "git fetch origin" in message
    assert message.endswith("1 commit(s) not pushed")
    world.remote.with_name("gone.git").rename(world.remote)
    world.settle()


def test_two_devices_syncing_at_once_lose_nothing(world: World) -> None:
    import threading

    world.a.write("facts/shared.md", memory("facts/shared", "shared", LINES))
    world.settle()
    errors: list[str] = []

    def work(device: Device) -> None:
        for n in range(4):
            device.write(f"facts/{device.name}-{n}.md", memory(f"x{n}", "own", f"{n}\n"))
            device.write(
                "facts/shared.md", memory("facts/shared", "shared", f"{device.name} {n}\n")
            )
            outcome = device.sync()
            if not outcome.ok:
                errors.append(f"{device.name}: {outcome.status}: {outcome.error}")

    threads = [threading.Thread(target=work, args=(d,)) for d in world.devices]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(t.is_alive() for t in threads) and not errors, errors
    world.settle()
    assert world.a.files() == world.b.files()
    for n in range(4):
        assert {f"facts/laptop-{n}.md", f"facts/desktop-{n}.md"} <= world.a.files()


def test_a_remote_that_refuses_pushes_is_an_error_not_a_loop(world: World) -> None:
    """A remote's hook saying no was pushed five times and reported as 'rejected 5 times in a
    row' without the remote's own words: it is asked once, and its reason is the error."""
    hook = world.remote / "hooks" / "pre-receive"
    calls = world.remote / "pre-receive-calls"
    hook.write_text(
        f"#!/bin/sh\necho x >> '{calls}'\n"
        "echo 'GH006: Protected branch update failed for refs/heads/main.' >&2\nexit 1\n"
    )
    hook.chmod(0o755)
    world.a.write("facts/a.md", memory("facts/a", "a", "a\n"))
    outcome = world.a.sync()
    assert outcome.status == "error" and outcome.commits and outcome.not_pushed == 1
    assert outcome.error == (
        "origin refused the push (pre-receive hook declined): "
        "GH006: Protected branch update failed for refs/heads/main."
    )
    assert outcome.hint == (
        "fix that on the remote (a protected branch, a hook, your permissions); memoryd keeps "
        "committing locally and pushes after that"
    )
    assert calls.read_text() == "x\n"  # once: a refusal is not a race to retry
    assert load_state(world.a.paths, world.a.root).last_error == outcome.error
    hook.unlink()
    world.settle()


def test_unicode_and_spaced_names_conflict_cleanly(world: World) -> None:
    name = "facts/部署 notes (v2).md"
    world.a.write(name, memory("facts/deploy", "部署", LINES))
    world.settle()
    world.a.write(name, memory("facts/deploy", "部署", LINES.replace("line 2", "甲")))
    world.b.write(name, memory("facts/deploy", "部署", LINES.replace("line 2", "乙")))
    world.a.sync()
    outcome = world.b.sync()
    [conflict] = outcome.conflicts
    assert conflict["path"] == name and conflict["copy"].startswith(
        "facts/部署 notes (v2).conflict-"
    )
    world.settle()
    assert "乙" in world.a.read(conflict["copy"]) and "甲" in world.a.read(name)


def test_an_edit_during_the_cycle_is_never_overwritten(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memoryd.sync import worktree

    world.a.write("facts/x.md", memory("facts/x", "x", LINES))
    world.settle()
    world.a.write("facts/x.md", memory("facts/x", "x", LINES.replace("line 1", "A1")))
    world.a.sync()
    real_move = worktree.move

    def move_after_an_edit(*args: object, **kw: object) -> list[str]:
        world.b.write("facts/x.md", memory("facts/x", "x", "written mid-cycle by an agent\n"))
        return real_move(*args, **kw)  # type: ignore[arg-type]

    with monkeypatch.context() as patch:  # undo only this: undo() would undo the isolated home
        patch.setattr(worktree, "move", move_after_an_edit)
        outcome = world.b.sync()
    assert outcome.ok  # the move goes around the edited file, which keeps its bytes
    assert "written mid-cycle" in world.b.read("facts/x.md")
    [copy] = outcome.conflicts
    assert copy["copy"].startswith("facts/x.conflict-laptop-")  # the incoming text, beside it
    world.settle()
    for device in world.devices:
        assert "written mid-cycle" in device.read("facts/x.md")
        assert "A1" in device.read(copy["copy"])


def test_sync_false_on_a_tracked_memory_is_reported_not_stuck(world: World) -> None:
    world.a.write("facts/t.md", memory("facts/t", "t", LINES))
    world.settle()
    world.a.write("facts/t.md", "---\nid: facts/t\nsync: false\n---\n" + LINES.replace("1", "A"))
    world.b.write("facts/t.md", memory("facts/t", "t", LINES.replace("line 5", "B5")))
    world.b.sync()
    outcome = world.a.sync()
    assert outcome.ok and any(
        "says sync: false but git already tracks it" in n for n in outcome.notices
    )
    world.settle()
    assert "B5" in world.b.read("facts/t.md") and "line A" in world.b.read("facts/t.md")


def test_a_link_to_a_memory_outside_the_root_is_left_out_with_what_to_do(
    world: World, tmp_path: Path
) -> None:
    """git commits a symbolic link as its target's path: the other device got a link to a
    folder it does not have, never the memory, and every sync said 'ok'."""
    elsewhere = tmp_path / "notes" / "deploy.md"
    elsewhere.parent.mkdir()
    elsewhere.write_text(memory("facts/deploy", "kept in my notes folder", "deploy steps\n"))
    (world.a.root / "facts").mkdir(exist_ok=True)
    (world.a.root / "facts" / "deploy.md").symlink_to(elsewhere)
    world.a.write("facts/local.md", memory("facts/local", "a file of the root", "local\n"))
    (world.a.root / "facts" / "alias.md").symlink_to("local.md")  # every device can follow it
    outcome = world.a.sync()
    why = f"a symbolic link to {elsewhere}: git syncs the link, not the memory"
    assert outcome.left_out == [{"path": "facts/deploy.md", "why": why}]
    tree = git(world.remote, "ls-tree", "-r", "main", "facts/").splitlines()
    assert [line.split()[0] + " " + line.split()[-1] for line in tree] == [
        "120000 facts/alias.md", "100644 facts/index.md", "100644 facts/local.md",
    ]  # fmt: skip
    assert "deploy" not in git(world.remote, "show", "main:facts/index.md")
    root = world.a.root
    [problem] = [p for p in sync_problems(world.a.config, world.a.paths) if p.path]
    assert (problem.code, problem.message, problem.fix) == (
        "sync.left-out",
        f"kept out of sync: {why}",
        f"put the file itself in the link's place (cp --remove-destination \"$(readlink -f "
        f'{root}/facts/deploy.md)" {root}/facts/deploy.md), or move the memory into the root; '
        "it syncs then",
    )
    link = root / "facts" / "deploy.md"
    subprocess.run(
        f'cp --remove-destination "$(readlink -f {link})" {link}', shell=True, check=True
    )  # the fix it names
    assert world.a.sync().left_out == []
    assert "deploy steps" in git(world.remote, "show", "main:facts/deploy.md")
