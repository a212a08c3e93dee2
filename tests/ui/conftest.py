"""The page under test: the real ``memoryd ui`` in a subprocess, and real headless Chromium.

The browser is Debian's ``chromium`` driven by Playwright (its Python package ships the
driver; no browser is ever downloaded). Without either, the browser tests are skipped
with the reason, and ``./dev test`` says how to get them.

Screenshots go to ``$MEMORYD_UI_SHOTS`` when set (``MEMORYD_UI_SHOTS=docs/ui ./dev test
tests/ui`` refreshes the ones in docs/), else into the test's temporary folder.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.daemon.harness import SETTLE_S
from tests.helpers import git, run_cli
from tests.index.conftest import write_memory
from tests.sync.world import World, make_conflict, memory

CHROMIUM = Path("/usr/bin/chromium")
BROWSER_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip


@dataclass
class UI:
    """A running ``memoryd ui --no-open``: its URL (with the token) and its process."""

    proc: subprocess.Popen[str]
    url: str

    @property
    def origin(self) -> str:
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}"

    @property
    def port(self) -> int:
        port = urlsplit(self.url).port
        assert port is not None
        return port

    @property
    def token(self) -> str:
        return self.url.split("token=", 1)[1]

    def at(self, view: str) -> str:
        return f"{self.url}#{view}"

    def request(
        self,
        path: str,
        *,
        method: str = "GET",
        headers: dict[str, str] | None = None,
        body: bytes | None = None,
    ) -> tuple[int, dict[str, str], bytes]:
        """One raw HTTP request (no token unless the caller adds it)."""
        req = urllib.request.Request(
            self.origin + path, data=body, method=method, headers=headers or {}
        )
        try:
            with urllib.request.urlopen(req, timeout=SETTLE_S) as res:
                return res.status, dict(res.headers), res.read()
        except urllib.error.HTTPError as err:
            return err.code, dict(err.headers), err.read()

    def api(self, name: str, **params: str) -> Any:
        from urllib.parse import urlencode

        status, _h, body = self.request(
            f"/api/{name}?{urlencode(params)}", headers={"X-Memoryd-Token": self.token}
        )
        assert status == 200, body
        return json.loads(body)


def start_ui(cwd: Path, env: dict[str, str] | None = None) -> UI:
    proc = subprocess.Popen(
        [sys.executable, "-m", "memoryd", "ui", "--no-open"],
        cwd=cwd,
        env=env or dict(os.environ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    assert proc.stdout is not None
    threading.Thread(target=lambda: lines.put(proc.stdout.readline()), daemon=True).start()  # type: ignore[union-attr]
    try:
        url = lines.get(timeout=SETTLE_S).strip()  # python's start-up on a loaded machine
    except queue.Empty:
        proc.kill()
        raise AssertionError(
            f"memoryd ui printed no URL: {proc.stderr.read() if proc.stderr else ''}"
        ) from None
    assert url.startswith("http://127.0.0.1:"), (url, proc.stderr.read() if proc.stderr else "")
    return UI(proc, url)


def stop_ui(ui: UI) -> None:
    ui.proc.terminate()
    try:
        ui.proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        ui.proc.kill()
        ui.proc.wait(timeout=10)
    for stream in (ui.proc.stdout, ui.proc.stderr):
        if stream is not None:
            stream.close()


@pytest.fixture
def ui_factory() -> Iterator[Any]:
    started: list[UI] = []

    def make(cwd: Path, env: dict[str, str] | None = None) -> UI:
        ui = start_ui(cwd, env)
        started.append(ui)
        return ui

    yield make
    for ui in started:
        stop_ui(ui)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="the browser tests need playwright (the test extra)"
    )
    if not CHROMIUM.exists():
        pytest.skip(f"the browser tests need {CHROMIUM}: apt-get install chromium")
    with sync_api.sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), args=BROWSER_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1100, "height": 720})
    page = context.new_page()
    page.set_default_timeout(60_000)  # a loaded CI machine: waits return as soon as they hold
    errors: list[str] = []
    dialogs: list[str] = []

    def on_dialog(dialog: Any) -> None:
        dialogs.append(dialog.message)
        dialog.accept()

    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("dialog", on_dialog)
    page.errors = errors  # what a test checks: no script error, no dialog it did not expect
    page.dialogs = dialogs
    try:
        yield page
    finally:
        context.close()
    assert errors == [], errors


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("MEMORYD_UI_SHOTS") or tmp_path / "shots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def show(page: Any, ui: UI, view: str) -> None:
    """Load the page at ``#view`` afresh and wait until that view has finished loading."""
    page.goto("about:blank")
    page.goto(ui.at(view))
    page.wait_for_selector(f"#view-{view.split('?', maxsplit=1)[0]}.ready")


# -- the worlds the browser tests look at -------------------------------------------------

DAY_MS = 86_400_000
NOW_MS = int(time.time() * 1000)
HOSTILE = (
    "unicode61 把整段中文当成一个词, so 分词 fails for two-character words.\n"
    '<script>window.__pwned = 1; alert("pwned")</script>\n'
    '<img src="x" onerror="window.__pwned = 2">\n'
)
LINES = "".join(f"line {n}\n" for n in range(1, 6))


