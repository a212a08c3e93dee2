"""The Claude Code plugin and marketplace in this repository (run for real in tests/e2e).

Here, without node: the manifests say what the e2e tests installed, and the launcher the
hooks and the MCP server go through finds memoryd wherever it was installed, never loops
into itself, and says the fix in one line when there is no memoryd at all.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memoryd import __version__

REPO = Path(__file__).resolve().parents[1]
PLUGIN = REPO / "plugins" / "memoryd"
LAUNCHER = PLUGIN / "scripts" / "memoryd"
MEMORYD = Path(sys.executable).parent / "memoryd"
NOT_FOUND = (
    "memoryd: not found (tried the plugin's memoryd_path, $MEMORYD_BIN, ~/.local/bin/memoryd "
    "and PATH); install it (docs/agents.md) or point the plugin at it with 'claude plugin "
    "configure memoryd@memoryd'\n"
)


def test_the_marketplace_lists_the_plugin_and_the_plugin_is_memoryds_version() -> None:
    market = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())
    (entry,) = market["plugins"]
    assert (market["name"], entry["name"], entry["source"]) == ("memoryd", "memoryd", "./plugins/memoryd")
    manifest = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())
    assert (manifest["name"], manifest["version"]) == ("memoryd", __version__)
    assert list(manifest["userConfig"]) == ["memoryd_path"]


def test_every_hook_and_the_mcp_server_go_through_the_launcher() -> None:
    hooks = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())["hooks"]
    commands = [h["command"] for entries in hooks.values() for e in entries for h in e["hooks"]]
    assert commands == [
        '"${CLAUDE_PLUGIN_ROOT}/scripts/memoryd" context --hook --json',
        '"${CLAUDE_PLUGIN_ROOT}/scripts/memoryd" context --hook --json',
        '"${CLAUDE_PLUGIN_ROOT}/scripts/memoryd" guard --hook',
    ]
    assert hooks["SessionStart"][0]["matcher"] == "startup|resume|clear|compact"
    server = json.loads((PLUGIN / ".mcp.json").read_text())["mcpServers"]["memoryd"]
    assert server == {"command": "${CLAUDE_PLUGIN_ROOT}/scripts/memoryd", "args": ["mcp"]}
    assert os.access(LAUNCHER, os.X_OK)


def test_the_docs_install_the_plugin_as_the_end_to_end_tests_do() -> None:
    install = "claude plugin marketplace add /path/to/memoryd\nclaude plugin install memoryd@memoryd\n"
    for doc in (REPO / "README.md", REPO / "docs" / "agents.md"):
        assert f"```sh\n{install}```" in doc.read_text(encoding="utf-8"), doc


def launch(home: Path, path: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LAUNCHER), "--version"], capture_output=True, text=True, timeout=60, check=False,
        env={"HOME": str(home), "PATH": path, **env},
    )  # fmt: skip


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "h").mkdir()
    return tmp_path / "h"


def test_the_launcher_finds_memoryd_in_local_bin_without_it_on_path(home: Path) -> None:
    (home / ".local" / "bin").mkdir(parents=True)
    (home / ".local" / "bin" / "memoryd").symlink_to(MEMORYD)
    done = launch(home, "/usr/bin:/bin")
    assert (done.returncode, done.stdout) == (0, f"memoryd {__version__}\n"), done.stderr


def test_the_configured_path_comes_first_and_a_wrong_one_is_named(home: Path) -> None:
    done = launch(home, "/usr/bin:/bin", CLAUDE_PLUGIN_OPTION_MEMORYD_PATH=str(MEMORYD))
    assert (done.returncode, done.stdout) == (0, f"memoryd {__version__}\n"), done.stderr
    wrong = launch(home, "/usr/bin:/bin", CLAUDE_PLUGIN_OPTION_MEMORYD_PATH=str(home))
    assert (wrong.returncode, wrong.stderr) == (1, (
        f"memoryd: the plugin's memoryd_path '{home}' is not an executable file; fix it with "
        "'claude plugin configure memoryd@memoryd'\n"
    ))  # fmt: skip


def test_without_memoryd_it_says_the_fix_and_never_runs_itself(home: Path) -> None:
    """The plugin's launcher is named memoryd: found on PATH (linked into a folder there),
    it must be passed over, not exec'd again and again."""
    (home / "bin").mkdir()
    (home / "bin" / "memoryd").symlink_to(LAUNCHER)
    done = launch(home, f"{home / 'bin'}:/usr/bin:/bin")
    assert (done.returncode, done.stdout, done.stderr) == (1, "", NOT_FOUND)
    found = launch(home, f"{MEMORYD.parent}:/usr/bin:/bin")
    assert found.returncode == 0, found.stderr
