"""``memoryd connect`` proven with the real clients: a fresh HOME, one command, and each
client reaches memoryd with memoryd itself off its PATH (the config names it absolutely).

Codex CLI (``@openai/codex``) speaks the Responses API to a fake on loopback, gets memoryd's
block from its SessionStart and UserPromptSubmit hooks and calls ``memory_recall``; Gemini CLI (``@google/gemini-cli``) speaks the Gemini API, gets memoryd's
block from its SessionStart and BeforeAgent hooks and calls ``memory_recall``; Claude Code
and OpenCode get their block and a recall through what connect wrote, not through files the
test copied. What the user has in the config before (a model provider, an auth choice) is
written first, as a user's file would have it, and is still there after connecting.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.clients import Client, client_env
from tests.e2e.conftest import Project
from tests.e2e.fake_models import FakeModelAPI, Turn, call
from tests.helpers import run_cli

pytestmark = pytest.mark.e2e

MEMORYD = Path(sys.executable).parent / "memoryd"
RULE = "- 部署只用 pnpm (`rules/部署只用-pnpm`) [project]"
PITFALL = "## pitfalls/fts5-unicode61-merges-a-chinese-run (project pitfall"
PROMPT = "Why does FTS5 miss short Chinese words?"


def off_path(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """A client's environment whose PATH has node and git but no memoryd."""
    env = client_env(home, extra)
    keep = [d for d in env["PATH"].split(os.pathsep) if d and not (Path(d) / "memoryd").exists()]
    env["PATH"] = os.pathsep.join(keep)
    assert shutil.which("memoryd", path=env["PATH"]) is None
    return env


def connect(project: Project, client: str) -> str:
    done = run_cli("connect", client, cwd=project.repo)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_codex_calls_memory_recall_through_what_connect_wrote(
    node_bin: Path, project: Project
) -> None:
    project.seed()
    config = project.home / ".codex" / "config.toml"
    turns = [call("mcp__memoryd/memory_recall", query="unicode61"), Turn(text="bigrams it is")]
    with FakeModelAPI(turns) as api:
        config.parent.mkdir(parents=True)
        mine = (
            '# my Codex\nmodel = "gpt-5"\nmodel_provider = "fake"\n\n[model_providers.fake]\n'
            f'name = "fake"\nbase_url = "{api.url}/v1"\nenv_key = "FAKE_OPENAI_KEY"\n'
            'wire_api = "responses"\nsupports_websockets = false\n'
        )
        config.write_text(mine)
        connect(project, "codex")
        assert config.read_text().startswith(mine)  # the user's settings, byte for byte
        client = Client(node_bin, off_path(project.home, {"FAKE_OPENAI_KEY": "sk-e2e"}),
                        project.repo)  # fmt: skip
        # codex exec sends its first request at once; memoryd mcp must be up by then (an
        # interactive session starts it while the user types): Codex's grace for it. Codex
        # runs a hook once the user trusted it in its /hooks screen: the flag stands in.
        done = client.run(
            "codex", "exec", "--json", "--skip-git-repo-check", "-s", "read-only",
            "-c", "mcp_optional_startup_grace_ms=15000", "--dangerously-bypass-hook-trust",
            PROMPT, timeout=240,
        )  # fmt: skip
        sent = api.agent_requests()
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:])
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    (recall,) = [e["item"] for e in events if e.get("type") == "item.completed"
                 and e["item"].get("type") == "mcp_tool_call"]  # fmt: skip
    assert (recall["server"], recall["tool"], recall["status"]) == (
        "memoryd", "memory_recall", "completed"
    )
    assert recall["result"]["content"][0]["text"].startswith(PITFALL)
    assert "mcp__memoryd" in [t.get("name") for t in sent[0]["tools"]]
    # SessionStart (rules and outline) and UserPromptSubmit (with the prompt's hits) reached
    # the model as developer messages; the rules come once a session, not again per prompt
    given = [json.dumps(i, ensure_ascii=False) for i in sent[0]["input"] if i.get("role") == "developer"]
    blocks = [text for text in given if "<memory>" in text]
    assert [RULE in text for text in blocks] == [True, False]
    assert "### pitfalls/fts5-unicode61-merges-a-chinese-run (project pitfall)" in blocks[1]
    answered = json.dumps(sent[1]["input"][-1], ensure_ascii=False)
    assert PITFALL in answered  # memoryd's answer went back to the model
    assert [e["item"]["text"] for e in events if e.get("type") == "item.completed"
            and e["item"].get("type") == "agent_message"] == ["bigrams it is"]  # fmt: skip


def gemini_settings(project: Project) -> Path:
    """The user's own Gemini CLI set-up: API-key auth, and this folder trusted (Gemini runs
    no hooks in a folder the user has not trusted)."""
    folder = project.home / ".gemini"
    folder.mkdir(parents=True)
    settings = folder / "settings.json"
    settings.write_text('{\n  // mine\n  "security": {"auth": {"selectedType": "gemini-api-key"}}\n}\n')
    (folder / "trustedFolders.json").write_text(json.dumps({str(project.repo): "TRUST_FOLDER"}))
    return settings


def parts(body: dict[str, Any]) -> str:
    return "\n".join(
        part.get("text", "") for content in body.get("contents", [])
        for part in content.get("parts", [])
    )  # fmt: skip


