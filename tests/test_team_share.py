"""``memoryd share ID --team NAME``: shown first, moved on --yes, never by an agent."""

from __future__ import annotations

from pathlib import Path

from tests.team_world import TEAM, join, make_team, remote_files


def test_share_shows_the_file_then_moves_it_on_yes(tmp_path: Path) -> None:
    (ann, bob), remote = make_team(tmp_path, ["ann", "bob"])
    join([ann, bob], remote)
    done = ann.json("remember", "--scope", "global", "--kind", "pitfall", "--summary",
                    "Docker compose v1 breaks the dev stack")  # fmt: skip
    personal = Path(done["path"])
    shown = ann.cli("share", done["id"], "--team", TEAM).stdout
    assert f"team {TEAM} would get this file as {ann.team_root / done['id']}.md:" in shown
    assert "author: Ann <ann@team.invalid>" in shown
    assert f"run 'memoryd share {done['id']} --team {TEAM} --yes' to move it there" in shown
    assert personal.is_file() and not (ann.team_root / f"{done['id']}.md").exists()
    refused = ann.cli("share", done["id"], "--team", TEAM, "--yes", agent=True, ok=False)
    assert refused.stderr == (
        f"memoryd: error: refusing to share {done['id']!r}: this runs under an agent "
        "(CLAUDECODE=1 (Claude Code)), and only a person moves a memory to the team\n"
        f"  hint: run 'memoryd share {done['id']} --team {TEAM}' yourself, in a terminal of your "
        "own\n"
    )
    moved = ann.json("share", done["id"], "--team", TEAM, "--yes")
    assert moved["written"] is True and not personal.exists()
    ann.cli("sync")
    bob.cli("sync")
    assert f"{done['id']}.md" in remote_files(remote)
    assert [h["id"] for h in bob.json("recall", "docker compose dev stack")] == [done["id"]]


def test_share_refuses_a_memory_kept_on_this_device(tmp_path: Path) -> None:
    (ann,), remote = make_team(tmp_path, ["ann"])
    join([ann], remote)
    local = ann.home / "memoryd/memory/facts/wifi.md"
    local.write_text("---\nsummary: the home wifi name\nsync: false\n---\nbody\n")
    done = ann.cli("share", "facts/wifi", "--team", TEAM, "--yes", ok=False)
    assert "refusing to share 'facts/wifi': it is marked sync: false" in done.stderr
    assert local.is_file()
