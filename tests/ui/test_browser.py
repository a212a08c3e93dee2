"""The page in a real headless Chromium: each view against what the CLI says.

The home has memories aged from days to years, a pinned one, a supersedes pair, a
malformed file, a project root, and a body that tries to run a script; the conflict
test uses a real conflict made by git sync between two clones of one bare remote.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.daemon.harness import DaemonProcess, wait_until
from tests.helpers import git, run_cli
from tests.index.conftest import write_memory
from tests.sync.world import World, three_of_four_deleted
from tests.ui.conftest import DAY_MS, LINES, NOW_MS, UI, show


def hit_ids(page: Any) -> list[str]:
    ids: list[str] = page.locator(".hit").evaluate_all("els => els.map(e => e.dataset.id)")
    return ids


def search(page: Any, query: str) -> None:
    """Search from the box and wait for the view rendered for this query (not the last one)."""
    page.fill("#search-q", query)
    page.press("#search-q", "Enter")
    page.wait_for_function(
        "q => { const v = document.querySelector('#view-search.ready');"
        " return v !== null && new URLSearchParams(v.dataset.params).get('q') === q; }",
        arg=query,
    )


def said(page: Any, start: str) -> str:
    """Wait for the conflicts view's message that starts with ``start``; its text.

    ``#conflicts-message .ok`` alone is no wait after a second action: the first one's
    message is still on the page when the button is clicked.
    """
    found = page.wait_for_function(
        "start => { const ok = document.querySelector('#conflicts-message .ok');"
        " return ok !== null && ok.textContent.startsWith(start) && ok.textContent; }",
        arg=start,
    )
    return str(found.json_value())


def test_search_shows_what_recall_returns_and_why(
    home: Path, ui_factory: Any, page: Any, shots: Path
) -> None:
    ui: UI = ui_factory(home)
    show(page, ui, "search")
    search(page, "分词")
    assert hit_ids(page)[0] == "pitfalls/sqlite-cjk"
    first = page.locator(".hit").first
    assert first.locator("mark").first.inner_text() == "分词"
    assert "分词 ×" in first.locator(".why").inner_text()
    parts = {
        el.get_attribute("data-part"): el.inner_text() for el in first.locator("[data-part]").all()
    }
    assert set(parts) >= {"relevance", "scope", "age", "hits"}
    assert parts["hits"].endswith("(0 hits)")  # looking here is not a recall: nothing bumped
    shown_cn = hit_ids(page)

    search(page, "pnpm")
    page.screenshot(path=str(shots / "search.png"))
    shown_en = hit_ids(page)
    assert "preferences/pnpm" in shown_en and "facts/deploy" in shown_en
    pinned = page.locator('.hit[data-id="preferences/pnpm"] [data-part="age"]').inner_text()
    assert pinned == "1"  # a pinned memory never decays: its age factor is exactly 1

    # the same library call as the CLI: the same memories in the same order, the same parts
    for query, shown in (("分词", shown_cn), ("pnpm", shown_en)):
        done = run_cli("recall", query, "--json", cwd=home)
        assert done.returncode == 0, done.stderr
        cli = json.loads(done.stdout)
        assert [h["id"] for h in cli] == shown
        api = ui.api("search", q=query)["hits"]
        assert [h["parts"]["relevance"] for h in api] == [h["parts"]["relevance"] for h in cli]


def test_memory_page_shows_text_as_text_history_and_chain(
    home: Path, ui_factory: Any, page: Any, shots: Path
) -> None:
    ui: UI = ui_factory(home)
    show(page, ui, "search")
    search(page, "分词")
    page.click('.hit[data-id="pitfalls/sqlite-cjk"] a.memory-link')
    page.wait_for_selector("#view-memory.ready")
    assert page.inner_text("#memory-title") == "pitfalls/sqlite-cjk"
    body = page.inner_text("#memory-body")
    assert '<script>window.__pwned = 1; alert("pwned")</script>' in body
    assert '<img src="x" onerror="window.__pwned = 2">' in body
    assert page.evaluate("window.__pwned") is None
    assert page.locator("#main script, #main img").count() == 0
    assert page.dialogs == []
    assert "null" not in page.inner_text("#view-memory")  # nothing missing shows as "null"
    meta = page.inner_text("#memory-meta")
    assert "pitfall" in meta and "[" not in meta  # no JSON literal: a list is a list
    load_when = page.locator('#memory-meta dd[data-key="load_when"] li').all_inner_texts()
    assert load_when == ["分词", "SQLite"]
    created = page.locator('#memory-meta dd[data-key="created"] time')
    assert created.inner_text() == "3.0 y ago"  # a date for people, the exact time on hover
    years = datetime.fromtimestamp((NOW_MS - 3 * 365 * DAY_MS) / 1000, UTC)
    assert created.get_attribute("title").startswith(years.strftime("%Y-%m-%d %H:%M:%S UTC ("))
    assert page.locator("#memory-history time").count() == 1
    assert page.locator("#memory-history tr").count() == 2  # header + the first sync's commit
    page.screenshot(path=str(shots / "memory.png"))

    root = str(Path(os.environ["MEMORYD_HOME"]) / "memory")
    show(page, ui, f"memory?root={root}&path=preferences/pnpm.md")
    history = page.locator("#memory-history tr")
    assert history.count() == 3  # edited after the first sync: two commits, newest first
    assert "pnpm 9" in page.inner_text("#memory-body")

    show(page, ui, f"memory?root={root}&path=decisions/db-v2.md")
    chain = page.locator("#memory-chain li").all_inner_texts()
    assert chain == ["decisions/db-v1 — sessions in Redis", "decisions/db-v2 — sessions in SQLite"]
    origin = page.locator("#memory-origin dl")
    assert origin.locator("dt").all_inner_texts() == ["session", "agent"]
    assert origin.locator("dd").all_inner_texts() == ["019a3f2e-7c41", "claude-code"]
    page.click("#memory-chain a")  # the older one, through the chain's link
    # The click changes the hash and the page renders the new view afterwards, so the db-v2
    # view is still "ready" for a moment: wait for the view of the memory the link names.
    page.wait_for_selector('#view-memory.ready[data-params*="db-v1"]')
    assert page.inner_text("#memory-title") == "decisions/db-v1"


def listed(page: Any) -> list[str]:
    """The ids of the Memories view's rows once the page it asked for has arrived."""
    page.wait_for_selector("#view-memories.ready")
    ids: list[str] = page.locator("#memories-table tbody tr").evaluate_all(
        "els => els.map(e => e.dataset.id)"
    )
    return ids


