"""Wrong verdicts of the sync cycle (issue 16), each with real git and a bare remote."""

from __future__ import annotations

from pathlib import Path

from memoryd.sync.state import load_state
from tests.helpers import git
from tests.sync.world import World, memory


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


def test_a_moved_aside_private_file_stays_private(world: World) -> None:
    exclude = world.a.root / ".git/info/exclude"
    exclude.write_text(exclude.read_text() + "/facts/diary.md\n")
    private = memory("facts/diary", "private", "my own notes, never to leave\n")
    world.a.write("facts/diary.md", private)
    world.a.sync()
    world.b.write("facts/diary.md", memory("facts/diary", "shared", "B's shared diary\n"))
    assert world.b.sync().pushed
    outcome = world.a.sync()  # a fast-forward moves the private file aside
    assert outcome.ok, outcome
    moved = [n for n in outcome.notices if "your local file was moved to" in n]
    assert moved, outcome.notices
    aside = moved[0].rsplit(" ", 1)[-1]
    assert (world.a.root / aside).read_text() == private
    world.settle()
    for where in (world.remote, world.a.root, world.b.root):
        assert "never to leave" not in git(where, "log", "--all", "-p")
    assert "?? " not in git(world.a.root, "status", "--porcelain")


def test_a_refusing_pre_push_hook_is_reported_with_its_message(world: World) -> None:
    hook = world.a.root / ".git/hooks/pre-push"
    hook.write_text("#!/bin/sh\necho 'pushes from this laptop need a VPN token' >&2\nexit 1\n")
    hook.chmod(0o755)
    world.a.write("facts/a.md", memory("facts/a", "a", "a\n"))
    outcome = world.a.sync()
    assert outcome.status == "error", outcome
    assert outcome.error == (
        "the pre-push hook refused the push: pushes from this laptop need a VPN token"
    )
    state = load_state(world.a.paths, world.a.root)
    assert state.failures == 0 and state.retry_after_ms == 0  # no network back-off
    hook.unlink()
    assert world.a.sync().pushed


def test_a_pre_push_hook_under_a_hooks_path_with_a_tilde_is_found(world: World) -> None:
    """core.hooksPath = ~/hooks (git expands the ~): read raw, memoryd looked for the hook
    in <repo>/~/hooks, did not find it, and the hook's refusal became "offline ... pushes
    when the remote is back", with the network back-off."""
    hooks = Path.home() / "hooks"
    hooks.mkdir()
    (hooks / "pre-push").write_text("#!/bin/sh\necho 'memory pushes wait for Friday' >&2\nexit 1\n")
    (hooks / "pre-push").chmod(0o755)
    git(world.a.root, "config", "core.hooksPath", "~/hooks")
    world.a.write("facts/a.md", memory("facts/a", "a", "a\n"))
    outcome = world.a.sync()
    assert (outcome.status, outcome.error) == (
        "error",
        "the pre-push hook refused the push: memory pushes wait for Friday",
    )
    assert outcome.hint is not None and f"fix the hook in {hooks})" in outcome.hint
    assert load_state(world.a.paths, world.a.root).failures == 0


def test_the_commit_message_counts_memories_not_compiled_files(world: World) -> None:
    for n in range(5):
        rel = f"folder{n}/memory-number-{n}"
        world.a.write(f"{rel}.md", memory(rel, f"m{n}", f"memory {n}\n"))
    from memoryd.sync.derived import recompile

    recompile(world.a.root_config, world.a.config)  # five new index.md files, ROOT.md
    world.a.sync()
    subject = git(world.a.root, "log", "-1", "--format=%s").strip()
    assert subject == "memoryd(laptop): +5 ~0 -0 memories", subject
    body = git(world.a.root, "log", "-1", "--format=%b")
    assert "added:\n  folder0/memory-number-0\n" in body
    assert "compiled: ROOT.md, folder0/index.md" in body
