"""A one-edit cycle runs the gits it needs and no more.

Each git is a process (about 2 ms of CPU with memoryd's share), and a one-edit cycle ran
39 of them: more than plain ``git add -A; git commit; git push`` costs at 10k memories.
The config is read once a cycle (one ``config --list`` for the variables and remotes it
asks); the head heal read is HEAD, not asked again; the user's index is not compared with
HEAD when it and HEAD are as the last cycle left them; a commit made on the remote's head
as last fetched is pushed with a lease on it, not fetched for first; git's push moves the
tracking ref itself, and the branch's move drops the ref that kept the commit.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pytest

from memoryd import gitcli
from tests.helpers import git
from tests.sync.world import World, memory


@contextmanager
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, ...]]]:
    calls: list[tuple[str, ...]] = []
    real = gitcli.run

    def run(args: Sequence[str], **kw: Any) -> gitcli.Done:
        calls.append(tuple(args))
        return real(args, **kw)

    monkeypatch.setattr(gitcli, "run", run)
    yield calls
    monkeypatch.setattr(gitcli, "run", real)


ONE_EDIT = [
    "rev-parse", "symbolic-ref", "rev-parse", "config", "rev-list",  # where, and heal
    "status", "ls-tree", "update-index", "write-tree", "rev-parse",  # what changed, its tree
    "update-ref", "commit-tree", "update-ref",  # the commit, kept from a prune until HEAD names it
    "ls-tree", "update-index", "add",  # the user's index at the commit for that path
    "update-ref",  # HEAD moved, the keep ref dropped, one transaction
    "symbolic-ref",  # the remote's default branch as kept (this branch has no upstream)
    "rev-list", "diff-tree", "cat-file",  # a secret in what the remote lacks?
    "push", "for-each-ref",  # leased on that head; the backups to expire
]  # fmt: skip


def test_a_one_edit_cycle_asks_the_config_once_and_no_question_twice(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(3):
        world.a.write(f"facts/m{n}.md", memory(f"facts/m{n}", f"m{n}", f"{n}\n"))
    assert world.a.sync().pushed
    world.a.write("facts/m1.md", memory("facts/m1", "m1", "one changed\n"))
    with counted(monkeypatch) as calls:
        outcome = world.a.sync()
    assert outcome.ok and outcome.pushed and outcome.commits, outcome
    assert [c[0] for c in calls] == ONE_EDIT, [" ".join(c) for c in calls]  # 33 before, 40 first
    assert ("config", "-z", "--list") in calls
    [push] = [c for c in calls if c[0] == "push"]
    head = world.a.head()
    assert f"--force-with-lease=refs/heads/main:{git(world.a.root, 'rev-parse', 'HEAD~').strip()}" in push
    assert git(world.a.root, "rev-parse", "origin/main").strip() == world.remote_head() == head
    assert git(world.a.root, "for-each-ref", "refs/memoryd/keep/") == ""
    assert git(world.a.root, "diff", "--cached", "--name-only") == ""
    assert git(world.a.root, "diff-files", "--name-only") == ""


def test_a_user_index_written_since_the_last_cycle_is_compared_with_head(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check skipped when the user's index is as the last cycle left it runs again once
    anything wrote it: an entry under the root behind HEAD (a cycle killed after it staged
    there) is brought to HEAD."""
    world.a.write("facts/m.md", memory("facts/m", "m", "first\n"))
    assert world.a.sync().pushed
    world.a.write("facts/m.md", memory("facts/m", "m", "second\n"))
    assert world.a.sync().pushed
    old = git(world.a.root, "rev-parse", "HEAD~:facts/m.md").strip()
    git(world.a.root, "update-index", "--cacheinfo", f"100644,{old},facts/m.md")
    assert git(world.a.root, "diff", "--cached", "--name-only") == "facts/m.md\n"
    world.a.write("facts/n.md", memory("facts/n", "n", "another\n"))
    with counted(monkeypatch) as calls:
        assert world.a.sync().pushed
    assert [c for c in calls if c[0] == "diff"]
    assert git(world.a.root, "diff", "--cached", "--name-only") == ""


def test_a_remote_that_moved_on_refuses_the_leased_push_and_the_cycle_fetches(
    world: World,
) -> None:
    world.a.write("facts/a.md", memory("facts/a", "a", "from a\n"))
    world.settle()
    world.b.write("facts/b.md", memory("facts/b", "b", "from b\n"))
    assert world.b.sync().pushed
    world.a.write("facts/a.md", memory("facts/a", "a", "a again\n"))
    outcome = world.a.sync()
    assert outcome.pushed and outcome.action.startswith("rebased"), outcome
    assert "from b" in world.a.read("facts/b.md")
    assert git(world.remote, "show", "main:facts/b.md").endswith("from b\n")
    world.settle()