def test_memories_lists_every_memory_sortable_and_filterable(
    home: Path, ui_factory: Any, page: Any, shots: Path
) -> None:
    ui: UI = ui_factory(home)
    show(page, ui, "memories")
    ids = listed(page)
    inspected = json.loads(run_cli("inspect", "--json", cwd=home).stdout)["memories"]
    assert sorted(ids) == sorted(m["id"] for m in inspected)
    assert ids == sorted(ids)  # by id, in the index's order
    assert "facts/deploy" in ids  # the project root of the folder the page was started in
    age = page.locator('tr[data-id="pitfalls/sqlite-cjk"] td.num').first.inner_text()
    assert age == "3.0 y"
    assert page.inner_text("#memories-count") == f"1–{len(ids)} of {len(ids)} memories"
    page.screenshot(path=str(shots / "memories.png"))

    page.click('button[data-sort="age"]')  # newest first
    ids = listed(page)
    assert (
        ids.index("preferences/pnpm")
        < ids.index("decisions/db-v1")
        < ids.index("pitfalls/sqlite-cjk")
    )
    assert page.get_attribute('th:has(button[data-sort="age"])', "aria-sort") == "ascending"
    page.select_option("#memories-kind", "decision")
    assert listed(page) == ["decisions/db-v2", "decisions/db-v1"]
    page.select_option("#memories-kind", "*")
    page.select_option("#memories-folder", "facts")
    assert listed(page) == ["facts/deploy", "facts/broken"]
    page.select_option("#memories-folder", "*")
    page.select_option("#memories-flag", "superseded")
    assert listed(page) == ["decisions/db-v1"]
    rows = page.locator("#memories-table tbody tr")
    assert "superseded by decisions/db-v2" in rows.first.inner_text()
    page.select_option("#memories-flag", "problems")
    assert listed(page) == ["facts/broken"]
    page.select_option("#memories-flag", "pinned")
    assert listed(page) == ["preferences/pnpm"]
    page.select_option("#memories-flag", "*")
    page.fill("#memories-filter", "Redis")
    assert listed(page) == ["decisions/db-v1"]


