"""memoryd as a Claude Code plugin, installed from this repository's marketplace.

``claude plugin marketplace add <this checkout>`` then ``claude plugin install
memoryd@memoryd``, in a fresh HOME, with memoryd NOT on Claude Code's PATH (only where
pipx, uv tool and ./dev run put it: ~/.local/bin): the plugin's hooks and MCP server find
it through the plugin's launcher. ``claude -p`` runs the hooks, the slash command and the
tool call for real against the fake Messages API.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.e2e.clients import REPO, Client, client_env
from tests.e2e.conftest import Project
from tests.e2e.fake_models import FakeModelAPI, Turn, call
from tests.e2e.test_claude_code import (
    ask,
    hook_runs,
    injected,
    result_text,
    texts,
    three_prompt_session,
    tool_results,
    transcript,
)

pytestmark = pytest.mark.e2e

RECALL = "mcp__plugin_memoryd_memoryd__memory_recall"
RULE = "- 部署只用 pnpm (`rules/部署只用-pnpm`) [project]"
PITFALL = "### pitfalls/fts5-unicode61-merges-a-chinese-run (project pitfall)"


def off_path_env(project: Project, api: FakeModelAPI) -> dict[str, str]:
    """The client's environment with memoryd nowhere on PATH."""
    env = client_env(project.home, {
        "ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "sk-ant-e2e-fake",
    })  # fmt: skip
    venv = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if p != venv)
    env.pop("MEMORYD_BIN", None)
    return env


def installed(node_bin: Path, project: Project, api: FakeModelAPI) -> Client:
    """The plugin installed from this checkout's marketplace; memoryd in ~/.local/bin only."""
    local_bin = project.home / ".local" / "bin"
    local_bin.mkdir(parents=True, exist_ok=True)
    (local_bin / "memoryd").symlink_to(Path(sys.executable).parent / "memoryd")
    client = Client(node_bin, off_path_env(project, api), project.repo)
    for args in (("marketplace", "add", str(REPO)), ("install", "memoryd@memoryd")):
        done = client.run("claude", "plugin", *args, timeout=120)
        assert done.returncode == 0, (done.stdout, done.stderr)
    return client


def test_the_plugin_injects_the_block_and_its_slash_command_recalls_over_mcp(
    node_bin: Path, project: Project
) -> None:
    project.seed()
    turns = [call(RECALL, query="unicode61"), Turn(text="bigrams it is")]
    with FakeModelAPI(turns) as api:
        client = installed(node_bin, project, api)
        listed = client.run("claude", "mcp", "list", timeout=120)
        result = ask(client, "/memoryd:memory-recall why FTS5 misses short Chinese words",
                     "--allowedTools", RECALL)  # fmt: skip
        sent = api.agent_requests()
    assert "plugin:memoryd:memoryd: " in listed.stdout and "✔ Connected" in listed.stdout
    assert result["result"] == "bigrams it is" and len(sent) == 2
    first = texts(sent[0])
    # the slash command's text, and memoryd's block from both hooks, reached the model
    assert "Search memoryd's long-term memory for: why FTS5 misses short Chinese words" in first
    assert first.count(RULE) == 1 and PITFALL in first
    start = injected(project, result["session_id"], "SessionStart")
    assert RULE in start and "## Memory outline" in start
    (started,) = hook_runs(project, result["session_id"], "SessionStart")
    assert (started["hookName"], started["exitCode"]) == ("SessionStart:startup", 0)
    # the tool call reached memoryd (the plugin's MCP server) and its answer came back
    (answer,) = tool_results(sent[1])
    text = result_text(answer)
    assert text.startswith("## pitfalls/fts5-unicode61-merges-a-chinese-run (project pitfall")


def test_three_prompts_through_the_plugin_carry_one_rules_block(
    node_bin: Path, project: Project
) -> None:
    project.seed()
    with FakeModelAPI([Turn(text="one"), Turn(text="two"), Turn(text="three")]) as api:
        _, sent = three_prompt_session(installed(node_bin, project, api), api)
    assert [texts(body).count(RULE) for body in sent] == [1, 1, 1]
    assert [texts(body).count(PITFALL) for body in sent] == [1, 1, 1]


def test_without_memoryd_anywhere_the_hooks_say_the_fix_in_one_line(
    node_bin: Path, project: Project
) -> None:
    with FakeModelAPI([Turn(text="ok")]) as api:
        client = installed(node_bin, project, api)
        (project.home / ".local" / "bin" / "memoryd").unlink()
        session = ask(client, "hello")["session_id"]
        sent = api.agent_requests()
    assert "<memory>" not in texts(sent[0])
    records = [
        e["attachment"] for e in transcript(project, session)
        if isinstance(e.get("attachment"), dict)
        and e["attachment"].get("hookEvent") == "SessionStart"
    ]  # fmt: skip
    said = " ".join(str(r.get("stderr") or r.get("content") or "") for r in records)
    assert "memoryd: not found (tried the plugin's memoryd_path, $MEMORYD_BIN, " in said