def test_gemini_gets_the_block_from_its_hooks_and_recalls(
    node_bin: Path, project: Project
) -> None:
    project.seed()
    settings = gemini_settings(project)
    said = connect(project, "gemini")
    assert said.splitlines()[-2].startswith("Gemini CLI is connected")
    assert settings.read_text().startswith('{\n  // mine\n  "security"')
    turns = [call("mcp_memoryd_memory_recall", query="unicode61"), Turn(text="bigrams it is")]
    with FakeModelAPI(turns) as api:
        env = off_path(project.home, {"GEMINI_API_KEY": "e2e-fake", "GOOGLE_GEMINI_BASE_URL": api.url})
        client = Client(node_bin, env, project.repo)
        done = client.run(
            "gemini", "-p", PROMPT, "--output-format", "json", "-m", "gemini-2.5-flash",
            "--yolo", timeout=240,
        )  # fmt: skip
        sent = api.agent_requests()
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:])
    assert json.loads(done.stdout)["response"] == "bigrams it is"
    first = parts(sent[0])
    # SessionStart (rules and outline) and BeforeAgent (with this prompt's hits); Gemini
    # wraps a hook's context in <hook_context> and escapes its angle brackets
    assert first.count("&lt;memory&gt;\n## Iron rules") == 2 and first.count(RULE) == 2
    assert "### pitfalls/fts5-unicode61-merges-a-chinese-run (project pitfall)" in first
    declared = [d["name"] for t in sent[0]["tools"] for d in t.get("functionDeclarations", [])]
    assert "mcp_memoryd_memory_recall" in declared
    answer = json.dumps(sent[1]["contents"][-1], ensure_ascii=False)
    assert "functionResponse" in answer and PITFALL in answer


def test_gemini_s_write_guard_refuses_a_bad_memory_path_and_lets_others_through(
    node_bin: Path, project: Project
) -> None:
    gemini_settings(project)
    connect(project, "gemini")
    layered = project.home / ".local" / "share" / "mimocode" / "memory"
    layered.mkdir(parents=True)  # in Gemini's workspace: it refuses any other path itself
    bad, good = layered / "MEMORY.md", project.repo / "app.py"
    turns = [
        call("write_file", file_path=str(bad), content="# notes\n"),
        call("write_file", file_path=str(good), content="print('hi')\n"),
        Turn(text="done"),
    ]
    with FakeModelAPI(turns) as api:
        env = off_path(project.home, {"GEMINI_API_KEY": "e2e-fake", "GOOGLE_GEMINI_BASE_URL": api.url})
        done = Client(node_bin, env, project.repo).run(
            "gemini", "-p", "write two files", "--output-format", "json", "-m",
            "gemini-2.5-flash", "--yolo", "--include-directories", str(layered), timeout=240,
        )  # fmt: skip
        sent = api.agent_requests()
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:])
    refused = json.dumps(sent[1]["contents"][-1], ensure_ascii=False)
    assert f"{bad} is not a memory path" in refused
    assert not bad.exists()
    assert good.read_text() == "print('hi')\n"


def test_claude_code_connected_by_memoryd_connect_gets_the_block_and_recalls(
    node_bin: Path, project: Project
) -> None:
    project.seed()
    settings = project.home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{\n  "permissions": {"allow": ["Bash(ls:*)"]}\n}\n')
    connect(project, "claude-code")
    turns = [call("mcp__memoryd__memory_recall", query="unicode61"), Turn(text="bigrams it is")]
    with FakeModelAPI(turns) as api:
        env = off_path(project.home, {
            "ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "sk-ant-e2e-fake",
        })  # fmt: skip
        client = Client(node_bin, env, project.repo)
        listed = client.run("claude", "mcp", "list", timeout=120)
        done = client.run("claude", "-p", PROMPT, "--output-format", "json", timeout=240)
        sent = api.agent_requests()
    assert f"memoryd: {MEMORYD} mcp - ✔ Connected" in listed.stdout, listed.stdout
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert json.loads(done.stdout)["result"] == "bigrams it is"
    first = json.dumps(sent[0], ensure_ascii=False)
    assert "<memory>" in first and RULE in first
    results = [
        part for message in sent[1]["messages"] if isinstance(message["content"], list)
        for part in message["content"] if part.get("type") == "tool_result"
    ]  # fmt: skip
    assert PITFALL in json.dumps(results[-1], ensure_ascii=False)
    assert json.loads(settings.read_text())["permissions"]["allow"][0] == "Bash(ls:*)"


def test_opencode_connected_by_memoryd_connect_gets_the_block_and_recalls(
    node_bin: Path, project: Project
) -> None:
    project.seed()
    turns = [call("memoryd_memory_recall", query="unicode61"), Turn(text="all done")]
    with FakeModelAPI(turns) as api:
        folder = project.home / ".config" / "opencode"
        folder.mkdir(parents=True)
        (folder / "opencode.jsonc").write_text(
            "{\n  // my provider, on loopback\n"
            f'  "model": "fake/fake-model",\n  "provider": {{"fake": {{\n'
            '    "npm": "@ai-sdk/openai-compatible", "name": "Fake",\n'
            f'    "options": {{"baseURL": "{api.url}/v1", "apiKey": "sk-e2e-fake"}},\n'
            '    "models": {"fake-model": {"name": "Fake model", "tool_call": True}}\n  }}\n}\n'
            .replace("True", "true")
        )  # fmt: skip
        connect(project, "opencode")
        client = Client(node_bin, off_path(project.home), project.repo)
        done = client.run("opencode", "run", "--", PROMPT, timeout=240)
        sent = api.agent_requests()
    assert done.returncode == 0, (done.stdout, done.stderr[-4000:])
    assert "all done" in done.stdout
    user = json.dumps(sent[0]["messages"], ensure_ascii=False)
    assert "<memory>" in user and RULE in user
    assert PITFALL in json.dumps(sent[1]["messages"][-1], ensure_ascii=False)