def test_memories_come_a_page_at_a_time_from_the_index(
    isolated_home: Path, ui_factory: Any, page: Any, tmp_path: Path
) -> None:
    assert run_cli("init").returncode == 0
    root = isolated_home / "memory"
    for n in range(120):
        write_memory(root, f"facts/n{n:03}.md", f"note {n}", id=f"facts/n{n:03}", kind="fact",
                     summary=f"note {n}", updated=NOW_MS - n * DAY_MS)  # fmt: skip
    ui: UI = ui_factory(tmp_path)
    first = ui.api("memories", limit="50")
    assert first["total"] == 120 and len(first["memories"]) == 50  # never the whole list
    show(page, ui, "memories")
    assert listed(page) == [f"facts/n{n:03}" for n in range(50)]
    assert page.inner_text("#memories-count") == "1–50 of 120 memories"
    assert page.is_disabled("#memories-prev")
    page.click("#memories-next")
    assert listed(page) == [f"facts/n{n:03}" for n in range(50, 100)]
    page.click("#memories-next")
    assert listed(page) == [f"facts/n{n:03}" for n in range(100, 120)]
    assert page.is_disabled("#memories-next")
    page.click('button[data-sort="age"]')  # sorting starts again at the first page, newest
    assert listed(page) == [f"facts/n{n:03}" for n in range(50)]
    page.click('button[data-sort="age"]')
    assert listed(page) == [f"facts/n{n:03}" for n in range(119, 69, -1)]
    page.fill("#memories-filter", "note 11")
    assert listed(page) == ["facts/n119", "facts/n118", "facts/n117", "facts/n116",
                            "facts/n115", "facts/n114", "facts/n113", "facts/n112",
                            "facts/n111", "facts/n110", "facts/n011"]  # fmt: skip


def test_context_shows_the_exact_block_its_size_and_cuts(
    home: Path, ui_factory: Any, page: Any, shots: Path, isolated_home: Path
) -> None:
    config = isolated_home / "config.yaml"
    config.write_text(config.read_text() + "\ninjection:\n  max_chars: 60\n  outline_chars: 200\n")
    ui: UI = ui_factory(home)
    show(page, ui, "context")
    prompt = "how do we deploy with pnpm? 部署"
    page.fill("#context-q", prompt)
    page.click("#view-context button[type=submit]")
    page.wait_for_selector("#context-block")
    block = page.text_content("#context-block")
    done = run_cli("context", prompt, cwd=home)
    assert done.returncode == 0, done.stderr
    assert block == done.stdout  # the exact bytes an agent gets
    size = page.inner_text("#context-size")
    assert size.startswith(f"{len(done.stdout)} characters in the block;")
    assert "body budget 60 characters, outline budget 200" in size
    assert "max_chars 60, max_entries 4" in page.inner_text("#context-budget")
    total = ui.api("context", q=prompt)["budget"]["max_total_chars"]
    assert page.inner_text("#context-total") == (
        f"{len(done.stdout)} of the {total} characters the block may take "
        "(injection.max_total_chars)."
    )
    width = page.eval_on_selector("#context-meter > div", "el => el.style.width")
    assert width == f"{100 * len(done.stdout) / total:.1f}%"
    cuts = page.inner_text("#context-cuts")
    assert "was cut at the budget." in cuts and "Nothing was cut." not in cuts
    cut_roots = ui.api("context", q=prompt)["cut_roots"]
    assert cut_roots  # the outline of 200 characters cannot hold both roots' outlines
    for root in cut_roots:
        assert f"The outline of {root} was cut at its share of the budget." in cuts
    page.screenshot(path=str(shots / "context.png"))


