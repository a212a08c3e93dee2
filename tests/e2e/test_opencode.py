"""memoryd with the real OpenCode CLI (``opencode-ai``) and a fake OpenAI-compatible API.

The plugin is ``src/memoryd/integrations/opencode/memoryd.js`` and the MCP entry
``src/memoryd/integrations/opencode/opencode.json``, as shipped; the test only adds a provider whose
``baseURL`` is the fake on loopback. ``opencode run`` loads the plugin, starts
``memoryd mcp``, and runs the scripted tool calls for real.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.clients import INTEGRATIONS, Client, _end_group, client_env
from tests.e2e.conftest import Project
from tests.e2e.fake_models import FakeModelAPI, Turn, call

pytestmark = pytest.mark.e2e


def opencode(
    node_bin: Path, project: Project, api: FakeModelAPI, model: str = "fake-model"
) -> Client:
    """OpenCode with the shipped plugin and MCP entry, ``model`` served by the fake (a
    ``gpt-`` name gets OpenCode's tools for GPT models: apply_patch instead of write and edit)."""
    config_dir = project.home / ".config" / "opencode"
    (config_dir / "plugins").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(INTEGRATIONS / "opencode" / "memoryd.js", config_dir / "plugins" / "memoryd.js")
    config = json.loads((INTEGRATIONS / "opencode" / "opencode.json").read_text())
    config["model"] = f"fake/{model}"
    config["permission"] = {"external_directory": "allow"}  # the layered tree is outside it
    config["provider"] = {"fake": {
        "npm": "@ai-sdk/openai-compatible", "name": "Fake",
        "options": {"baseURL": f"{api.url}/v1", "apiKey": "sk-e2e-fake"},
        "models": {model: {"name": "Fake model", "tool_call": True}},
    }}  # fmt: skip
    (config_dir / "opencode.json").write_text(json.dumps(config))
    return Client(node_bin, client_env(project.home), project.repo)


def run(client: Client, prompt: str) -> str:
    done = client.run("opencode", "run", "--", prompt, timeout=240)
    assert done.returncode == 0, (done.stdout, done.stderr[-4000:])
    return done.stdout


def messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] != "system"]


def content(message: dict[str, Any]) -> str:
    value = message.get("content") or ""
    if isinstance(value, list):
        return "\n".join(part.get("text", "") for part in value)
    return str(value)



def test_opencode_injects_the_block_and_round_trips_recall_and_remember(
    node_bin: Path, project: Project
) -> None:
    project.seed()
    turns = [
        call("memoryd_memory_recall", query="unicode61"),
        call("memoryd_memory_remember", kind="decision", summary="Deploy with Kamal",
             body="Chosen over k8s."),
        Turn(text="all done"),
    ]  # fmt: skip
    with FakeModelAPI(turns) as api:
        out = run(opencode(node_bin, project, api), "Why does FTS5 miss short Chinese words?")
        sent = api.agent_requests()
    assert "all done" in out
    assert len(sent) == 3
    user = content(messages(sent[0])[0])
    assert "Why does FTS5 miss short Chinese words?" in user
    assert "<memory>" in user and "- 部署只用 pnpm (`rules/部署只用-pnpm`) [project]" in user
    assert "### pitfalls/fts5-unicode61-merges-a-chinese-run (project pitfall)" in user
    recalled = messages(sent[1])[-1]
    assert recalled["role"] == "tool"
    assert content(recalled).startswith("## pitfalls/fts5-unicode61-merges-a-chinese-run")
    saved = messages(sent[2])[-1]
    assert content(saved) == "Saved decisions/deploy-with-kamal (project memory, kind decision)."
    assert "Chosen over k8s." in (project.memory / "decisions" / "deploy-with-kamal.md").read_text()


