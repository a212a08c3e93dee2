"""What the server refuses, asked over real HTTP of the real ``memoryd ui`` process.

Every refusal is checked with a request that differs from an accepted one in exactly
the thing refused, and every refused write is checked to have changed nothing on disk.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import run_cli
from tests.index.conftest import write_memory
from tests.sync.world import World, make_conflict, memory
from tests.ui.conftest import UI

TOKEN_MISSING = "memoryd ui: open the link that 'memoryd ui' printed (it carries this run's token)"


@pytest.fixture
def served(isolated_home: Path, tmp_path: Path, ui_factory: Any) -> tuple[UI, Path]:
    assert run_cli("init").returncode == 0
    root = isolated_home / "memory"
    write_memory(root, "facts/a.md", "alpha", id="facts/a", kind="fact", summary="a")
    return ui_factory(tmp_path), root


def token(ui: UI, **more: str) -> dict[str, str]:
    return {"X-Memoryd-Token": ui.token, **more}


def test_the_token_is_required_everywhere(served: tuple[UI, Path]) -> None:
    ui, _root = served
    for path in ("/", "/static/app.js", "/api/overview", "/api/memories"):
        status, _h, body = ui.request(path)
        assert status == 403, path
        assert TOKEN_MISSING in body.decode()
        wrong = ui.request(path, headers={"X-Memoryd-Token": ui.token[:-1] + "x"})
        assert wrong[0] == 403, path
    assert ui.request(f"/?token={ui.token}x")[0] == 403
    status, headers, body = ui.request(f"/?token={ui.token}")
    assert status == 200 and b"<title>memoryd</title>" in body
    assert headers["Content-Security-Policy"].startswith("default-src 'none'; script-src 'self'")
    assert headers["Referrer-Policy"] == "no-referrer"  # the token is in the URL
    assert headers["X-Frame-Options"] == "DENY"
    assert ui.request("/api/overview", headers=token(ui))[0] == 200


def test_tokens_differ_per_run(served: tuple[UI, Path], ui_factory: Any, tmp_path: Path) -> None:
    ui, _root = served
    other: UI = ui_factory(tmp_path)
    assert other.token != ui.token and other.port != ui.port
    assert other.request("/api/overview", headers=token(ui))[0] == 403


def test_a_foreign_host_header_is_refused_with_the_token(served: tuple[UI, Path]) -> None:
    ui, _root = served
    for host in (f"evil.example:{ui.port}", "127.0.0.1", f"127.0.0.1:{ui.port + 1}", ""):
        status, _h, body = ui.request("/api/overview", headers=token(ui, Host=host))
        assert status == 403, host
        assert json.loads(body)["error"] == f"memoryd ui: Host {host!r} is not this server"
    for host in (f"127.0.0.1:{ui.port}", f"localhost:{ui.port}"):
        assert ui.request("/api/overview", headers=token(ui, Host=host))[0] == 200


def test_it_listens_on_127_0_0_1_only(served: tuple[UI, Path]) -> None:
    ui, _root = served
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.2", ui.port), timeout=5).close()
    socket.create_connection(("127.0.0.1", ui.port), timeout=5).close()


def test_files_outside_the_roots_are_never_served(served: tuple[UI, Path], tmp_path: Path) -> None:
    ui, root = served
    secret = tmp_path / "secret.txt"
    secret.write_text("the neighbour's diary")
    (root / "facts/link.md").symlink_to(secret)
    refusals = {
        (str(root), "../../secret.txt"): "'..' leads outside the memory root",
        (str(root), str(secret)): "an absolute path is outside the memory root",
        (str(root), "facts/link.md"): f"it resolves to {secret}, outside the memory root",
        (str(root), ".git/config"): "memoryd never touches files inside .git",
        (str(tmp_path), "secret.txt"): f"{tmp_path} is not a memory root memoryd knows",
    }
    for (where, rel), why in refusals.items():
        from urllib.parse import urlencode

        status, _h, body = ui.request(
            f"/api/memory?{urlencode({'root': where, 'path': rel})}", headers=token(ui)
        )
        assert status == 403, rel
        assert why in json.loads(body)["error"]
        assert b"diary" not in body
    for path in ("/static/../../secret.txt", "/static/index.html", "/static/%2e%2e/server.py"):
        status, _h, body = ui.request(path, headers=token(ui))
        assert status == 404 and b"diary" not in body, path
    assert ui.api("memory", root=str(root), path="facts/a.md")["body"] == "alpha\n"


@pytest.fixture
def conflicted(tmp_path: Path, ui_factory: Any) -> tuple[World, str, UI]:
    base = memory("facts/x", "shared", "one\ntwo\n")
    world, copy = make_conflict(
        tmp_path, "facts/x.md", base, base.replace("two", "A"), base.replace("two", "B")
    )
    env = {**os.environ, "MEMORYD_HOME": str(world.a.paths.home)}
    return world, copy[:-3], ui_factory(tmp_path, env)


def csrf_of(ui: UI) -> str:
    page = ui.request(f"/?token={ui.token}")[2].decode()
    return page.split('name="memoryd-csrf" content="', 1)[1].split('"', 1)[0]


def test_writes_need_post_json_and_the_csrf_token(conflicted: tuple[World, str, UI]) -> None:
    world, conflict_id, ui = conflicted
    csrf = csrf_of(ui)
    assert csrf and csrf != ui.token and csrf not in ui.url
    body = json.dumps({"id": conflict_id, "keep": "local"}).encode()
    good = token(ui, **{"X-CSRF-Token": csrf, "Content-Type": "application/json"})
    refused = [
        ("GET", {**good}, None, 405, "memoryd ui: resolve is a change: POST"),
        ("POST", {k: v for k, v in good.items() if k != "X-CSRF-Token"}, body, 403,
         "memoryd ui: a change needs this page's CSRF token"),
        ("POST", {**good, "X-CSRF-Token": ui.token}, body, 403,
         "memoryd ui: a change needs this page's CSRF token"),
        ("POST", {**good, "Origin": "http://evil.example"}, body, 403,
         "memoryd ui: Origin 'http://evil.example' is not this page"),
        ("POST", {**good, "Content-Type": "text/plain"}, body, 415,
         "memoryd ui: a change is sent as JSON"),
        ("POST", {k: v for k, v in good.items() if k != "X-Memoryd-Token"}, body, 403,
         TOKEN_MISSING),
    ]  # fmt: skip
    copy = world.a.root / f"{conflict_id}.md"
    before = (copy.read_bytes(), world.a.read("facts/x.md"))
    for method, headers, data, status, message in refused:
        got, _h, answer = ui.request("/api/resolve", method=method, headers=headers, body=data)
        assert (got, json.loads(answer)["error"]) == (status, message)
        assert (copy.read_bytes(), world.a.read("facts/x.md")) == before  # nothing changed
    origin = {**good, "Origin": ui.origin}
    got, _h, answer = ui.request("/api/resolve", method="POST", headers=origin, body=body)
    assert got == 200, answer
    assert json.loads(answer)["done"] == f"put desktop's text from {conflict_id}.md at facts/x.md"
    assert not copy.exists() and "\nB\n" in world.a.read("facts/x.md")
    again, _h, answer = ui.request("/api/resolve", method="POST", headers=good, body=body)
    assert again == 409
    assert json.loads(answer)["error"] == f"no sync conflict with id {conflict_id!r}"


def test_a_bad_keep_is_a_clear_error(conflicted: tuple[World, str, UI]) -> None:
    world, conflict_id, ui = conflicted
    headers = token(ui, **{"X-CSRF-Token": csrf_of(ui), "Content-Type": "application/json"})
    body = json.dumps({"id": conflict_id, "keep": "mine"}).encode()
    status, _h, answer = ui.request("/api/resolve", method="POST", headers=headers, body=body)
    assert status == 400
    assert json.loads(answer)["error"] == "keep must be one of local, remote, both, got 'mine'"
    assert (world.a.root / f"{conflict_id}.md").exists()


def test_other_methods_are_not_served(served: tuple[UI, Path]) -> None:
    ui, root = served
    for method in ("PUT", "DELETE", "PATCH"):
        status, _h, _b = ui.request("/api/resolve", method=method, headers=token(ui))
        assert status == 501, method
    assert (root / "facts/a.md").exists()


def test_a_file_name_that_is_not_utf8_is_served_by_its_bytes(served: tuple[UI, Path]) -> None:
    import base64

    ui, root = served
    name = os.fsdecode(b"facts/caf\xe9.md")
    (root / name).write_bytes(b"---\nkind: fact\n---\nlatte\n")
    ref = base64.urlsafe_b64encode(b"facts/caf\xe9.md").decode()
    data = ui.api("memory", root=str(root), ref=ref)
    assert data["body"] == "latte\n" and data["path"] == name  # \udce9 in the JSON, not a crash
    status, _h, body = ui.request(f"/api/memory?root={root}&ref=not-base64!", headers=token(ui))
    assert status == 400
    assert json.loads(body)["error"] == "ref='not-base64!' is not a file reference from this page"