def test_problems_lists_what_inspect_reports_with_fixes(
    home: Path, ui_factory: Any, page: Any, shots: Path
) -> None:
    ui: UI = ui_factory(home)
    show(page, ui, "problems")
    problems = json.loads(run_cli("inspect", "--json", cwd=home).stdout)["problems"]
    assert problems
    cards = page.locator(".problem")
    assert cards.count() == len(problems)
    text = page.inner_text("#view-problems")
    for problem in problems:
        assert problem["message"] in text and problem["fix"] in text
    assert "facts/broken.md" in text
    page.screenshot(path=str(shots / "problems.png"))


def test_conflict_resolved_with_the_button_then_synced(
    conflicted: tuple[World, str], ui_factory: Any, page: Any, shots: Path, tmp_path: Path
) -> None:
    world, copy = conflicted
    env = {**os.environ, "MEMORYD_HOME": str(world.a.paths.home)}
    ui: UI = ui_factory(tmp_path, env)
    show(page, ui, "conflicts")
    card = page.locator(f'.conflict[data-id="{copy[:-3]}"]')
    changed = card.locator("tr.change").all_inner_texts()
    [line2] = [row for row in changed if "B2 其他" in row]  # side by side with the remote's
    assert line2.split("\t")[1:] == ["B2 其他", "7", "A2"]
    assert "desktop" in card.inner_text()
    page.screenshot(path=str(shots / "conflicts.png"))

    card.locator('button[data-keep="local"]').click()
    message = page.wait_for_selector("#conflicts-message .ok")
    assert message.inner_text() == f"put desktop's text from {copy} at facts/x.md"
    page.wait_for_selector("#no-conflicts")
    text = world.a.read("facts/x.md")  # on disk: the copy's text at the path, the copy gone
    assert "B2 其他" in text and "A2" not in text and "conflict_of" not in text
    assert not (world.a.root / copy).exists()
    assert not (world.a.root / "CONFLICTS.md").exists()

    page.click(f'#sync-table tr[data-root="{world.a.root}"] button[data-action="sync"]')
    # the resolve's own ".ok" was there before this click: wait for the sync's message
    assert said(page, f"{world.a.root}: ").startswith(f"{world.a.root}: ok")
    remote = world.remote
    assert "B2 其他" in git(remote, "show", "main:facts/x.md")  # in git: pushed
    assert copy not in git(remote, "ls-tree", "-r", "--name-only", "main")
    assert git(world.a.root, "status", "--porcelain") == ""
    world.settle()
    assert "B2 其他" in world.b.read("facts/x.md")
    assert not (world.b.root / copy).exists()


def test_paused_root_shows_the_reason_and_the_confirm_commits(
    isolated_home: Path, ui_factory: Any, page: Any, tmp_path: Path
) -> None:
    assert run_cli("init").returncode == 0
    root = isolated_home / "memory"
    three_of_four_deleted(root)
    assert run_cli("sync").returncode == 1  # paused: 3 of 4 deleted in one go
    ui: UI = ui_factory(tmp_path)
    show(page, ui, "conflicts")
    row = page.locator(f'#sync-table tr[data-root="{root}"]')
    assert "paused: 3 of 4 memories deleted in one go" in row.inner_text()
    row.locator('button[data-action="confirm-delete"]').click()
    page.wait_for_selector("#conflicts-message .ok")
    assert page.dialogs and "--allow-mass-delete" in page.dialogs[0]
    assert git(root, "ls-files", "facts").split() == ["facts/m3.md"]
    row = page.locator(f'#sync-table tr[data-root="{root}"]')
    assert row.locator(".paused, [data-action=confirm-delete]").count() == 0


