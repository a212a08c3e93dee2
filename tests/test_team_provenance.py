"""Provenance on every team memory: ``inspect``, recall's text and JSON, and the MCP recall
answer say who wrote it, on which device, in which session, and who accepted it."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import run_cli
from tests.team_world import Person, join, make_team

ID = "pitfalls/the-flaky-cache-test-needs-a-warm-redis"
BY = (
    "written by Ann <ann@team.invalid> on ann-laptop (session session-of-ann, agent Claude "
    "Code); accepted by Carol <carol@team.invalid>"
)


def accepted_team_memory(tmp_path: Path) -> tuple[Person, Person]:
    """Ann's agent proposes, Carol accepts, Bob syncs: Bob's device has the team memory."""
    (ann, bob, carol), remote = make_team(tmp_path, ["ann", "bob", "carol"])
    join([ann, bob, carol], remote)
    ann.cli("remember", "--scope", "team", "--kind", "pitfall", "--summary",
            "The flaky cache test needs a warm redis", agent=True)  # fmt: skip
    ann.cli("sync")
    carol.cli("sync")
    carol.cli("accept", ID)
    carol.cli("sync")
    bob.cli("sync")
    return bob, carol


def test_recall_inspect_and_mcp_show_who_wrote_and_accepted_it(tmp_path: Path) -> None:
    bob, _ = accepted_team_memory(tmp_path)
    path = bob.team_root / f"{ID}.md"
    shown_by = []
    for process in (False, True):  # the full path, then a process's lean one (entry.py)
        with bob.environ():
            shown = run_cli("recall", "flaky redis", cwd=bob.home, process=process).stdout
        shown_by.append(shown)
        assert shown.splitlines()[:3] == [
            f"1. {ID}  (pitfall, team, score {shown.split('score ')[1].split(')')[0]})",
            "   The flaky cache test needs a warm redis",
            f"   {BY}",
        ]
    assert [s.splitlines()[1:] for s in shown_by[:1]] == [shown_by[1].splitlines()[1:]]
    hits = bob.json("recall", "flaky redis")
    assert [h["provenance"] for h in hits] == [{
        "author": "Ann <ann@team.invalid>", "device": "ann-laptop",
        "session": "session-of-ann", "agent": "Claude Code",
        "accepted_by": "Carol <carol@team.invalid>",
    }]  # fmt: skip
    answer = bob.mcp_recall(bob.home, "flaky redis")
    assert f"\nThe flaky cache test needs a warm redis\nTeam memory, {BY}\n\n" in answer, answer
    listing = bob.cli("inspect").stdout.splitlines()
    at = next(i for i, line in enumerate(listing) if line.startswith(f"  {ID}  "))
    assert listing[at + 1] == f"  {' ' * len(ID)}  {BY}"
    inspected = bob.json("inspect")["memories"]
    row = next(m for m in inspected if m["id"] == ID)
    assert row["provenance"]["accepted_by"] == "Carol <carol@team.invalid>"
    assert row["path"] == path.relative_to(bob.team_root).as_posix()


def test_a_personal_memory_shows_no_provenance(tmp_path: Path) -> None:
    (ann,), remote = make_team(tmp_path, ["ann"])
    join([ann], remote)
    ann.cli("remember", "--scope", "global", "--kind", "fact", "--summary",
            "The office wifi is on floor three")  # fmt: skip
    (hit,) = ann.json("recall", "office wifi")
    assert "provenance" not in hit
    assert "written by" not in ann.cli("recall", "office wifi").stdout