@pytest.fixture
def home(isolated_home: Path, tmp_path: Path) -> Path:
    """An initialised home and a project folder with its own root; returns the project."""
    assert run_cli("init").returncode == 0
    root = isolated_home / "memory"
    years = NOW_MS - 3 * 365 * DAY_MS
    write_memory(root, "pitfalls/sqlite-cjk.md", HOSTILE, id="pitfalls/sqlite-cjk", kind="pitfall",
                 summary="unicode61 treats a whole Chinese run as one token",
                 load_when=["分词", "SQLite"], created=years, updated=years)  # fmt: skip
    write_memory(root, "preferences/pnpm.md", "Always deploy with pnpm, never npm.",
                 id="preferences/pnpm", kind="preference", summary="deploy with pnpm",
                 pinned=True, updated=NOW_MS - 2 * DAY_MS)  # fmt: skip
    write_memory(root, "decisions/db-v1.md", "We store sessions in Redis.", id="decisions/db-v1",
                 kind="decision", summary="sessions in Redis", superseded_by="decisions/db-v2",
                 updated=NOW_MS - 400 * DAY_MS)  # fmt: skip
    write_memory(root, "decisions/db-v2.md", "Sessions moved to SQLite.", id="decisions/db-v2",
                 kind="decision", summary="sessions in SQLite", supersedes=["decisions/db-v1"],
                 updated=NOW_MS - 30 * DAY_MS, session="019a3f2e-7c41", agent="claude-code",
                 )  # fmt: skip  # an agent's, over MCP: the memory page says where it came from
    (root / "facts").mkdir(exist_ok=True)
    broken = root / "facts/broken.md"
    broken.write_text("---\nkind: [unclosed\nsummary: x\n---\nbody\n")
    dated(broken, NOW_MS - 40 * DAY_MS)
    assert run_cli("sync").returncode == 0  # the first commit: history for every file
    write_memory(root, "preferences/pnpm.md", "Always deploy with pnpm 9, never npm.",
                 id="preferences/pnpm", kind="preference", summary="deploy with pnpm",
                 pinned=True, updated=NOW_MS - DAY_MS)  # fmt: skip
    assert run_cli("sync").returncode == 0
    project = tmp_path / "proj"
    project.mkdir()
    git(project, "init", "-q")
    assert run_cli("init", "--project", str(project)).returncode == 0
    deploy = write_memory(project / ".memory", "facts/deploy.md", "部署 runs pnpm deploy from CI.",
                          id="facts/deploy", kind="fact", summary="部署 goes through CI")  # fmt: skip
    dated(deploy, NOW_MS - 5 * DAY_MS)
    return project


def dated(path: Path, ms: int) -> None:
    """Set the mtime of a file whose frontmatter has no date: the page shows that file's age
    from its mtime, so the order by age must not depend on the day the suite runs.
    (write_memory's mtime, tests/index's NOW_MS - DAY_MS, is 2027-01-14 08:00 UTC: in the
    future until then, which made facts/deploy the newest memory, and in the past after.)"""
    os.utime(path, (ms / 1000, ms / 1000))


@pytest.fixture
def conflicted(tmp_path: Path) -> tuple[World, str]:
    """A real conflict: both devices changed line 2, desktop synced second."""
    base = memory("facts/x", "shared", LINES)
    return make_conflict(
        tmp_path,
        "facts/x.md",
        base,
        base.replace("line 2", "A2"),
        base.replace("line 2", "B2 其他"),
    )


# -- axe-core, the accessibility check (npm ci into tests/ui/node; never in the wheel) ---------

NODE_DIR = Path(__file__).parent / "node"
AXE = NODE_DIR / "node_modules" / "axe-core" / "axe.min.js"
SIZES = {"phone": (390, 844), "desktop": (1280, 900)}


@pytest.fixture(scope="session")
def axe_source() -> str:
    """axe-core's script, installed from the committed lock file when it is missing."""
    import fcntl
    import shutil

    if not AXE.exists():
        npm = shutil.which("npm")
        if npm is None:
            pytest.skip("the accessibility check needs npm (axe-core from the npm registry)")
        with open(NODE_DIR / ".install.lock", "w") as guard:
            fcntl.flock(guard, fcntl.LOCK_EX)  # two pytest runs in one checkout install once
            if not AXE.exists():
                done = subprocess.run(
                    [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                    cwd=NODE_DIR, capture_output=True, text=True, timeout=600, check=False,
                )  # fmt: skip
                assert done.returncode == 0, f"npm ci in {NODE_DIR}: {done.stderr}"
    return AXE.read_text(encoding="utf-8")


def axe_findings(page: Any, source: str) -> list[str]:
    """The serious and critical findings of axe-core on the page as it is now."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.evaluate(source)  # evaluate, not a <script> tag: the page's CSP allows none
    result = page.evaluate("async () => await window.axe.run(document)")
    return [
        f"{v['id']} ({v['impact']}): {v['help']}: "
        + "; ".join(str(n["target"]) for n in v["nodes"][:5])
        for v in result["violations"]
        if v["impact"] in ("serious", "critical")
    ]


def sideways(page: Any) -> int:
    """How many pixels the page scrolls sideways (0: it fits the window)."""
    width: int = page.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    return width
