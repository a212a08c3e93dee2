"""Roots that stopped syncing for good (issue 16), through the real CLI and real git.

Each of these failed on every cycle with "memoryd retries on the next cycle": a
root reached through a symlink, a file name that is not UTF-8, a stale ref or
HEAD lock left by a killed git (and kept by a ``git log`` open in its pager), a full
disk while saving the sync state, and a machine where git knows no name or email to
commit with.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memoryd.sync.repo import GitProcess, git_command, held_by
from tests.helpers import git, run_cli, waiting_git
from tests.sync.world import World, memory


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    saved = os.environ["MEMORYD_HOME"]
    os.environ["MEMORYD_HOME"] = str(home)
    try:
        return run_cli(*args)
    finally:
        os.environ["MEMORYD_HOME"] = saved


def test_a_root_reached_through_a_symlink_syncs(world: World, tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "memory"
    real.parent.mkdir()
    world.a.root.rename(real)
    world.a.root.symlink_to(real)  # the configured root is the link
    config = world.a.paths.config_file
    config.write_text(f"device: laptop\nroots:\n  - path: {world.a.root}\n")
    (real / "facts/linked.md").parent.mkdir(parents=True, exist_ok=True)
    (real / "facts/linked.md").write_text(memory("facts/linked", "linked", "via a link\n"))
    for _ in range(2):
        done = _cli(world.a.home, "sync")
        assert done.returncode == 0, done.stdout + done.stderr
        assert "Traceback" not in done.stderr
    assert world.b.sync().ok
    assert "via a link" in world.b.read("facts/linked.md")


def test_a_file_name_that_is_not_utf8_does_not_stop_the_root(world: World) -> None:
    odd = os.fsencode(str(world.a.root / "facts")) + b"/caf\xe9.md"
    os.makedirs(os.path.dirname(odd), exist_ok=True)
    with open(odd, "wb") as handle:
        handle.write(memory("facts/cafe", "latin-1 name", "un caf\xc3\xa9\n").encode())
    world.a.write("facts/plain.md", memory("facts/plain", "plain", "next to it\n"))
    done = _cli(world.a.home, "sync")
    assert done.returncode == 0, done.stdout + done.stderr
    log = git(world.remote, "log", "-1", "--format=%B", "main")
    assert "caf\\xe9" in log and "facts/plain" in log
    assert world.b.sync().ok
    assert os.path.exists(os.fsencode(str(world.b.root / "facts")) + b"/caf\xe9.md")
    assert "next to it" in world.b.read("facts/plain.md")


def test_a_newline_in_a_file_name_stays_on_its_line_of_the_commit_message(world: World) -> None:
    world.a.write("facts/two\nlines.md", memory("facts/two-lines", "odd", "a newline\n"))
    done = _cli(world.a.home, "sync")
    assert done.returncode == 0, done.stdout + done.stderr
    assert git(world.remote, "log", "-1", "--format=%B", "main") == (
        "memoryd(laptop): add facts/two\\x0alines\n\n"
        "added:\n  facts/two\\x0alines\n\nMemoryd-Device: laptop\n\n"  # %B ends in a newline
    )
    assert world.b.sync().ok
    assert "a newline" in world.b.read("facts/two\nlines.md")


@pytest.mark.parametrize("lock", ["refs/heads/main.lock", "HEAD.lock"])
def test_a_stale_ref_lock_is_moved_aside_like_index_lock(world: World, lock: str) -> None:
    held = world.a.root / ".git" / lock
    held.write_bytes(b"")
    world.a.write("facts/a.md", memory("facts/a", "a", "a\n"))
    fresh = _cli(world.a.home, "sync")
    assert fresh.returncode == 1 and held.exists()  # fresh: a git may hold it, back off
    assert f"{held} is held by another git command" in fresh.stdout
    os.utime(held, (1, 1))
    done = _cli(world.a.home, "sync")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"moved a stale {held.name}" in done.stdout
    git_dir = world.a.root / ".git"
    kept = held.parent if lock == "HEAD.lock" else git_dir / "memoryd-stale-locks/refs/heads"
    assert not held.exists() and list(kept.glob(f"{held.name}.stale-*"))
    assert git(world.a.root, "branch", "--list").split() == ["*", "main"]  # no stray branch
    assert world.b.sync().ok and "a\n" in world.b.read("facts/a.md")


def test_a_git_log_in_its_pager_does_not_keep_a_stale_lock(world: World) -> None:
    """A stale lock was moved aside only when no git at all ran in the work tree: a 'git log'
    left open in its pager (it takes no lock) kept sync 'busy' until it was quit."""
    held = world.a.root / ".git" / "index.lock"
    held.write_bytes(b"")
    os.utime(held, (1, 1))  # left by a git killed long ago
    world.a.write("facts/a.md", memory("facts/a", "a", "a\n"))
    with waiting_git(world.a.root, "-c", "color.ui=never", "log", "--oneline"):
        done = _cli(world.a.home, "sync")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "notice: moved a stale index.lock (" in done.stdout
    assert "s old, no git running that could hold it) aside to" in done.stdout
    assert not held.exists() and list(held.parent.glob("index.lock.stale-*"))
    assert world.b.sync().ok and "a\n" in world.b.read("facts/a.md")


def test_a_git_that_may_hold_an_old_lock_is_named_with_what_to_do(world: World) -> None:
    """'git commit -a' waiting in its editor holds index.lock for as long as the person
    writes: however old the lock, it is not moved aside from under it. Sync said only
    'busy' ('if no git command is running, it is moved aside once stale'), never which git
    held it nor that it was the person's to end."""
    world.a.write("facts/a.md", memory("facts/a", "a", "a\n"))
    held = world.a.root / ".git" / "index.lock"
    taken = datetime(2020, 1, 2, 3, 4, 5, tzinfo=UTC).timestamp()
    with waiting_git(world.a.root, "commit", "-a", "--allow-empty") as commit:
        assert held.exists()
        fresh = _cli(world.a.home, "sync")  # a git at work: a quiet retry, as before
        os.utime(held, (taken, taken))
        done = _cli(world.a.home, "sync")
        status = _cli(world.a.home, "status", "--json")
        assert held.exists() and not list(held.parent.glob("index.lock.stale-*"))
        assert commit.finish() == 1  # the empty message aborts it: git takes its lock away
    assert fresh.returncode == 1 and fresh.stdout.splitlines()[1:] == [
        f"  error: {held} is held by another git command",
        "  hint: memoryd retries later; if no git command is running, it is moved aside once stale",
    ]
    assert done.returncode == 1
    assert done.stdout == (
        f"{world.a.root}: blocked\n"
        f"  error: {held} has been held since 2020-01-02 03:04 UTC by git commit "
        f"(pid {commit.pid})\n"
        "  hint: finish or quit that git command; memoryd syncs after that\n"
    )
    assert json.loads(status.stdout)["sync"] == [
        {
            "root": str(world.a.root),
            "code": "sync.error",
            "path": None,
            "message": f"last sync: {held} has been held since 2020-01-02 03:04 UTC by git "
            f"commit (pid {commit.pid})",
            "fix": "finish or quit that git command; memoryd syncs after that",
        }
    ]
    again = _cli(world.a.home, "sync")
    assert again.returncode == 0, again.stdout + again.stderr
    assert world.b.sync().ok and "a\n" in world.b.read("facts/a.md")


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["git", "log"], "log"),
        (["/usr/bin/git", "-C", "sub", "-c", "core.pager=less", "--no-pager", "diff"], "diff"),
        (["git", "--git-dir", "x/.git", "--work-tree=x", "-p", "show", "HEAD"], "show"),
        (["git", "--config-env", "a.b=C", "commit", "-m", "log"], "commit"),
        (["/usr/lib/git-core/git-remote-https", "origin", "https://x"], "remote-https"),
        (["git", "--version"], ""),
        (["git", "sta\ntus"], "sta\\x0atus"),
        ([], None),
    ],
)
def test_the_git_command_of_a_command_line(argv: list[str], command: str | None) -> None:
    assert git_command(argv) == command


