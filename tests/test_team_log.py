"""``memoryd team log``: what changed since the user last looked, and what waits for review."""

from __future__ import annotations

from pathlib import Path

from tests.team_world import TEAM, join, make_team


def test_team_log_shows_each_change_once_and_the_waiting_proposals(tmp_path: Path) -> None:
    (ann, bob), remote = make_team(tmp_path, ["ann", "bob"])
    join([ann, bob], remote)
    bob.json("team", "log")  # the join itself: looked at
    ann.cli("remember", "--scope", "team", "--kind", "fact", "--summary",
            "Code freeze starts on the 20th")  # fmt: skip
    ann.cli("remember", "--scope", "team", "--kind", "decision", "--summary",
            "We use pnpm for the web app", agent=True)  # fmt: skip
    ann.cli("sync")
    bob.cli("sync")
    [log] = bob.json("team", "log", TEAM)
    files = [f for change in log["changes"] for f in change["files"]]
    assert "A facts/code-freeze-starts-on-the-20th.md" in files
    assert "A decisions/we-use-pnpm-for-the-web-app.md" in files
    assert {c["author"] for c in log["changes"]} == {"Ann <ann@team.invalid>"}
    assert log["waiting"] == [{
        "id": "decisions/we-use-pnpm-for-the-web-app",
        "proposed": "proposed by Ann <ann@team.invalid> on ann-laptop (session session-of-ann, agent Claude Code)",
    }]  # fmt: skip
    [again] = bob.json("team", "log")
    assert again["changes"] == [] and len(again["waiting"]) == 1
    text = bob.cli("team", "log").stdout
    assert "waiting for a person: decisions/we-use-pnpm-for-the-web-app" in text
    assert bob.json("team", "log", "--all")[0]["changes"]  # the whole history, mark kept
    assert bob.json("team", "log")[0]["changes"] == []


def test_team_log_without_a_team_says_how_to_join(tmp_path: Path) -> None:
    (ann,), _ = make_team(tmp_path, ["ann"])
    ann.cli("init")
    done = ann.cli("team", "log", ok=False)
    assert "no team root is configured" in done.stderr
    assert "memoryd init --team NAME --remote URL" in done.stderr
