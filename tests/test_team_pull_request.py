"""The pull-request flow (``sync.team_branch``): proposals go to
``memoryd/proposals/<user>/<device>``,
main is only fetched, and a person's plain ``git merge`` of that branch is the acceptance.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from memoryd.conflicts import parse_copy_name
from memoryd.memory import parse
from tests.helpers import git, run_cli
from tests.team_world import Person, join, make_team, remote_files, through_branches

BRANCH_OF = "memoryd/proposals/{0}/{0}-laptop"
PROPOSAL = "pitfalls/the-flaky-cache-test-needs-a-warm-redis.md"


def merge(remote: Path, branch: str, work: Path, squash: bool = False) -> str:
    """A reviewer merges ``branch`` into main on the remote with plain git; the new main."""
    subprocess.run(["git", "clone", "-q", str(remote), str(work)], check=True)
    git(work, "config", "user.name", "Rita Reviewer")
    git(work, "config", "user.email", "rita@team.invalid")
    if squash:  # a host's "squash and merge": one new commit, the branch not an ancestor
        git(work, "merge", "--squash", "-q", f"origin/{branch}")
        git(work, "commit", "-q", "-m", f"Squashed {branch}")
    else:
        git(work, "merge", "--no-ff", "-q", "-m", f"Merge {branch}", f"origin/{branch}")
    git(work, "push", "-q", "origin", "main")
    return git(remote, "rev-parse", "main").strip()


def team_sync(person: Person) -> dict[str, Any]:
    """``memoryd sync --json``'s outcome for the team root."""
    done = person.json("sync")
    return next(o for o in done if o["root"] == str(person.team_root.resolve()))


def copies(root: Path) -> list[str]:
    return [
        str(p.relative_to(root)) for p in root.rglob("*.md")
        if parse_copy_name(str(p.relative_to(root))) is not None
    ]  # fmt: skip


@pytest.mark.parametrize("squash", [False, True], ids=["merge", "squash"])
def test_a_merged_pull_request_accepts_the_proposal_for_everyone(
    tmp_path: Path, squash: bool
) -> None:
    people, remote = make_team(tmp_path, ["ann", "bob", "carol"])
    join(people, remote)
    through_branches(people)
    ann, bob, carol = people
    main_before = git(remote, "rev-parse", "main").strip()
    ann.cli("remember", "--scope", "team", "--kind", "pitfall", "--summary",
            "The flaky cache test needs a warm redis", agent=True)  # fmt: skip
    done = team_sync(ann)
    branch = BRANCH_OF.format("ann")
    assert git(remote, "rev-parse", "main").strip() == main_before  # main is only fetched
    offered = remote_files(remote, branch)[PROPOSAL]
    meta = parse(offered.encode()).meta
    assert "status" not in meta and meta["accepted_by"] == f"the merge of {branch}"
    assert (meta["author"], meta["agent"]) == ("Ann <ann@team.invalid>", "Claude Code")
    local = parse((ann.team_root / PROPOSAL).read_bytes()).meta
    assert local["status"] == "proposed"  # on the writer's device, a proposal until merged
    assert done["not_pushed"] == 0
    assert (
        f"1 proposal(s) waiting in {branch} for a person to merge it into main" in done["notices"]
    )
    pushed = git(remote, "rev-parse", branch).strip()
    again = team_sync(ann)  # nothing new: the branch is left as it is
    assert git(remote, "rev-parse", branch).strip() == pushed
    assert again["action"] == f"waiting in {branch} for a person to merge it into main"
    for person in (bob, carol):
        person.cli("sync")
        assert not (person.team_root / PROPOSAL).exists()
        assert person.recalled("flaky redis") == set()
    assert ann.recalled("flaky redis") == {str(ann.team_root / PROPOSAL)}

    merge(remote, branch, tmp_path / "review", squash=squash)
    for person in people:  # one sync each: accepted everywhere
        person.cli("sync")
        assert person.recalled("flaky redis") == {str(person.team_root / PROPOSAL)}, person.name
        assert parse((person.team_root / PROPOSAL).read_bytes()).meta == meta, person.name
        assert copies(person.team_root) == [], person.name
    assert [p.name for p in ann.team_root.rglob("*redis*")] == [Path(PROPOSAL).name]
    assert branch not in git(remote, "branch", "--list", "memoryd/*")  # merged: deleted
    assert team_sync(ann)["action"] == "up to date"


