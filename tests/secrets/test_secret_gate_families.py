"""One scanner everywhere: the new families stop the sync commit, the hook and ``scan``.

Each path reports the file, the line, the rule and a redacted preview, never the value.
"""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path

import pytest

from memoryd.secrets import hook
from memoryd.secrets.scanner import preview
from tests.helpers import git, run_cli
from tests.secrets.fake_tokens import HEX, rand
from tests.sync.world import World, make_world, memory

PW = rand("gate-pw", 12) + "!7"
KEY = rand("gate-django", 50, "abcdefghijklmnopqrstuvwxyz0123456789!@#%^&*-_=+")
TOKEN = rand("gate-twilio", 32, HEX)
SID = "AC" + rand("gate-sid", 32, HEX)
AUTH = base64.b64encode(f"ci-bot:{PW}".encode()).decode()

NOTES = {
    "facts/db.md": memory("facts/db", "reporting db", f"jdbc:sqlserver://sql01;user=etl;password={PW};\n"),
    "facts/cli.md": memory("facts/cli", "dump", f"PGPASSWORD={PW} pg_dump -h pg1 app\n"),
    "facts/docker.md": memory("facts/docker", "registry", f'{{"auths": {{"r.io": {{"auth": "{AUTH}"}}}}}}\n'),
    "facts/django.md": memory("facts/django", "settings", f"SECRET_KEY = '{KEY}'\n"),
    "facts/sms.md": memory("facts/sms", "sms", f"Twilio: {SID} / {TOKEN}\n"),
    "facts/nas.md": memory("facts/nas", "nas", f"NAS 的管理员口令：{PW}\n"),
}  # fmt: skip
EXPECTED = [
    ("facts/cli.md", 6, "cli-password", preview(PW)),
    ("facts/db.md", 6, "connection-string-password", preview(PW)),
    ("facts/django.md", 6, "signing-secret", preview(KEY)),
    ("facts/docker.md", 6, "config-credential", preview(AUTH)),
    ("facts/nas.md", 6, "generic-password", preview(PW)),
    ("facts/sms.md", 6, "twilio-auth-token", preview(TOKEN)),
]
VALUES = (PW, KEY, TOKEN, AUTH)


@pytest.fixture
def world(tmp_path: Path) -> World:
    return make_world(tmp_path)


def test_sync_quarantines_every_family_and_commits_the_rest(world: World) -> None:
    for path, text in NOTES.items():
        world.a.write(path, text)
    world.a.write("facts/fine.md", memory("facts/fine", "fine", "the db password is in vault\n"))
    outcome = world.a.sync()
    assert outcome.pushed
    got = sorted((q.path, q.line, q.rule, q.preview) for q in outcome.quarantined)
    assert got == EXPECTED
    report = json.dumps(outcome.to_json())
    assert not any(v in report for v in VALUES)
    assert "facts/fine.md" in world.a.files()
    assert not set(NOTES) & set(world.a.files())


def test_scan_cli_reports_every_family_with_line_rule_and_preview(tmp_path: Path) -> None:
    for path, text in NOTES.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text, encoding="utf-8")
    done = run_cli("scan", "--json", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    data = json.loads(done.stdout)
    got = sorted((f["path"], f["line"], f["rule"], f["preview"]) for f in data["findings"])
    assert got == EXPECTED
    assert not any(v in done.stdout + done.stderr for v in VALUES)
    assert "memoryd:allow" in done.stderr  # the fix is named


def test_hook_blocks_a_staged_connection_string(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    hook.install(repo)
    (repo / "db.md").write_text(NOTES["facts/db.md"], encoding="utf-8")
    git(repo, "add", "db.md")
    done = subprocess.run(
        ["git", "commit", "-q", "-m", "db"], cwd=repo, capture_output=True, text=True, check=False
    )
    assert done.returncode != 0
    assert "db.md:6:42:" in done.stdout + done.stderr
    assert f"connection-string-password {preview(PW)}" in done.stdout + done.stderr
    assert PW not in done.stdout + done.stderr
