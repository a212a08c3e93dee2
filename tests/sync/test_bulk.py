"""A big first commit, and a git that runs past its timeout (issue 38).

The first sync of a root of 100k memories ran ``git reset -q HEAD --pathspec-from-file``
with every path (quadratic: ~75 s of CPU), passed the 60 s timeout, and the
``TimeoutExpired`` escaped as an internal error with a stale ``index.lock`` left behind:
every later cycle repeated it. The speed is bench/sync_bench.py's; these tests hold the
behaviour.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memoryd.sync import git as sync_git
from tests.helpers import git
from tests.sync.world import World, make_world, memory


@pytest.fixture
def world(tmp_path: Path) -> World:
    return make_world(tmp_path)


def _locks(root: Path, home: Path) -> list[Path]:
    """git's locks: the repository's and those of the private indexes (fresh or kept)."""
    private = [p for p in home.rglob("*.lock") if "index" in p.name]
    return [*root.joinpath(".git").rglob("*.lock"), *private]


def test_a_git_past_its_timeout_is_an_error_naming_the_step_and_leaves_no_lock(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(3):
        world.a.write(f"facts/slow{n}.md", memory(f"facts/slow{n}", "slow", f"{n}\n"))
    # a clean filter that takes its time on the new files only: git status lists them
    # untracked without hashing them, update-index (holding its index's lock) waits on it.
    # With *.md, status re-hashing a racy tracked file timed out first, or not, by load.
    git(world.a.root, "config", "filter.slow.clean", "sleep 2; cat")
    (world.a.root / ".git/info/attributes").write_text("facts/slow*.md filter=slow\n")
    monkeypatch.setattr(sync_git, "LOCAL_TIMEOUT_S", 1.0)
    outcome = world.a.sync()
    assert outcome.status == "error", outcome
    assert outcome.error == "git update-index ran longer than 1 s and was stopped"
    assert outcome.hint is not None and "tries again on the next cycle" in outcome.hint
    assert _locks(world.a.root, world.a.home) == []
    monkeypatch.undo()
    (world.a.root / ".git/info/attributes").unlink()
    assert world.a.sync().pushed


def test_a_first_commit_of_many_memories_leaves_the_users_index_equal_to_head(
    world: World,
) -> None:
    for n in range(1500):
        path = world.a.root / f"facts/m{n:04d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(memory(f"facts/m{n:04d}", f"m{n}", f"{n}\n"))
    outcome = world.a.sync()
    assert outcome.pushed, outcome
    status = git(world.a.root, "status", "--porcelain")
    assert status == "", status[:300]
    done = subprocess.run(
        ["git", "diff", "--cached", "--quiet", "HEAD", "--", "facts"],
        cwd=world.a.root, check=False,
    )  # fmt: skip
    assert done.returncode == 0


def test_many_blobs_are_read_through_one_git_byte_for_byte(world: World) -> None:
    """The push's secret check read each outgoing blob with its own git (100k processes,
    181 s of CPU in a first push of 100k memories): one cat-file --batch reads them."""
    texts = [b"", b"one line\n", b"\x00\xff binary\nwith\nnewlines\n" * 50]
    shas = [
        subprocess.run(
            ["git", "hash-object", "-w", "--stdin"], input=data, cwd=world.a.root,
            capture_output=True, check=True,
        ).stdout.decode().strip()
        for data in texts
    ]  # fmt: skip
    found = sync_git.Git(world.a.root).blobs([*shas, "0" * 40])
    assert found == dict(zip(shas, texts, strict=True))