def test_a_persons_write_waits_in_the_branch_too(tmp_path: Path) -> None:
    people, remote = make_team(tmp_path, ["ann", "bob"])
    join(people, remote)
    through_branches(people)
    ann, bob = people
    ann.cli("remember", "--scope", "team", "--kind", "decision", "--summary",
            "We use pnpm for the web app")  # fmt: skip
    ann.cli("sync")
    name = "decisions/we-use-pnpm-for-the-web-app.md"
    assert name not in remote_files(remote)
    offered = remote_files(remote, BRANCH_OF.format("ann"))[name]
    assert parse(offered.encode()).meta["accepted_by"] == "Ann <ann@team.invalid>"
    bob.cli("remember", "--scope", "team", "--kind", "fact", "--summary",
            "Staging deploys go through the orange pipeline", agent=True)  # fmt: skip
    bob.cli("sync")
    assert git(remote, "branch", "--list", "memoryd/*").split() == [
        BRANCH_OF.format("ann"), BRANCH_OF.format("bob"),
    ]  # fmt: skip


def test_team_branch_on_a_personal_root_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "memoryd-home").mkdir(exist_ok=True)
    config = tmp_path / "memoryd-home" / "config.yaml"
    root = tmp_path / "memory"
    config.write_text(f"roots:\n  - path: {root}\n    sync:\n      team_branch: true\n")
    done = run_cli("sync")
    assert done.returncode != 0
    assert done.stderr == (
        f"memoryd: error: {config}: roots[0].sync.team_branch: only a team root syncs through a "
        "proposals branch (add 'team: NAME', or remove team_branch)\n"
        f"  hint: edit {config} (see docs/config.md)\n"
    )


def proposed_by_ann(tmp_path: Path, names: list[str]) -> tuple[list[Person], Path]:
    """A team through branches whose first member's agent proposed :data:`PROPOSAL`."""
    people, remote = make_team(tmp_path, names)
    join(people, remote)
    through_branches(people)
    people[0].cli("remember", "--scope", "team", "--kind", "pitfall", "--summary",
                  "The flaky cache test needs a warm redis", agent=True)  # fmt: skip
    return people, remote


def test_a_squashed_branch_goes_though_another_merge_came_first(tmp_path: Path) -> None:
    """A squash merge, then another device's merge touching the same folder's index.md
    before the writer syncs: the writer's branch stayed on the remote for good (found by
    tests/sync/test_team_simulation.py)."""
    people, remote = proposed_by_ann(tmp_path, ["ann", "bob"])
    ann, bob = people
    ann.cli("sync")
    bob.cli("remember", "--scope", "team", "--kind", "pitfall", "--summary",
            "The staging database sleeps at night", agent=True)  # fmt: skip
    bob.cli("sync")
    merge(remote, BRANCH_OF.format("ann"), tmp_path / "review-ann", squash=True)
    bob.cli("sync")  # his branch, made again on the new main (both changed pitfalls/index.md)
    merge(remote, BRANCH_OF.format("bob"), tmp_path / "review-bob")
    done = team_sync(ann)
    assert (
        f"nothing of this device waits for review in {BRANCH_OF.format('ann')} any more: "
        f"deleted it on origin" in done["notices"]
    )
    bob.cli("sync")
    assert git(remote, "branch", "--list", "memoryd/*") == ""
    for person in people:
        assert git(person.team_root, "rev-parse", "HEAD") == git(remote, "rev-parse", "main")
        assert copies(person.team_root) == [], person.name


def test_a_rejected_proposal_forgotten_by_its_writer_leaves_no_branch(tmp_path: Path) -> None:
    """docs/team.md's rejection: close the pull request, forget the proposal on the writer's
    device. The branch kept offering the forgotten file (its writer now held nothing main
    lacked, so nothing was pushed, and the branch was not merged, so it stayed)."""
    people, remote = proposed_by_ann(tmp_path, ["ann", "bob"])
    ann = people[0]
    ann.cli("sync")
    assert PROPOSAL in remote_files(remote, BRANCH_OF.format("ann"))
    ann.cli("forget", PROPOSAL.removesuffix(".md"))
    ann.cli("sync")
    assert git(remote, "branch", "--list", "memoryd/*") == ""
    assert PROPOSAL not in remote_files(remote)
