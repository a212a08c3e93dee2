"""The scanner's contract: findings locate a secret without ever carrying it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memoryd.secrets.scanner import (
    ALLOWLIST_FILE,
    SecretFinding,
    allowlist_line,
    fingerprint,
    load_allowlist,
    preview,
    scan,
    scan_path,
)
from tests.secrets.fake_tokens import github, pem, rand


def test_finding_has_rule_line_columns_preview_and_fingerprint() -> None:
    token = github("api1")
    text = f"---\nid: x\n---\nfirst line\n  token here: {token} end\n"
    [f] = scan(text)
    assert (f.rule, f.line) == ("github-token", 5)
    assert text.splitlines()[4][f.start - 1 : f.end - 1] == token
    assert f.preview == f"{token[:4]}…{token[-4:]}"
    assert f.fingerprint == fingerprint(token) and len(f.fingerprint) == 20


def test_no_part_of_the_output_contains_the_secret() -> None:
    token = github("api2")
    password = "Zq8!" + rand("pw", 12)
    findings = scan(f"GH={token}\nDB_PASSWORD={password}\n")
    dumped = json.dumps([f.to_dict() for f in findings])
    assert len(findings) == 2
    assert token not in dumped and password not in dumped
    assert token[4:-4] not in dumped and password[2:-2] not in dumped


def test_preview_reveals_little_of_short_secrets() -> None:
    assert preview("abc") == "****"
    assert preview("hunter22") == "h…2"
    assert preview("x" * 40) == "xxxx…xxxx"


def test_fingerprint_is_stable_and_value_specific() -> None:
    assert fingerprint("one-secret") == fingerprint("one-secret")
    assert fingerprint("one-secret") != fingerprint("two-secret")


def test_inline_pragma_allows_the_line_only() -> None:
    token = github("api3")
    other = github("api4")
    text = f"example: {token}  <!-- memoryd:allow -->\nreal: {other}\n"
    assert [f.line for f in scan(text)] == [2]
    assert len(scan(text, pragmas=False)) == 2


def test_allowlist_by_fingerprint(tmp_path: Path) -> None:
    token = github("api5")
    note = tmp_path / "facts" / "ci.md"
    note.parent.mkdir()
    note.write_text(f"token: {token}\n")
    [f] = scan_path(note, tmp_path)
    (tmp_path / ALLOWLIST_FILE).write_text(
        "# deliberate examples\n" + allowlist_line(f, "facts/ci.md:1") + "\n"
    )
    assert load_allowlist(tmp_path) == {f.fingerprint}
    assert token not in (tmp_path / ALLOWLIST_FILE).read_text()
    assert scan_path(note, tmp_path) == []
    assert scan_path(note) == []  # the allowlist is found by walking up


def test_allowlist_absent_is_empty(tmp_path: Path) -> None:
    assert load_allowlist(tmp_path) == frozenset()


def test_scan_path_skips_binary_files(tmp_path: Path) -> None:
    blob = tmp_path / "image.png"
    blob.write_bytes(b"\x89PNG\0\0" + github("bin").encode())
    assert scan_path(blob) == []


def test_a_utf16_file_with_its_byte_order_mark_is_text(tmp_path: Path) -> None:
    """Windows PowerShell's ``"GITHUB_TOKEN=..." > .env`` writes UTF-16 with a BOM; its NUL
    bytes read as binary, so the file was never scanned and sync pushed it."""
    token = github("utf16")
    for codec in ("utf-16-le", "utf-16-be"):
        env = tmp_path / f"{codec}.env"
        bom = b"\xff\xfe" if codec.endswith("le") else b"\xfe\xff"
        env.write_bytes(bom + f"# CI\r\nGITHUB_TOKEN={token}\r\n".encode(codec))
        [f] = scan_path(env)
        assert (f.rule, f.line, f.start) == ("github-token", 2, 14)


def test_findings_are_in_text_order_and_do_not_overlap() -> None:
    token = github("api6")
    text = f"url: https://bot:{token}@github.com/acme/repo.git\npassword: Xy7#{rand('o', 10)}\n"
    findings = scan(text)
    assert [f.rule for f in findings] == ["github-token", "generic-password"]
    assert isinstance(findings[0], SecretFinding)


_LOG_LINE = "2026-12-01 INFO request ok path=/api/v1/items status=200\n"


def test_a_file_of_many_megabytes_is_scanned_to_its_end(tmp_path: Path) -> None:
    """A 5 MB log with a token on its last line was skipped whole (over 4 MiB) and passed."""
    token = github("big1")
    lines = 90_000
    big = tmp_path / "app.log"
    big.write_text(_LOG_LINE * lines + f"DEBUG env GITHUB_TOKEN={token}\n")
    assert big.stat().st_size > 5_000_000
    [f] = scan_path(big)
    assert (f.rule, f.line, f.start) == ("github-token", lines + 1, 24)


def test_windows_of_a_long_text_miss_no_secret_at_their_seams(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A token at every offset across a window's end, on one endless line (no line boundary
    to cut at) and among short lines, is found once, where it is; so is a PEM block."""
    from memoryd.secrets import scanner

    monkeypatch.setattr(scanner, "WINDOW_CHARS", 4096)
    monkeypatch.setattr(scanner, "OVERLAP_CHARS", 512)
    token = github("seam")
    assert list(scanner.windows("z" * 9000)) == [(0, 4608), (4096, 8704), (8192, 9000)]
    for shift in range(4096 + 512 - 60, 4096 + 512 + 20):
        one_line = "x" * shift + f" {token} " + "y" * 5000
        [f] = scan(one_line)
        assert (f.line, f.start) == (1, shift + 2)
        short_lines = "ab\n" * (shift // 3) + "c" * (shift % 3) + f" {token}\n" + "d\n" * 3000
        [f] = scan(short_lines)
        assert (f.line, f.start) == (shift // 3 + 1, shift % 3 + 2)
    pem_at_seam = "a\n" * 2040 + pem() + "\n" + "b\n" * 3000
    assert [(f.rule, f.line) for f in scan(pem_at_seam)] == [("private-key", 2041)]


def test_an_allowlist_is_read_for_its_entries_not_its_comments(tmp_path: Path) -> None:
    """The allowlist as docs/secrets.md writes it ('<fingerprint>  # generic-password
    facts/env.md:8') was itself quarantined by sync: its comment read as a password."""
    token = github("allowlist-entry")
    allowlist = tmp_path / ALLOWLIST_FILE
    allowlist.write_text(
        "# .memoryd-allowlist\n"
        "1d96b723a57c75d22535  # generic-password facts/env.md:8\n"
        "5316c5ed2c016b0fa68a  # github-token facts/ci.md:3 (the token is ghp_ + 36)\n"
    )
    assert scan_path(allowlist) == []
    allowlist.write_text(f"{token}  # the value itself, not its fingerprint\n")
    assert [(f.rule, f.line, f.start) for f in scan_path(allowlist)] == [("github-token", 1, 1)]
