"""A team memory's page: who proposed it, and a person's accept from the page (issue 42).

Two people share a team root through one bare remote; Carol opens Ann's agent's proposal
in ``memoryd ui`` (the real server in a subprocess, real Chromium) and accepts it.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from memoryd.app import App
from memoryd.errors import Refused
from memoryd.memory import parse
from memoryd.ui.views import Views
from tests.team_world import TEAM, join, make_team
from tests.ui.conftest import UI, show

ID = "pitfalls/the-flaky-cache-test-needs-a-warm-redis"
PROPOSED = (
    f"Team {TEAM}'s memory, proposed by Ann <ann@team.invalid> on ann-laptop "
    "(session session-of-ann, agent Claude Code)"
)


def test_a_person_sees_who_proposed_it_and_accepts_it_from_the_page(
    tmp_path: Path, ui_factory: Any, page: Any
) -> None:
    (ann, carol), remote = make_team(tmp_path, ["ann", "carol"])
    join([ann, carol], remote)
    ann.cli("remember", "--scope", "team", "--kind", "pitfall", "--summary",
            "The flaky cache test needs a warm redis", agent=True)  # fmt: skip
    ann.cli("sync")
    carol.cli("sync")
    ui: UI = ui_factory(carol.home, carol.env)
    root = carol.team_root.resolve()
    view = f"memory?root={root}&path={ID}.md"
    show(page, ui, view)
    assert page.inner_text("#memory-provenance") == PROPOSED
    assert "only the device that wrote it recalls it" in page.inner_text("#memory-origin")
    page.click('button[data-action="accept"]')
    done = page.wait_for_selector("#memory-message .ok").inner_text()
    assert done == f"accepted {ID}: every device of team {TEAM} recalls it after its next sync"
    assert page.dialogs == [
        f"Accept {ID} for team {TEAM}? Every device of the team recalls it after its next "
        f"sync. (memoryd accept {ID} --scope team)"
    ]
    meta = parse((root / f"{ID}.md").read_bytes()).meta
    assert ("status" not in meta, meta["accepted_by"]) == (True, "Carol <carol@team.invalid>")
    show(page, ui, view)
    assert page.inner_text("#memory-provenance") == (
        PROPOSED.replace("proposed by", "written by") + "; accepted by Carol <carol@team.invalid>"
    )
    assert page.locator('button[data-action="accept"]').count() == 0
    carol.cli("sync")
    ann.cli("sync")
    assert [h["id"] for h in carol.json("recall", "flaky redis")] == [ID]


def test_the_page_refuses_an_accept_under_an_agent(tmp_path: Path) -> None:
    """The page's accept is the command's: an agent's marker in its environment refuses it."""
    (ann,), remote = make_team(tmp_path, ["ann"])
    join([ann], remote)
    ann.cli("remember", "--scope", "team", "--kind", "fact", "--summary",
            "Lunch orders close at eleven", agent=True)  # fmt: skip
    with ann.environ(agent=True) as env:
        views = Views(App(env=env, cwd=ann.home, out=io.StringIO(), err=io.StringIO()))
        with pytest.raises(Refused) as refused:
            views.post("accept", {"id": "facts/lunch-orders-close-at-eleven", "scope": "team"})
    assert str(refused.value).startswith(
        "refusing to accept 'facts/lunch-orders-close-at-eleven': this runs under an agent "
        "(CLAUDECODE=1 (Claude Code))"
    )