def test_the_page_works_beside_a_running_daemon(
    isolated_home: Path, ui_factory: Any, page: Any, tmp_path: Path
) -> None:
    from memoryd.app import App

    assert run_cli("init").returncode == 0
    daemon = DaemonProcess(tmp_path)
    try:
        daemon.wait_ready(App())
        ui: UI = ui_factory(tmp_path)
        show(page, ui, "search")
        page.wait_for_function("() => document.querySelector('#status').textContent !== ''")
        assert f"daemon running (pid {daemon.proc.pid})" in page.inner_text("#status")
        write_memory(isolated_home / "memory", "facts/kettle.md", "The kettle is descaled monthly.",
                     kind="fact", summary="kettle upkeep")  # fmt: skip
        assert wait_until(lambda: bool(ui.api("search", q="kettle")["hits"]))
        search(page, "kettle")
        assert hit_ids(page) == ["facts/kettle"]
    finally:
        assert daemon.terminate() == 0, daemon.output()


def test_keep_all_settles_every_conflict_after_asking(
    tmp_path: Path, ui_factory: Any, page: Any
) -> None:
    from tests.sync.world import make_world, two_conflicts

    world = make_world(tmp_path)
    for device in world.devices:
        device.paths.config_file.write_text(f"device: {device.name}\n")
    copies = two_conflicts(world, LINES)
    assert len(copies) == 2
    env = {**os.environ, "MEMORYD_HOME": str(world.a.paths.home)}
    ui: UI = ui_factory(tmp_path, env)
    show(page, ui, "conflicts")
    page.click('#resolve-all button[data-keep-all="both"]')
    message = page.wait_for_selector("#conflicts-message .ok")
    assert message.inner_text() == "settled 2 conflict(s), 0 left pending"
    assert page.dialogs == [
        "Settle all 2 conflicts with keep both? (memoryd resolve --all --keep both)"
    ]
    page.wait_for_selector("#no-conflicts")
    for name, copy in zip(("x", "y"), copies, strict=True):
        assert not (world.a.root / copy).exists()
        assert "line A" in world.a.read(f"facts/{name}.md")
        assert "line B" in world.a.read(f"facts/{name}-desktop.md")


def test_why_did_the_agent_say_that_in_two_clicks(
    home: Path, ui_factory: Any, page: Any, shots: Path
) -> None:
    from urllib.parse import quote, urlencode

    ui: UI = ui_factory(home)
    show(page, ui, "context?q=" + quote("how do we deploy with pnpm?"))
    entry = page.locator('#context-entries tr[data-id="preferences/pnpm"] a.memory-link')
    entry.click()  # one: from the memory in the agent's block to its page
    page.wait_for_selector('#view-memory.ready[data-params*="ref="]')
    assert page.inner_text("#memory-title") == "preferences/pnpm"
    origin = page.inner_text("#memory-origin")
    assert "records no source, session or agent" in origin
    root = Path(os.environ["MEMORYD_HOME"]) / "memory"
    authors = git(root, "log", "--format=%an", "--", "preferences/pnpm.md").split("\n")
    assert f"First committed by {authors[-1]}" in origin and "Last changed by" in origin
    rows = page.locator("#memory-history tbody tr")
    assert rows.count() == 2
    rows.nth(1).locator("button").click()  # two: the text at the older commit
    text = page.wait_for_selector("#memory-at-text").inner_text()
    assert "Always deploy with pnpm, never npm." in text and "pnpm 9" not in text
    page.screenshot(path=str(shots / "provenance.png"))
    wrong = urlencode({"root": str(root), "path": "preferences/pnpm.md", "commit": "0" * 40})
    status, _h, body = ui.request(
        f"/api/memory-at?{wrong}", headers={"X-Memoryd-Token": ui.token}
    )  # a commit outside the file's history is refused, not shown
    assert status == 403 and b"is not in the history of preferences/pnpm.md" in body


