"""memoryd.sync.identity against real git: what it says when git knows no one."""

from __future__ import annotations

from pathlib import Path

import pytest

from memoryd.sync.identity import identity_error, is_identity_error, missing_identity

_TOLD = "git does not know who commits on this machine: "


@pytest.mark.parametrize(
    ("config", "reason"),
    [
        ("[user]\n\tuseConfigOnly = true\n", "no email was given and auto-detection is disabled"),
        ("[user]\n\tname =\n\temail = a@b.example\n", "empty ident name (for <a@b.example>) not allowed"),
    ],
)
def test_git_var_refusing_is_one_line_with_its_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: str, reason: str
) -> None:
    gitconfig = tmp_path / "gitconfig"
    gitconfig.write_text(config)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    monkeypatch.delenv("EMAIL", raising=False)
    assert missing_identity(tmp_path) == _TOLD + reason


def test_a_name_and_email_from_the_environment_are_an_identity(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gitconfig = tmp_path / "gitconfig"
    gitconfig.write_text("[user]\n\tuseConfigOnly = true\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    assert missing_identity(tmp_path) is not None
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "CI Bot")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "ci@example.invalid")
    assert missing_identity(tmp_path) is None


def test_other_git_failures_are_not_taken_for_a_missing_identity() -> None:
    push = "To origin\n ! [rejected]        main -> main (fetch first)\nerror: failed to push\n"
    assert not is_identity_error(push)
    assert identity_error("Author identity unknown\n") == _TOLD + "no user.name or user.email"