def test_a_prompt_that_looks_like_an_option_is_a_query(node_bin: Path, project: Project) -> None:
    project.remember("--kind", "fact", "--summary", "the -h flag of deploy.sh skips hooks",
             "--load-when", "deploy")  # fmt: skip
    with FakeModelAPI([Turn(text="ok")]) as api:
        run(opencode(node_bin, project, api), "-h")
        (first,) = api.agent_requests()
    user = content(messages(first)[0])
    assert "<memory>" in user
    assert "usage: memoryd" not in json.dumps(first)


def test_a_prompt_longer_than_an_argument_may_be_still_gets_the_block(
    node_bin: Path, project: Project
) -> None:
    """Linux refuses one argument over 128 KiB (E2BIG): a prompt with a pasted log gets
    memoryd's block all the same (the plugin hands it over on stdin)."""
    project.seed()
    prompt = "Why does FTS5 miss short Chinese words? " + "log line of the failing run\n" * 8000
    assert len(prompt.encode()) > 128 * 1024
    with FakeModelAPI([Turn(text="ok")]) as api:
        client = opencode(node_bin, project, api)
        done = client.run("opencode", "run", timeout=240, input=prompt)  # argv has a cap too
        assert done.returncode == 0, done.stderr[-4000:]
        (first,) = api.agent_requests()
    user = content(messages(first)[0])
    assert user.startswith("Why does FTS5 miss short Chinese words? log line")
    assert "- 部署只用 pnpm (`rules/部署只用-pnpm`) [project]" in user
    assert "### pitfalls/fts5-unicode61-merges-a-chinese-run (project pitfall)" in user


def test_a_prompt_that_quotes_a_block_still_gets_one_and_only_one(
    node_bin: Path, project: Project
) -> None:
    """The plugin took any prompt holding "<memory>" for one it had already given a block:
    a user asking about a pasted block got no memory at all."""
    project.seed()
    prompt = "Why does FTS5 miss short Chinese words? My last <memory> block said nothing."
    turns = [call("memoryd_memory_recall", query="unicode61"), Turn(text="done")]
    with FakeModelAPI(turns) as api:
        run(opencode(node_bin, project, api), prompt)
        sent = api.agent_requests()
    assert len(sent) == 2  # two model calls of one turn: the block once in each
    for body in sent:
        user = content(messages(body)[0])
        assert prompt in user.split("\n\n<memory>\n## Iron rules")[0]  # OpenCode may quote it
        assert user.count("\n<memory>\n") == 1
        assert "### pitfalls/fts5-unicode61-merges-a-chinese-run (project pitfall)" in user


def test_the_plugin_guard_refuses_a_bad_memory_write_and_fails_open(
    node_bin: Path, project: Project
) -> None:
    layered = project.home / ".local" / "share" / "mimocode" / "memory"
    layered.mkdir(parents=True)
    bad, good = layered / "MEMORY.md", project.repo / "src" / "app.py"
    (layered / "global").mkdir()
    (layered / "global" / "notes.txt").write_text("not a memory path, but reading it is fine\n")
    turns = [
        call("read", filePath=str(layered / "global" / "notes.txt")),
        call("write", filePath=str(bad), content="# notes\n"),
        call("write", filePath=str(good), content="print('hi')\n"),
        Turn(text="done"),
    ]
    with FakeModelAPI(turns) as api:
        run(opencode(node_bin, project, api), "write two files")
        sent = api.agent_requests()
    assert "reading it is fine" in content(messages(sent[1])[-1])  # reads are never guarded
    refused = content(messages(sent[2])[-1])
    assert f"{bad} is not a memory path" in refused
    assert not bad.exists()
    assert good.read_text() == "print('hi')\n"
    # memoryd broken: nothing injected, the edit still goes ahead
    (project.home.parent / "memoryd-home" / "config.yaml").write_text("roots: [unclosed\n")
    other = project.repo / "src" / "other.py"
    with FakeModelAPI([call("write", filePath=str(other), content="x\n"), Turn("done")]) as api:
        run(opencode(node_bin, project, api), "edit")
        sent = api.agent_requests()
    assert other.read_text() == "x\n"
    assert "<memory>" not in content(messages(sent[0])[0])


