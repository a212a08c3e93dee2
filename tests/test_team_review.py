"""Review before reach, in a simulated team of five: five homes, one bare remote, agents
writing through ``memoryd remember`` and the MCP tools.

0 unreviewed memories reach another person's recall or compiled files; an accepted one
reaches every device within one sync; nothing personal is on the team remote.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memoryd.memory import parse
from tests.team_world import TEAM, Person, join, make_team, remote_files

FIVE = ["ann", "bob", "carol", "dan", "eve"]


def sync_all(people: list[Person]) -> None:
    for person in people:
        person.cli("sync")


@pytest.fixture
def team(tmp_path: Path) -> tuple[list[Person], Path]:
    people, remote = make_team(tmp_path, FIVE)
    join(people, remote)
    sync_all(people)
    return people, remote


def test_proposals_reach_no_one_else_until_a_person_accepts(
    team: tuple[list[Person], Path],
) -> None:
    people, remote = team
    ann, bob, carol = people[:3]
    ann.cli("remember", "--scope", "team", "--kind", "pitfall", "--summary",
            "The flaky cache test needs a warm redis", agent=True)  # fmt: skip
    text = bob.mcp_remember(
        bob.home, kind="fact", summary="Staging deploys go through the orange pipeline",
        scope="team",
    )  # fmt: skip
    assert "proposed to the team" in text
    sync_all(people)
    sync_all(people)
    ann_file = "pitfalls/the-flaky-cache-test-needs-a-warm-redis.md"
    bob_file = "facts/staging-deploys-go-through-the-orange-pipeline.md"
    on_remote = remote_files(remote)
    assert {ann_file, bob_file} <= set(on_remote)  # the direct flow: proposals on main
    meta = parse(on_remote[ann_file].encode()).meta
    assert (meta["status"], meta["author"], meta["device"], meta["agent"], meta["session"]) == (
        "proposed", "Ann <ann@team.invalid>", "ann-laptop", "Claude Code", "session-of-ann"
    )
    assert parse(on_remote[bob_file].encode()).meta["agent"] == "Claude Code"
    unreviewed = 0
    for person in people:
        for writer, query, file in (
            (ann, "flaky redis", ann_file), (bob, "orange pipeline", bob_file),
        ):  # fmt: skip
            mine = person is writer
            path = str(person.team_root / file)
            assert (person.team_root / file).is_file()  # the file travels: review needs it
            seen = path in person.recalled(query)
            seen_mcp = file.removesuffix(".md") in person.mcp_recall(person.home, query)
            in_context = file.removesuffix(".md") in person.cli("context", query).stdout
            in_root_md = file.removesuffix(".md") in (person.team_root / "ROOT.md").read_text()
            index_md = (person.team_root / file).parent / "index.md"
            in_index_md = index_md.is_file() and Path(file).name in index_md.read_text()
            assert seen == mine and seen_mcp == mine and in_context == mine, (person.name, file)
            assert not in_root_md and not in_index_md, (person.name, file)
            unreviewed += (seen or seen_mcp or in_context or in_root_md or in_index_md) and not mine
    assert unreviewed == 0
    refused = carol.cli("accept", ann_file.removesuffix(".md"), agent=True, ok=False)
    assert "this runs under an agent" in refused.stderr
    done = carol.cli("accept", ann_file.removesuffix(".md"))
    assert "every device of the team sees it after its next sync" in done.stdout
    carol.cli("sync")
    for person in people:  # one sync each
        person.cli("sync")
        assert str(person.team_root / ann_file) in person.recalled("flaky redis"), person.name
        assert ann_file.removesuffix(".md") in person.cli("context", "flaky redis").stdout
        still_proposed = str(person.team_root / bob_file) in person.recalled("orange pipeline")
        assert still_proposed == (person is bob), person.name
    meta = parse(remote_files(remote)[ann_file].encode()).meta
    assert "status" not in meta
    assert meta["accepted_by"] == "Carol <carol@team.invalid>"
    assert meta["author"] == "Ann <ann@team.invalid>"


def test_an_agents_iron_rule_for_the_team_waits_for_a_person(
    team: tuple[list[Person], Path],
) -> None:
    people, _ = team
    ann, bob = people[:2]
    done = ann.json("remember", "--scope", "team", "--kind", "rule", "--summary",
                    "Never push to main on Fridays", agent=True)  # fmt: skip
    assert (done["kind"], done["proposed"]) == ("rule-proposal", True)
    ann.cli("sync")
    bob.cli("sync")
    assert bob.json("recall", "push fridays") == []
    accepted = bob.json("accept", done["id"])
    assert accepted["kind"] == "rule"
    rule = parse((bob.team_root / f"{accepted['id']}.md").read_bytes()).meta
    assert ("status" not in rule, rule["accepted_by"]) == (True, "Bob <bob@team.invalid>")
    bob.cli("sync")
    ann.cli("sync")
    assert "Never push to main on Fridays" in (ann.team_root / "ROOT.md").read_text()


def test_a_person_writing_to_the_team_root_needs_no_review(
    team: tuple[list[Person], Path],
) -> None:
    people, _ = team
    ann, bob = people[:2]
    done = ann.json("remember", "--scope", "team", "--kind", "fact", "--summary",
                    "The VPN is needed for the metrics dashboard")  # fmt: skip
    assert "proposed" not in done
    ann.cli("sync")
    bob.cli("sync")
    assert [h["id"] for h in bob.json("recall", "metrics dashboard vpn")] == [done["id"]]


def test_nothing_personal_reaches_the_team_remote(team: tuple[list[Person], Path]) -> None:
    people, remote = team
    ann = people[0]
    ann.cli("remember", "--kind", "preference", "--summary", "I like tabs over spaces")
    ann.cli("remember", "--scope", "global", "--kind", "fact", "--summary",
            "My home server is called pluto")  # fmt: skip
    ann.mcp_remember(ann.home, kind="fact", summary="My shell prompt is starship")
    local = ann.team_root / "facts" / "local-only.md"
    local.write_text("---\nsummary: ann's scratch note\nsync: false\n---\nscratch\n")
    secret = ann.cli("remember", "--scope", "team", "--kind", "fact", "--summary",
                     "the deploy key", "AKIAIOSFODNN7EXAMPLQ", agent=True, ok=False)  # fmt: skip
    assert "looks like a secret" in secret.stderr
    ann.cli("sync")
    text = "\n".join(remote_files(remote).values())
    for personal in ("tabs over spaces", "pluto", "starship", "scratch", "AKIA"):
        assert personal not in text


def test_conflicting_edits_of_a_team_memory_are_kept_as_in_a_personal_root(
    team: tuple[list[Person], Path],
) -> None:
    people, _ = team
    ann, bob = people[:2]
    done = ann.json("remember", "--scope", "team", "--kind", "fact", "--summary",
                    "The release train leaves on Tuesdays")  # fmt: skip
    ann.cli("sync")
    bob.cli("sync")
    for person, day in ((ann, "Wednesdays"), (bob, "Thursdays")):
        file = person.team_root / f"{done['id']}.md"
        file.write_text(file.read_text().replace("Tuesdays", day))
        person.cli("sync")
    ann.cli("sync")
    bob.cli("sync")
    for person in (ann, bob):
        texts = "\n".join(p.read_text() for p in person.team_root.rglob("*.md"))
        assert "Wednesdays" in texts and "Thursdays" in texts, person.name


def test_team_name_is_recorded(team: tuple[list[Person], Path]) -> None:
    ann = team[0][0]
    assert f"team: {TEAM}" in (ann.home / "memoryd/config.yaml").read_text()


def test_inspect_lists_no_proposal_and_finds_no_missing_row(
    team: tuple[list[Person], Path],
) -> None:
    people, _ = team
    ann, bob = people[:2]
    ann.cli("remember", "--scope", "team", "--kind", "fact", "--summary",
            "Lunch orders close at eleven", agent=True)  # fmt: skip
    ann.cli("sync")
    bob.cli("sync")
    for person in (ann, bob):
        shown = person.json("inspect")
        assert not [m for m in shown["memories"] if "lunch" in m["id"]], person.name
        assert not [p for p in shown["problems"] if "lunch" in str(p)], person.name


def test_the_write_guard_refuses_an_agents_direct_write_into_a_team_root(
    team: tuple[list[Person], Path],
) -> None:
    ann = team[0][0]
    target = ann.team_root / "facts" / "sneaky.md"
    done = ann.cli("guard", str(target), agent=True, ok=False)
    assert done.returncode == 3
    assert (
        f"refusing to write {target}: it is in team acme's memory, where an agent's memory "
        "waits for a person's review"
    ) in done.stderr
    assert ann.cli("guard", str(ann.home / "notes.md"), agent=True).returncode == 0
