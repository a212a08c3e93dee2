"""``memoryd scan`` end to end: files, folders, staged blobs, JSON, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

from memoryd.secrets.scanner import fingerprint, preview
from tests.helpers import git, run_cli
from tests.secrets.fake_tokens import github


def test_scan_folder_reports_file_line_rule_and_exits_1(tmp_path: Path) -> None:
    token = github("cli1")
    tmp_path = tmp_path / "root"
    tmp_path.mkdir()
    (tmp_path / "facts").mkdir()
    (tmp_path / "facts" / "ci.md").write_text(f"# CI\n\nGH_TOKEN={token}\n")
    (tmp_path / "clean.md").write_text("nothing here\n")
    done = run_cli("scan", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stdout.splitlines()[0].startswith("facts/ci.md:3:10: github-token ghp_…")
    assert "1 secret(s) found in 2 file(s) scanned" in done.stdout
    assert token not in done.stdout + done.stderr
    assert "memoryd:allow" in done.stderr


def test_scan_clean_exits_0(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("The token expires hourly.\n")
    done = run_cli("scan", "a.md", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "no secrets found in 1 file(s)\n")


def test_scan_json(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(f"token: {github('cli2')}\n")
    done = run_cli("scan", "--json", "a.md", cwd=tmp_path)
    data = json.loads(done.stdout)
    assert done.returncode == 1 and data["files"] == 1
    [f] = data["findings"]
    assert {k: f[k] for k in ("path", "line", "start", "rule")} == {
        "path": "a.md", "line": 1, "start": 8, "rule": "github-token",
    }  # fmt: skip
    assert set(f) == {"path", "rule", "line", "start", "end", "preview", "fingerprint"}


def test_scan_staged_reads_the_index(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / "a.md").write_text(f"token: {github('cli3')}\n")
    git(tmp_path, "add", "a.md")
    (tmp_path / "a.md").write_text("cleaned in the working tree only\n")
    done = run_cli("scan", "--staged", cwd=tmp_path)
    assert done.returncode == 1 and done.stdout.startswith("a.md:1:8: github-token")
    git(tmp_path, "add", "a.md")
    assert run_cli("scan", "--staged", cwd=tmp_path).returncode == 0


def test_scan_missing_path_and_usage(tmp_path: Path) -> None:
    done = run_cli("scan", "nope.md", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr == (
        f"memoryd: error: {tmp_path / 'nope.md'} does not exist\n"
        "  hint: check the path and run again\n"
    )
    assert run_cli("scan", "--staged", "a.md", cwd=tmp_path).returncode == 2


def test_scan_staged_outside_a_repository(tmp_path: Path) -> None:
    done = run_cli("scan", "--staged", cwd=tmp_path)
    assert done.returncode == 1
    assert "is not inside a git work tree" in done.stderr


def test_scan_staged_reads_a_file_of_many_megabytes(tmp_path: Path) -> None:
    """A 5 MB staged log with a token in it passed the hook: 'no secrets found in 0 file(s)'."""
    git(tmp_path, "init", "-q")
    line = "2026-12-01 INFO request ok path=/api/v1/items status=200\n"
    token = github("big2")
    (tmp_path / "app.log").write_text(line * 90_000 + f"GITHUB_TOKEN={token}\n")
    git(tmp_path, "add", "app.log")
    done = run_cli("scan", "--staged", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        f"app.log:90001:14: github-token {preview(token)} (fingerprint {fingerprint(token)})",
        "1 secret(s) found in 1 file(s) scanned",
    ]


def test_scan_finds_a_secret_in_a_file_name(tmp_path: Path) -> None:
    """``memoryd scan`` and the hook read what files hold, never what they are called."""
    token = github("named")
    tmp_path = tmp_path / "root"
    (tmp_path / "facts").mkdir(parents=True)
    (tmp_path / "facts" / f"{token}.md").write_text("see the name\n")
    (tmp_path / "facts" / "fine.md").write_text("nothing here\n")
    done = run_cli("scan", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        f"facts/{token}.md:0:7: github-token {preview(token)} (fingerprint {fingerprint(token)})",
        "1 secret(s) found in 2 file(s) scanned",
    ]
    git(tmp_path, "init", "-q")
    (tmp_path / f"{token}.png").write_bytes(b"\x89PNG\0\0binary")
    git(tmp_path, "add", f"{token}.png", "facts/fine.md")
    done = run_cli("scan", "--staged", cwd=tmp_path)
    assert (done.returncode, done.stdout.splitlines()[0]) == (
        1, f"{token}.png:0:1: github-token {preview(token)} (fingerprint {fingerprint(token)})",
    )  # fmt: skip


def test_scan_staged_reads_an_allowlist_for_its_entries(tmp_path: Path) -> None:
    """The hook skipped the allowlist whole, so a token pasted into it was committed."""
    git(tmp_path, "init", "-q")
    token = github("pasted-into-allowlist")
    (tmp_path / ".memoryd-allowlist").write_text(
        f"{token}\n1d96b723a57c75d22535  # generic-password facts/env.md:8\n"
    )
    git(tmp_path, "add", ".memoryd-allowlist")
    done = run_cli("scan", "--staged", cwd=tmp_path)
    assert (done.returncode, done.stdout.splitlines()) == (1, [
        f".memoryd-allowlist:1:1: github-token {preview(token)} "
        f"(fingerprint {fingerprint(token)})",
        "1 secret(s) found in 1 file(s) scanned",
    ])  # fmt: skip
