"""The integration files users copy are the ones the docs show and the e2e tests run.

tests/e2e/ runs the real clients with src/memoryd/integrations/; here the docs are held to those
files (and run without node), so what a user reads can never drift from what was tested.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
AGENTS = (REPO / "docs" / "agents.md").read_text(encoding="utf-8")
README = (REPO / "README.md").read_text(encoding="utf-8")
INTEGRATIONS = REPO / "src" / "memoryd" / "integrations"
SETTINGS = INTEGRATIONS / "claude-code" / "settings.json"
# Claude Code's SessionStart sources: each begins a context that holds no memoryd block yet
SESSION_STARTS = ("startup", "resume", "clear", "compact")


def json_blocks(text: str) -> list[object]:
    return [json.loads(b) for b in re.findall(r"```json\n(.*?)```", text, flags=re.S)]


def test_the_documented_opencode_mcp_entry_is_the_shipped_file() -> None:
    shipped = json.loads((INTEGRATIONS / "opencode" / "opencode.json").read_text())
    assert shipped in json_blocks(AGENTS)
    assert shipped in json_blocks(README)


def test_the_documented_claude_mcp_line_is_the_one_the_e2e_tests_run() -> None:
    from tests.e2e.test_claude_code import MCP_ADD

    line = "claude " + " ".join(MCP_ADD)
    assert f"```sh\n{line}\n```" in AGENTS


def test_the_shipped_session_start_hook_matches_every_start_of_a_context() -> None:
    """/clear begins a new context as startup does: without clear in the matcher it began
    without the rules and the outline that every other start of a context gets, and the
    docs listed the same three matchers."""
    (entry,) = json.loads(SETTINGS.read_text(encoding="utf-8"))["hooks"]["SessionStart"]
    assert entry["matcher"].split("|") == list(SESSION_STARTS)
    listed = ", ".join(f"`{source}`" for source in SESSION_STARTS)
    assert f"- `SessionStart` (matchers {listed}):" in AGENTS


def test_docs_and_readme_point_at_every_shipped_file() -> None:
    shipped = sorted(p.relative_to(REPO).as_posix() for p in INTEGRATIONS.rglob("*.*"))
    assert shipped == [
        "src/memoryd/integrations/claude-code/settings.json",
        "src/memoryd/integrations/codex/config.toml",
        "src/memoryd/integrations/cursor/mcp.json",
        "src/memoryd/integrations/gemini/settings.json",
        "src/memoryd/integrations/opencode/memoryd.js",
        "src/memoryd/integrations/opencode/opencode.json",
    ]
    for rel in shipped:
        assert f"(../{rel})" in AGENTS, rel
    for rel in (
        "src/memoryd/integrations/claude-code/settings.json",
        "src/memoryd/integrations/opencode/memoryd.js",
    ):
        assert f"({rel})" in README, rel


def test_the_readmes_quick_start_is_three_commands_that_connect_every_client() -> None:
    """From a clone with python3, git, node and npm: three commands, the second connecting
    Claude Code, OpenCode, Codex and Gemini CLI (each proven in tests/e2e)."""
    block = README.split("## Quick start", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]
    assert commands == [
        "./dev install",
        "memoryd connect claude-code opencode codex gemini",
        "memoryd service install",
    ]