def test_a_git_whose_command_line_is_unreadable_may_hold_a_lock() -> None:
    assert GitProcess(42, None).may_hold_locks and GitProcess(42, "").may_hold_locks
    assert not GitProcess(42, "log").may_hold_locks and GitProcess(42, "commit").may_hold_locks
    assert [str(GitProcess(42, c)) for c in (None, "", "commit")] == [
        "a git command (pid 42)",
        "git (pid 42)",
        "git commit (pid 42)",
    ]


def test_an_old_lock_several_gits_may_hold_names_two_and_counts_the_rest() -> None:
    lock, taken = Path("/r/.git/HEAD.lock"), 86400.0 * 366
    gits = [GitProcess(7, "commit"), GitProcess(9, None), GitProcess(12, "fetch")]
    blocked = held_by(lock, taken, gits)
    assert (blocked.status, blocked.message, blocked.hint) == (
        "blocked",
        "/r/.git/HEAD.lock has been held since 1971-01-02 00:00 UTC by git commit (pid 7) or "
        "a git command (pid 9) or 1 more git command(s)",
        "finish or quit those git commands; memoryd syncs after that",
    )


@contextlib.contextmanager
def _tiny_disk(folder: Path) -> Iterator[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(folder)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs to fill up here: {done.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def test_a_full_disk_while_saving_sync_state_is_a_clear_error(world: World) -> None:
    world.a.sync()
    state = world.a.paths.state_dir / "sync"
    saved = {p.name: p.read_bytes() for p in state.glob("*.json")}
    with _tiny_disk(state):
        for name, data in saved.items():
            (state / name).write_bytes(data)
        filler = state / "filler"
        with contextlib.suppress(OSError), open(filler, "wb") as handle:
            while True:
                handle.write(b"\0" * 4096)
                handle.flush()
        world.a.write("facts/full.md", memory("facts/full", "full", "disk is full\n"))
        done = _cli(world.a.home, "sync")
        assert done.returncode == 1
        assert "Traceback" not in done.stderr and "internal error" not in done.stderr
        said = done.stdout + done.stderr
        assert "No space left on device" in said and "free some disk space" in said, said
        filler.unlink()
        again = _cli(world.a.home, "sync")
        assert again.returncode == 0, again.stdout + again.stderr
    assert world.b.sync().ok and "disk is full" in world.b.read("facts/full.md")


def test_a_full_disk_keeps_the_cycles_own_error(world: World) -> None:
    """The remote was gone and the state could not be saved: the cycle's own error was
    replaced by the state-save error, and the user was told only the second problem."""
    world.a.sync()
    state = world.a.paths.state_dir / "sync"
    saved = {p.name: p.read_bytes() for p in state.glob("*.json")}
    world.remote.rename(world.remote.with_name("gone.git"))
    with _tiny_disk(state):
        for name, data in saved.items():
            (state / name).write_bytes(data)
        for roomy in (state / "tmp", state / "kept"):  # the cycle's private index has room
            roomy.mkdir(exist_ok=True)  # (a fresh one, or the one kept between cycles):
            subprocess.run(  # only the state has none
                ["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(roomy)], check=True
            )
        with contextlib.suppress(OSError), open(state / "filler", "wb") as handle:
            while True:
                handle.write(b"\0" * 4096)
                handle.flush()
        world.a.write("facts/full.md", memory("facts/full", "full", "disk is full\n"))
        outcome = world.a.sync()
    assert outcome.status == "offline", outcome
    assert outcome.error is not None and outcome.error.startswith("git fetch origin:")
    assert any(n.startswith("could not save the sync state to") for n in outcome.notices)


def test_a_conflict_on_a_non_utf8_name_is_committed_and_reported(world: World) -> None:
    """Found by the simulation: the replay's commit message and the state file did not encode."""
    name = os.fsencode(str(world.a.root / "facts")) + b"/caf\xe9.md"
    os.makedirs(os.path.dirname(name), exist_ok=True)
    with open(name, "wb") as handle:
        handle.write(memory("facts/cafe", "cafe", "line 1\nline 2\n").encode())
    world.a.sync()
    assert world.b.sync().ok
    other = os.fsencode(str(world.b.root / "facts")) + b"/caf\xe9.md"
    for path, who in ((name, "A"), (other, "B")):
        with open(path, "wb") as handle:
            handle.write(memory("facts/cafe", "cafe", f"line 1 by {who}\nline 2\n").encode())
    assert world.a.sync().pushed
    done = _cli(world.b.home, "sync")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "conflict: facts/caf\\xe9.md: a version saved as facts/caf\\xe9.conflict-desktop-" in (
        done.stdout
    )
    assert "conflict: facts/caf\\xe9.md" in git(world.remote, "log", "--format=%B", "main")
    status = _cli(world.b.home, "status", "--json")
    assert "Traceback" not in status.stderr


def test_a_machine_where_git_knows_no_one_is_told_how_to_fix_it(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fresh machine: no user.name or user.email (useConfigOnly: git's guess from the host
    name succeeds on some machines). One line says why, the hint gives the two commands
    (not "retries on the next cycle": retrying never helps), and once they are run the next
    sync commits and pushes what was waiting."""
    nobody = tmp_path / "nobody.gitconfig"
    nobody.write_text("[user]\n\tuseConfigOnly = true\n[init]\n\tdefaultBranch = main\n")
    for key in ("EMAIL", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME",
                "GIT_COMMITTER_EMAIL"):  # fmt: skip
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(nobody))
    world.a.write("facts/first.md", memory("facts/first", "first", "written before git knew\n"))
    done = _cli(world.a.home, "sync")
    assert done.returncode == 1
    assert done.stdout == (
        f"{world.a.root}: error\n"
        "  error: git does not know who commits on this machine: "
        "no email was given and auto-detection is disabled\n"
        '  hint: tell git who commits on this machine: git config --global user.name "Your Name" '
        '&& git config --global user.email "you@example.com"\n'
    )
    git(tmp_path, "config", "--file", str(nobody), "user.name", "Fresh Machine")
    git(tmp_path, "config", "--file", str(nobody), "user.email", "fresh@example.invalid")
    again = _cli(world.a.home, "sync")
    assert again.returncode == 0, again.stdout + again.stderr
    assert git(world.remote, "log", "-1", "--format=%an <%ae>", "main").strip() == (
        "Fresh Machine <fresh@example.invalid>"
    )
    assert world.b.sync().ok and "written before git knew" in world.b.read("facts/first.md")


def test_a_device_with_core_autocrlf_keeps_moving_its_compiled_files(world: World) -> None:
    """git checks facts/index.md out with CRLF there and the recompile writes the same text
    with LF: git took the new size for a change without reading the file, so git status
    showed it modified and the next move of it failed on every cycle ("Entry
    'facts/index.md' not uptodate. Cannot merge.", hint: retries on the next cycle)."""
    from memoryd.sync.derived import recompile

    git(world.b.root, "config", "core.autocrlf", "true")
    for name in ("x", "y", "z"):
        world.a.write(f"facts/{name}.md", memory(f"facts/{name}", name, f"{name} text\n"))
        recompile(world.a.root_config, world.a.config)  # facts/index.md changes on a
        assert world.a.sync().ok
        outcome = world.b.sync()
        assert outcome.ok, outcome
        assert git(world.b.root, "status", "--porcelain", "--untracked-files=no") == ""
    assert "`facts/z`: z" in world.b.read("facts/index.md")
    world.settle()


def test_a_sparse_checkout_is_not_a_delete_and_compiles_like_the_others(world: World) -> None:
    """git sparse-checkout leaves facts/x.md out of this work tree on purpose: sync committed
    it as deleted and pushed that, so every device lost it; and the compiled index.md left
    it out here and put it back on the other device, a commit each on every cycle."""
    world.a.write("facts/x.md", memory("facts/x", "x", "kept elsewhere\n"))
    world.a.write("facts/y.md", memory("facts/y", "y", "everywhere\n"))
    world.settle()
    git(world.b.root, "sparse-checkout", "set", "--no-cone", "/*", "!/facts/x.md")
    assert not (world.b.root / "facts/x.md").exists()
    world.b.write("facts/y.md", memory("facts/y", "y", "everywhere, edited on b\n"))
    assert world.b.sync().ok
    world.a.write("facts/x.md", memory("facts/x", "x", "kept elsewhere, edited on a\n"))
    world.settle()  # and settled: no device has one more compiled-files commit to push
    tree = git(world.remote, "ls-tree", "-r", "--name-only", "main").split()
    assert "facts/x.md" in tree and not (world.b.root / "facts/x.md").exists()
    assert "`facts/x`: x" in world.b.read("facts/index.md")


def test_a_repository_git_will_not_use_is_refused_not_called_missing(world: World) -> None:
    """A memory folder another user owns (restored from a backup, a Windows drive under WSL,
    a container's volume) is 'dubious ownership' to git: sync said the root was not inside a
    git repository, exited 0 and hinted 'git init', so the root silently never synced again.
    (git's own switch stands in for a folder of another owner, which needs root to make.)"""
    import sys

    world.a.write("facts/x.md", memory("facts/x", "x", "written in a restored folder\n"))
    env = {
        **os.environ,
        "MEMORYD_HOME": str(world.a.paths.home),
        "GIT_TEST_ASSUME_DIFFERENT_OWNER": "1",
    }
    done = subprocess.run(
        [sys.executable, "-m", "memoryd", "sync"], env=env, capture_output=True, text=True,
        timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.splitlines() == [
        f"{world.a.root}: refused",
        f"  error: git will not work in {world.a.root}: fatal: detected dubious ownership in "
        f"repository at '{world.a.root}'",
        f"  hint: if the folder is yours: git config --global --add safe.directory "
        f"{world.a.root} (or give it back to your user: chown -R $(id -un) {world.a.root}); "
        "memoryd syncs after that",
    ]


@contextlib.contextmanager
def _ref_lock_held(work_tree: Path, ref: str) -> Iterator[subprocess.Popen[str]]:
    """A real ``git update-ref --stdin`` in ``work_tree`` holding ``ref``'s lock (a prepared
    transaction) until the block ends, when it is aborted."""
    head = git(work_tree, "rev-parse", "HEAD").strip()
    proc = subprocess.Popen(
        ["git", "update-ref", "--stdin"], cwd=work_tree, stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(f"start\nupdate {ref} {head}\nprepare\n")
        proc.stdin.flush()
        assert proc.stdout.readline() == "start: ok\n"
        assert proc.stdout.readline() == "prepare: ok\n"
        yield proc
        proc.stdin.write("abort\n")
        proc.stdin.close()
        assert proc.wait(timeout=10) == 0
    finally:
        proc.kill()
        proc.wait(timeout=10)


def _other_work_tree(world: World, tmp_path: Path, lock: str | None = None) -> tuple[Path, Path]:
    """A linked work tree ``other`` (branch ``other``) of device a's repository, and the path
    of ``lock`` in its git dir, made and left long ago (by a git killed then) when given."""
    other = tmp_path / "other"
    git(world.a.root, "worktree", "add", "-q", "-b", "other", str(other))
    held = world.a.root / ".git" / (lock or "refs/heads/other.lock")
    if lock is not None:
        held.write_bytes(b"")
        os.utime(held, (1, 1))
    return other, held


def test_a_git_in_another_work_tree_keeps_a_shared_ref_lock(world: World, tmp_path: Path) -> None:
    """The branches' locks are in the git dir every linked work tree shares: a git in
    another work tree of the repository may hold one. Only a git in this work tree was
    looked for, so an old lock was moved aside from under that git, and its ref update
    could be lost."""
    other, held = _other_work_tree(world, tmp_path)
    world.a.write("facts/a.md", memory("facts/a", "a", "a\n"))
    taken = datetime(2020, 1, 2, 3, 4, 5, tzinfo=UTC).timestamp()
    with _ref_lock_held(other, "refs/heads/other") as update:
        assert held.exists()
        os.utime(held, (taken, taken))
        done = _cli(world.a.home, "sync")
        assert held.exists() and not list((world.a.root / ".git").rglob("other.lock.stale-*"))
    assert done.returncode == 1
    assert done.stdout == (
        f"{world.a.root}: blocked\n"
        f"  error: {held} has been held since 2020-01-02 03:04 UTC by git update-ref "
        f"(pid {update.pid})\n"
        "  hint: finish or quit that git command; memoryd syncs after that\n"
    )
    assert not held.exists()  # the aborted transaction took its lock away
    again = _cli(world.a.home, "sync")
    assert again.returncode == 0, again.stdout + again.stderr
    assert world.b.sync().ok and "a\n" in world.b.read("facts/a.md")


def test_a_git_commit_in_another_work_tree_keeps_an_old_lock_of_its_branch(
    world: World, tmp_path: Path
) -> None:
    """'git commit -a' waiting in its editor in another work tree takes its branch's lock
    (in the shared git dir) once the message is written: an old lock there is not moved
    aside from under it, and the root is blocked naming that git."""
    other, held = _other_work_tree(world, tmp_path, "refs/heads/other.lock")
    with waiting_git(other, "commit", "-a", "--allow-empty") as commit:
        done = _cli(world.a.home, "sync")
        assert held.exists()
    assert done.returncode == 1
    assert f"by git commit (pid {commit.pid})" in done.stdout.splitlines()[1]


def test_a_git_log_in_another_work_tree_does_not_keep_a_shared_lock(
    world: World, tmp_path: Path
) -> None:
    other, held = _other_work_tree(world, tmp_path, "refs/heads/other.lock")
    world.a.write("facts/a.md", memory("facts/a", "a", "a\n"))
    with waiting_git(other, "-c", "color.ui=never", "log", "--oneline"):
        done = _cli(world.a.home, "sync")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "notice: moved a stale other.lock (" in done.stdout
    kept = world.a.root / ".git" / "memoryd-stale-locks/refs/heads"
    assert not held.exists() and list(kept.glob("other.lock.stale-*"))
    assert git(world.a.root, "branch", "--format=%(refname:short)").split() == ["main", "other"]
    assert world.b.sync().ok and "a\n" in world.b.read("facts/a.md")


def test_a_git_in_another_work_tree_does_not_keep_this_work_trees_own_lock(
    world: World, tmp_path: Path
) -> None:
    """This work tree's index.lock is its own: a git in another work tree never takes it."""
    other, held = _other_work_tree(world, tmp_path, "index.lock")
    world.a.write("facts/a.md", memory("facts/a", "a", "a\n"))
    with waiting_git(other, "commit", "-a", "--allow-empty"):
        done = _cli(world.a.home, "sync")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "notice: moved a stale index.lock (" in done.stdout and not held.exists()