def test_accept_and_forget_from_the_memory_page_as_the_cli_does(
    home: Path, ui_factory: Any, page: Any
) -> None:
    root = Path(os.environ["MEMORYD_HOME"]) / "memory"
    write_memory(root, "proposals/tabs.md", "Indent with tabs.", id="proposals/tabs",
                 kind="rule-proposal", summary="indent with tabs")  # fmt: skip
    ui: UI = ui_factory(home)
    show(page, ui, f"memory?root={root}&path=proposals/tabs.md")
    page.click('button[data-action="accept"]')
    done = page.wait_for_selector("#memory-message .ok").inner_text()
    assert done == "accepted proposals/tabs as rules/tabs: it is now an iron rule open rules/tabs"
    assert page.dialogs == [
        "Accept proposals/tabs as an iron rule? (memoryd accept proposals/tabs --scope global)"
    ]
    assert "kind: rule\n" in (root / "rules/tabs.md").read_text()
    assert not (root / "proposals/tabs.md").exists()
    page.click("#memory-message a.memory-link")
    page.wait_for_selector('#view-memory.ready[data-params*="rules"]')
    assert page.locator('button[data-action="accept"]').count() == 0  # a rule now

    show(page, ui, f"memory?root={root}&path=decisions/db-v2.md")
    page.click('button[data-action="forget"]')
    done = page.wait_for_selector("#memory-message .ok").inner_text()
    assert done.startswith(f"forgot decisions/db-v2: removed {root}/decisions/db-v2.md")
    assert "cleared the link in decisions/db-v1" in done  # memoryd forget's relink
    assert not (root / "decisions/db-v2.md").exists()
    assert "superseded_by" not in (root / "decisions/db-v1.md").read_text()
    assert "decisions/db-v2" not in json.dumps(ui.api("memories")["memories"])


def test_pin_and_unpin_from_the_memory_page(home: Path, ui_factory: Any, page: Any) -> None:
    root = Path(os.environ["MEMORYD_HOME"]) / "memory"
    ui: UI = ui_factory(home)
    show(page, ui, f"memory?root={root}&path=pitfalls/sqlite-cjk.md")
    page.click('button[data-action="pin"]')
    page.wait_for_selector('button[data-action="unpin"]')  # the page read again
    assert "pinned: true\n" in (root / "pitfalls/sqlite-cjk.md").read_text()
    assert page.dialogs == [
        "Pin pitfalls/sqlite-cjk? (memoryd pin pitfalls/sqlite-cjk --scope global)"
    ]
    flagged = ui.api("memories", flag="pinned")["memories"]
    assert sorted(m["id"] for m in flagged) == ["pitfalls/sqlite-cjk", "preferences/pnpm"]
    page.click('button[data-action="unpin"]')
    page.wait_for_selector('button[data-action="pin"]')
    assert "pinned" not in (root / "pitfalls/sqlite-cjk.md").read_text()


def test_the_memory_page_shows_the_session_and_agent_that_wrote_it(
    home: Path, ui_factory: Any, page: Any, shots: Path, monkeypatch: Any
) -> None:
    """Written by an agent (its name and session in the environment, as a wrapper or hook
    sets them): the page names both, beside the commits."""
    monkeypatch.setenv("MEMORYD_AGENT", "Codex")
    monkeypatch.setenv("MEMORYD_SESSION_ID", "019a-session-42")
    done = run_cli("remember", "--scope", "global", "--kind", "fact", "--id", "facts/staging",
                   "--summary", "staging is read-only on Sundays", cwd=home)  # fmt: skip
    assert done.returncode == 0, done.stderr
    ui: UI = ui_factory(home)
    root = str(Path(os.environ["MEMORYD_HOME"]) / "memory")
    show(page, ui, f"memory?root={root}&path=facts/staging.md")
    fields = page.locator("#memory-origin dl")
    names = fields.locator("dt").all_inner_texts()
    values = fields.locator("dd").all_inner_texts()
    assert dict(zip(names, values, strict=True)) == {"session": "019a-session-42", "agent": "Codex"}
    page.screenshot(path=str(shots / "memory-origin.png"))