def test_the_plugin_guard_checks_every_file_an_apply_patch_writes(
    node_bin: Path, project: Project
) -> None:
    """OpenCode gives GPT models apply_patch and no write or edit: the guard reads the files
    out of the patch, so the layered tree's rules hold for them too."""
    layered = project.home / ".local" / "share" / "mimocode" / "memory"
    layered.mkdir(parents=True)
    bad, good = layered / "MEMORY.md", project.repo / "src" / "app.py"

    def patch(*lines: str) -> Turn:
        return call("apply_patch", patchText="\n".join(["*** Begin Patch", *lines, "*** End Patch"]))

    turns = [
        patch("*** Add File: src/app.py", "+print('hi')", f"*** Add File: {bad}", "+# notes"),
        patch("*** Add File: src/app.py", "+print('hi')"),
        Turn(text="done"),
    ]
    with FakeModelAPI(turns) as api:
        run(opencode(node_bin, project, api, model="gpt-5"), "write two files")
        sent = api.agent_requests()
    assert "apply_patch" in {t["function"]["name"] for t in sent[0]["tools"]}
    assert f"{bad} is not a memory path" in content(messages(sent[1])[-1])
    assert not bad.exists()
    assert good.read_text() == "print('hi')\n"


@contextlib.contextmanager
def served(client: Client) -> Iterator[str]:
    """``opencode serve`` (the long-lived process a TUI is) on a free loopback port: its URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [str(client.bin_dir / "opencode"), "serve", "--port", str(port)], cwd=client.cwd,
        env={**client.env, "PWD": str(client.cwd)}, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            with socket.socket() as knock:
                if knock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert time.monotonic() < deadline and server.poll() is None, "opencode serve"
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        _end_group(server.pid)
        server.wait(timeout=10)


def test_the_same_prompt_later_gets_the_memory_as_it_is_then(
    node_bin: Path, project: Project
) -> None:
    """One OpenCode process serves many prompts: a second "continue" after a new iron rule
    carries that rule (the block is made per message, not kept per prompt text)."""
    project.remember("--kind", "rule", "--summary", "Use pnpm")
    with FakeModelAPI([Turn(text="one"), Turn(text="two")]) as api:
        client = opencode(node_bin, project, api)
        with served(client) as url:
            attach = ("opencode", "run", "--attach", url, "--dir", str(project.repo), "--")
            assert client.run(*attach, "continue", timeout=240).returncode == 0
            project.remember("--kind", "rule", "--summary", "Never deploy on Fridays")
            assert client.run(*attach, "continue", timeout=240).returncode == 0
        first, second = api.agent_requests()
    before, after = (content(messages(body)[0]) for body in (first, second))
    assert "- Use pnpm (`rules/use-pnpm`) [project]" in before
    assert "Never deploy on Fridays" not in before
    assert after.startswith("continue\n\n<memory>\n")
    assert "- Never deploy on Fridays (`rules/never-deploy-on-fridays`) [project]" in after


def test_a_rule_remembered_through_the_bash_tool_is_only_a_proposal(
    node_bin: Path, project: Project
) -> None:
    """OpenCode sets OPENCODE=1 for the commands its bash tool runs; memoryd sees it."""
    turns = [
        call("bash", command="memoryd remember --kind rule --summary 'Never push on Fridays'",
             description="save a rule"),
        call("bash", command="memoryd accept proposals/never-push-on-fridays",
             description="accept it"),
        Turn(text="done"),
    ]  # fmt: skip
    with FakeModelAPI(turns) as api:
        run(opencode(node_bin, project, api), "make it a rule")
        sent = api.agent_requests()
    assert "saved as a rule-proposal" in content(messages(sent[1])[-1])
    refused = content(messages(sent[2])[-1])
    assert "this runs under an agent (OPENCODE=1 (OpenCode))" in refused
    assert (project.memory / "proposals" / "never-push-on-fridays.md").exists()
    assert not (project.memory / "rules" / "never-push-on-fridays.md").exists()


def test_numbers_and_booleans_a_model_sends_as_strings_or_null_are_read_as_meant(
    node_bin: Path, project: Project
) -> None:
    """OpenCode hands a tool call's arguments on as the model wrote them (Claude Code turns
    "3" into 3 first): limit "3" was refused as 'invalid integer value: '3'', pinned "true"
    and limit null too."""
    project.seed()
    turns = [
        call("memoryd_memory_recall", query="unicode61", limit="1", kind=None),
        call("memoryd_memory_remember", kind="fact", summary="Staging lives on the bastion",
             pinned="true", scope=None, force="false"),
        call("memoryd_memory_remember", kind="fact", summary="Prod lives elsewhere", pinned="yes"),
        Turn(text="ok"),
    ]  # fmt: skip
    with FakeModelAPI(turns) as api:
        run(opencode(node_bin, project, api), "recall and remember")
        sent = api.agent_requests()
    recalled, saved, refused = (content(messages(sent[i])[-1]) for i in (1, 2, 3))
    assert recalled.startswith("## pitfalls/fts5-unicode61-merges-a-chinese-run (project pitfall")
    assert saved == "Saved facts/staging-lives-on-the-bastion (project memory, kind fact)."
    written = (project.memory / "facts" / "staging-lives-on-the-bastion.md").read_text()
    assert "pinned: true" in written
    assert refused.startswith(
        "memory_remember: argument pinned: invalid boolean (true or false) value: 'yes'"
    )


def test_a_worktree_removed_mid_session_never_blocks_a_write_and_recall_still_serves_it(
    node_bin: Path, project: Project, tmp_path: Path
) -> None:
    """The session works in a linked worktree; its bash tool removes the worktree. The
    plugin's guard runs memoryd in the session's folder, which is gone: the next write must
    still go ahead (memoryd failing never blocks OpenCode), and the MCP server started in
    the worktree still serves the project's memories."""

    project.seed()
    worktree = project.linked_worktree()
    elsewhere = tmp_path / "notes" / "todo.txt"
    elsewhere.parent.mkdir()
    turns = [
        call("bash", command=f"git -C {project.repo} worktree remove --force {worktree}",
             description="remove the worktree"),
        call("write", filePath=str(elsewhere), content="ship it\n"),
        call("memoryd_memory_recall", query="unicode61"),
        Turn(text="done"),
    ]  # fmt: skip
    with FakeModelAPI(turns) as api:
        client = opencode(node_bin, project, api)
        run(Client(client.bin_dir, client.env, worktree), "clean up, note it, look it up")
        sent = api.agent_requests()
    assert not worktree.exists()
    assert elsewhere.read_text() == "ship it\n"  # the guard threw in the removed folder
    recalled = content(messages(sent[3])[-1])
    assert recalled.startswith("## pitfalls/fts5-unicode61-merges-a-chinese-run (project pitfall")


def test_a_memoryd_that_cannot_run_is_said_in_opencodes_log_not_the_terminal(
    node_bin: Path, project: Project
) -> None:
    """The plugin said its failures with console.error, which the TUI paints over the input
    box: they go to OpenCode's log (client.app.log; --print-logs shows it on stderr)."""
    with FakeModelAPI([Turn(text="ok")]) as api:
        client = opencode(node_bin, project, api)
        client.env["MEMORYD_BIN"] = "/nonexistent/memoryd"
        done = client.run("opencode", "run", "--print-logs", "--", "hello", timeout=240)
        (first,) = api.agent_requests()
    assert done.returncode == 0, done.stderr[-4000:]
    assert "<memory>" not in json.dumps(first)
    said = "memoryd context could not run /nonexistent/memoryd"
    assert said not in done.stdout
    logged = [line for line in done.stderr.splitlines() if said in line]
    assert len(logged) == 1 and "level=ERROR" in logged[0], done.stderr[-4000:]
