"""Every view on a phone (390x844) and a desktop (1280x900): nothing scrolls sideways, axe-core
finds nothing serious or critical, every control is reached and worked from the keyboard.

The screenshots of docs/ui.md are taken here (``MEMORYD_UI_SHOTS=docs/ui``), one per view
and size.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.sync.world import World
from tests.ui.conftest import SIZES, UI, axe_findings, show, sideways

VIEWS = [
    "search?q=pnpm",
    "context?q=how%20do%20we%20deploy%20with%20pnpm%3F%20%E9%83%A8%E7%BD%B2",
    "memories",
    "memory?root={root}&path=decisions/db-v2.md",
    "problems",
]
CONTROLS = "a[href], button:not([disabled]), input, select, textarea, [tabindex='0']"


@pytest.mark.parametrize("size", list(SIZES))
def test_every_view_fits_and_passes_axe(  # noqa: PLR0917 - fixtures
    home: Path, ui_factory: Any, page: Any, shots: Path, axe_source: str, size: str
) -> None:
    width, height = SIZES[size]
    page.set_viewport_size({"width": width, "height": height})
    ui: UI = ui_factory(home)
    root = str(Path(os.environ["MEMORYD_HOME"]) / "memory")
    for view in VIEWS:
        show(page, ui, view.format(root=root))
        name = view.split("?", maxsplit=1)[0]
        assert sideways(page) == 0, f"{name} scrolls sideways at {width} px"
        assert axe_findings(page, axe_source) == [], name
        page.screenshot(path=str(shots / f"{name}-{size}.png"), full_page=size == "phone")
    if size == "phone":  # the memories are cards, each field named, not an 8-column table
        show(page, ui, "memories")
        card = page.locator('#memories-table tbody tr[data-id="preferences/pnpm"]')
        box = card.bounding_box()
        assert box is not None and box["width"] <= width
        label = card.locator('td[data-label="kind"]').evaluate(
            "el => getComputedStyle(el, '::before').content"
        )
        assert label == '"kind: "'


@pytest.mark.parametrize("size", list(SIZES))
def test_conflicts_fit_on_a_phone_with_panes_stacked(  # noqa: PLR0917 - fixtures
    conflicted: tuple[World, str],
    ui_factory: Any,
    page: Any,
    shots: Path,
    tmp_path: Path,
    axe_source: str,
    size: str,
) -> None:
    world, copy = conflicted
    width, height = SIZES[size]
    page.set_viewport_size({"width": width, "height": height})
    env = {**os.environ, "MEMORYD_HOME": str(world.a.paths.home)}
    ui: UI = ui_factory(tmp_path, env)
    show(page, ui, "conflicts")
    assert sideways(page) == 0
    assert axe_findings(page, axe_source) == []
    card = page.locator(f'.conflict[data-id="{copy[:-3]}"]')
    left = card.locator("th").nth(1).bounding_box()
    right = card.locator("th.right").bounding_box()
    assert left is not None and right is not None
    if size == "phone":  # stacked: the remote's header below the local's, never over it
        assert right["y"] >= left["y"] + left["height"]
    else:  # side by side
        assert right["x"] >= left["x"] + left["width"]
    for button in card.locator("button").all() + page.locator("#sync-table button").all():
        box = button.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width
    tabs = [page.locator("#tabs a").nth(n).bounding_box() for n in range(5)]
    for n, a in enumerate(tabs):  # the tab bar wraps without one tab covering another
        for b in tabs[n + 1 :]:
            assert a is not None and b is not None
            apart = (
                a["x"] + a["width"] <= b["x"]
                or b["x"] + b["width"] <= a["x"]
                or a["y"] + a["height"] <= b["y"]
                or b["y"] + b["height"] <= a["y"]
            )
            assert apart, (a, b)
    page.screenshot(path=str(shots / f"conflicts-{size}.png"), full_page=size == "phone")


def test_the_keyboard_reaches_and_works_every_control(
    home: Path, ui_factory: Any, page: Any
) -> None:
    page.set_viewport_size({"width": 1280, "height": 900})
    ui: UI = ui_factory(home)
    show(page, ui, "memories")
    wanted = page.eval_on_selector_all(  # every visible control, numbered
        CONTROLS,
        "els => els.filter(e => e.offsetParent !== null)"
        ".map((e, n) => { e.dataset.probe = String(n); return n; })",
    )
    reached: set[str] = set()
    page.focus("body")
    for _ in range(len(wanted) + 5):
        page.keyboard.press("Tab")
        reached.add(page.evaluate("() => document.activeElement.dataset.probe || ''"))
    assert {str(n) for n in wanted} <= reached  # each one, by Tab alone
    # a visible focus ring: the page's own outline, not the browser's faint default
    page.focus('button[data-sort="age"]')
    ring = page.eval_on_selector(
        'button[data-sort="age"]',
        "el => { const s = getComputedStyle(el); return [s.outlineStyle, s.outlineWidth]; }",
    )
    assert ring == ["solid", "3px"]
    page.keyboard.press("Enter")  # sort by age, from the keyboard
    page.wait_for_selector('th[aria-sort="ascending"] button[data-sort="age"]')
    page.wait_for_selector("#view-memories.ready")
    ids = page.locator("#memories-table tbody tr").evaluate_all("els => els.map(e => e.dataset.id)")
    assert ids.index("preferences/pnpm") < ids.index("pitfalls/sqlite-cjk")
    page.focus("#memories-kind")  # a select, worked with the arrow keys
    page.keyboard.press("ArrowDown")
    page.wait_for_selector("#view-memories.ready")
    names = page.eval_on_selector_all(
        "#view-memories input, #view-memories select",
        "els => els.map(e => e.labels.length ? e.labels[0].innerText.split('\\n')[0] : '')",
    )
    assert names == ["Filter", "Kind", "Folder", "Scope", "Show"]
    show(page, ui, "search")
    page.keyboard.type("pnpm")  # the box has the focus when the view opens
    page.keyboard.press("Enter")
    page.wait_for_selector(".hit")
    page.focus(".hit a.memory-link")
    page.keyboard.press("Enter")  # a link, followed from the keyboard
    page.wait_for_selector("#view-memory.ready")
