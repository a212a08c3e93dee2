"""A ``git gc --prune=now`` run by hand while memoryd syncs (issue 38).

memoryd writes loose objects and the branch names them only at the end: a prune in
between deleted them, the branch named a missing commit or tree, and every later cycle
failed with "bad object HEAD" and "memoryd retries on the next cycle", forever.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memoryd.sync.git import Git
from tests.helpers import git
from tests.sync.world import World, memory


def _prune(repo: Path) -> None:
    subprocess.run(["git", "gc", "-q", "--prune=now"], cwd=repo, check=True, timeout=60)


def _whole(repo: Path) -> bool:
    done = subprocess.run(
        ["git", "fsck", "--connectivity-only", "--no-dangling"],
        cwd=repo, capture_output=True, check=False,
    )  # fmt: skip
    return done.returncode == 0


def _loose(repo: Path, sha: str) -> Path:
    return repo / ".git" / "objects" / sha[:2] / sha[2:]


def test_a_prune_between_the_commit_and_the_branch_loses_nothing(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    world.a.write("facts/raced.md", memory("facts/raced", "raced", "written as gc ran\n"))
    real = Git.update_ref

    def prune_first(self: Git, ref: str, new: str, old: str | None, reason: str, **kw: str) -> None:
        if ref == "HEAD":  # the user's gc, at the worst moment
            _prune(self.workdir)
        real(self, ref, new, old, reason, **kw)

    monkeypatch.setattr(Git, "update_ref", prune_first)
    outcome = world.a.sync()
    monkeypatch.undo()
    assert outcome.ok, outcome
    assert _whole(world.a.root)
    assert "written as gc ran" in git(world.a.root, "show", "HEAD:facts/raced.md")
    assert git(world.a.root, "for-each-ref", "refs/memoryd/keep/") == ""  # nothing left held
    world.settle()


def test_a_branch_naming_a_missing_commit_is_set_back_and_committed_again(world: World) -> None:
    world.a.write("facts/kept.md", memory("facts/kept", "kept", "one\n"))
    world.settle()
    world.a.write("facts/kept.md", memory("facts/kept", "kept", "two, then pruned\n"))
    outcome = world.a.sync()
    assert outcome.pushed, outcome
    head = world.a.head()
    tree = git(world.a.root, "rev-parse", "HEAD^{tree}").strip()
    for sha in (head, tree):  # what a prune racing the commit deletes
        _loose(world.a.root, sha).unlink()
    assert not _whole(world.a.root)

    outcome = world.a.sync()
    assert outcome.ok, outcome
    [said] = [n for n in outcome.notices if "no longer has" in n]
    assert said.startswith(f"main named commit {head[:12]}, which git no longer has whole")
    assert "nothing is lost" in said
    assert _whole(world.a.root)
    assert "two, then pruned" in git(world.a.root, "show", "HEAD:facts/kept.md")
    again = world.a.sync()
    assert again.ok and not [n for n in again.notices if "no longer has" in n], again
    world.settle()
    assert "two, then pruned" in world.b.read("facts/kept.md")


def test_a_branch_naming_a_missing_tree_below_the_top_is_repaired(world: World) -> None:
    world.a.write("facts/deep.md", memory("facts/deep", "deep", "one\n"))
    world.settle()
    world.a.write("facts/deep.md", memory("facts/deep", "deep", "two\n"))
    assert world.a.sync().ok
    sub = git(world.a.root, "rev-parse", "HEAD:facts").strip()
    _loose(world.a.root, sub).unlink()

    outcome = world.a.sync()
    assert outcome.ok, outcome
    assert any("no longer has whole" in n for n in outcome.notices), outcome
    assert _whole(world.a.root)
    world.settle()
    assert "two" in world.b.read("facts/deep.md")


def test_a_partial_clone_is_left_as_it_is(world: World, tmp_path: Path) -> None:
    """A clone made with --filter=blob:none lacks blobs by design: never "repaired"."""
    world.a.write("facts/big.md", memory("facts/big", "big", "fetched on demand\n"))
    world.settle()
    git(world.remote, "config", "uploadpack.allowFilter", "true")
    partial = tmp_path / "partial"
    subprocess.run(
        ["git", "clone", "-q", "--no-checkout", "--filter=blob:none", f"file://{world.remote}",
         str(partial)], check=True,
    )  # fmt: skip
    from memoryd.sync.heal import check
    from memoryd.sync.repo import open_repo

    head = git(partial, "rev-parse", "HEAD").strip()
    assert check(open_repo(partial), "") == (head, None)
