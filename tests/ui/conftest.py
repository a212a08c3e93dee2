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
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.daemon.harness import SETTLE_S

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
