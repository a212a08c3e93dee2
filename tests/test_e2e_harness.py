"""The e2e suite's harness where node is not needed: a missing node/npm is a loud skip."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.e2e import clients


def test_without_node_the_install_says_what_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no node, no npm
    with pytest.raises(clients.NodeMissing) as raised:
        clients.install()
    assert str(raised.value) == "node and npm are needed for the end-to-end tests (tests/e2e)"


def test_the_clients_never_inherit_an_agents_markers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "OPENCODE", "AGENT", "AI_AGENT",
                 "ANTHROPIC_API_KEY", "OPENCODE_SESSION_ID"):  # fmt: skip
        monkeypatch.setenv(name, "1")
    env = clients.client_env(tmp_path, {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9"})
    assert not {"CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "OPENCODE", "AGENT", "AI_AGENT",
                "ANTHROPIC_API_KEY", "OPENCODE_SESSION_ID"} & set(env)  # fmt: skip
    assert env["HOME"] == str(tmp_path)
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9"
    assert env["PATH"].split(os.pathsep)[0] == str(Path(sys.executable).parent)
    assert env["DISABLE_TELEMETRY"] == env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
