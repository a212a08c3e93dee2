"""A one-edit cycle runs the gits it needs and no more.

Each git is a process (about 3 ms of CPU with memoryd's share), and a one-edit cycle ran
39 of them: more than plain ``git add -A; git commit; git push`` costs at 10k memories.
The config is read once a cycle (one ``config --list`` for the six variables it asks);
the head found whole last time is not looked up again before ``rev-list`` (which fails
when it is gone), and the user's index is compared with HEAD without asking for HEAD first.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pytest

from memoryd import gitcli
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
    assert [c for c in calls if c[0] == "config"] == [("config", "-z", "--list")]
    assert not [c for c in calls if c[:2] == ("cat-file", "-e")]
    assert [c[0] for c in calls[:7]] == [
        "rev-parse", "symbolic-ref", "rev-parse", "config", "rev-list", "diff", "worktree",
    ]  # (before: a cat-file before rev-list, a rev-parse of HEAD before diff)
    assert len(calls) == 33, [" ".join(c) for c in calls]  # 40 before
