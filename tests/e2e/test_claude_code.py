"""memoryd with the real Claude Code CLI (``@anthropic-ai/claude-code``) and a fake Messages API.

The settings are ``src/memoryd/integrations/claude-code/settings.json`` as shipped; the MCP server is
added with the documented ``claude mcp add`` line. ``claude -p`` runs the hooks for real,
calls the fake model on loopback, runs the tool calls it scripts (memoryd over MCP, the
Write tool through the guard hook, a Bash command), and sends each result back: the
recorded requests are exactly what a real model would have been sent.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.clients import INTEGRATIONS, Client, client_env
from tests.e2e.conftest import Project
from tests.e2e.fake_models import FakeModelAPI, Turn, call
from tests.helpers import git, run_cli

pytestmark = pytest.mark.e2e

MCP_ADD = ("mcp", "add", "--scope", "user", "memoryd", "--", "memoryd", "mcp")


def claude(node_bin: Path, project: Project, api: FakeModelAPI) -> Client:
    """Claude Code with the shipped settings and memoryd's MCP server added for the user."""
    settings = project.home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(INTEGRATIONS / "claude-code" / "settings.json", settings)
    env = client_env(project.home, {
        "ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "sk-ant-e2e-fake",
    })  # fmt: skip
    client = Client(node_bin, env, project.repo)
    added = client.run("claude", *MCP_ADD)
    assert added.returncode == 0, added.stderr
    return client


def ask(client: Client, prompt: str, *flags: str) -> dict[str, Any]:
    done = client.run("claude", "-p", prompt, "--output-format", "json", *flags, timeout=240)
    assert done.returncode == 0, (done.stdout, done.stderr)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def texts(body: dict[str, Any]) -> str:
    """Everything a request carried to the model, as one string."""
    return json.dumps(body, ensure_ascii=False)


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        part for message in body["messages"] if isinstance(message["content"], list)
        for part in message["content"] if part.get("type") == "tool_result"
    ]  # fmt: skip


def result_text(part: dict[str, Any]) -> str:
    """A tool result's text as the model read it: Claude Code sends the model a tool's
    structuredContent (as JSON) when it has one, and memoryd's holds the text first."""
    content = part["content"]
    text = content if isinstance(content, str) else "\n".join(c.get("text", "") for c in content)
    if text.startswith('{"text":'):
        structured: dict[str, Any] = json.loads(text)
        return str(structured["text"])
    return text


def transcript(project: Project, session: str) -> list[dict[str, Any]]:
    found = list((project.home / ".claude" / "projects").glob(f"*/{session}.jsonl"))
    assert len(found) == 1, found
    return [json.loads(line) for line in found[0].read_text().splitlines() if line.strip()]


def hook_runs(
    project: Project, session: str, event: str, kind: str = "hook_success"
) -> list[dict[str, Any]]:
    """The transcript's records of one hook event: runs (exit code, stdout, durationMs) by
    default, ``hook_additional_context`` for what a JSON answer added to the context."""
    return [
        e["attachment"] for e in transcript(project, session)
        if isinstance(e.get("attachment"), dict) and e["attachment"].get("hookEvent") == event
        and e["attachment"].get("type") == kind
    ]  # fmt: skip


def injected(project: Project, session: str, event: str) -> str:
    runs = hook_runs(project, session, event, "hook_additional_context")
    return "\n".join(text for run in runs for text in run["content"])



def test_claude_code_lists_memoryd_as_connected(node_bin: Path, project: Project) -> None:
    with FakeModelAPI([]) as api:
        client = claude(node_bin, project, api)
        listed = client.run("claude", "mcp", "list", timeout=120)
    assert listed.returncode == 0, listed.stderr
    assert "memoryd: memoryd mcp - ✔ Connected" in listed.stdout


def test_a_prompt_gets_the_block_and_a_recall_round_trips(
    node_bin: Path, project: Project
) -> None:
    project.seed()
    turns = [call("mcp__memoryd__memory_recall", query="unicode61"), Turn(text="bigrams it is")]
    with FakeModelAPI(turns) as api:
        client = claude(node_bin, project, api)
        result = ask(client, "Why does FTS5 miss short Chinese words?")
        sent = api.agent_requests()
    assert result["result"] == "bigrams it is"
    assert api.turns_served == 2 and len(sent) == 2
    first = texts(sent[0])
    # UserPromptSubmit: memoryd's block reached the model with the prompt
    assert "<memory>" in first and "- 部署只用 pnpm (`rules/部署只用-pnpm`) [project]" in first
    assert "### pitfalls/fts5-unicode61-merges-a-chinese-run (project pitfall)" in first
    # SessionStart (startup): the rules and the outline, before any prompt
    start = injected(project, result["session_id"], "SessionStart")
    assert "- 部署只用 pnpm (`rules/部署只用-pnpm`) [project]" in start and "## Memory outline" in start
    assert "## Relevant memories" not in start
    (started,) = hook_runs(project, result["session_id"], "SessionStart")
    assert (started["hookName"], started["exitCode"]) == ("SessionStart:startup", 0)
    # the tool call went to memoryd over MCP and its answer came back in the next request
    (answer,) = tool_results(sent[1])
    text = result_text(answer)
    assert text.startswith("## pitfalls/fts5-unicode61-merges-a-chinese-run (project pitfall")
    assert "unicode61 keeps 部署脚本 as one token; split bigrams" in text
    assert "### pitfalls/fts5" in injected(project, result["session_id"], "UserPromptSubmit")


def test_a_scripted_remember_lands_on_disk_and_in_the_next_request(
    node_bin: Path, project: Project
) -> None:
    turns = [
        call("mcp__memoryd__memory_remember", kind="decision", summary="Deploy with Kamal",
             body="Chosen over k8s: one VPS is enough.", load_when=["deploy", "部署"]),
        Turn(text="noted"),
    ]  # fmt: skip
    with FakeModelAPI(turns) as api:
        client = claude(node_bin, project, api)
        ask(client, "Remember that we deploy with Kamal",
            "--allowedTools", "mcp__memoryd__memory_remember")  # fmt: skip
        sent = api.agent_requests()
    (answer,) = tool_results(sent[1])
    assert result_text(answer) == "Saved decisions/deploy-with-kamal (project memory, kind decision)."
    saved = (project.memory / "decisions" / "deploy-with-kamal.md").read_text()
    assert "summary: Deploy with Kamal" in saved and "Chosen over k8s" in saved


def test_inspect_of_a_large_tree_reaches_the_model_with_its_problems(
    node_bin: Path, project: Project
) -> None:
    """Claude Code saves a long tool answer to a file and shows the model its first 2 KB:
    the listing of 3000 memories came first and the problems were never seen."""
    facts = project.memory / "facts"
    facts.mkdir(exist_ok=True)
    for i in range(3000):
        (facts / f"fact-{i}.md").write_text(
            f"---\nkind: fact\nsummary: fact number {i} about deploying service {i}\n---\nx\n"
        )
    (facts / "broken.md").write_text("---\nid: facts/other\nkind: fact\nsummary: b\n---\nx\n")
    turns = [call("mcp__memoryd__memory_inspect"), Turn(text="done")]
    with FakeModelAPI(turns) as api:
        client = claude(node_bin, project, api)
        ask(client, "check the memory", "--allowedTools", "mcp__memoryd__memory_inspect")
        sent = api.agent_requests()
    (answer,) = tool_results(sent[1])
    text = result_text(answer)
    assert "persisted-output" not in text
    assert text.startswith("3001 memories, ")
    assert "facts/broken.md: id 'facts/other' does not match its path" in text
    assert "more lines of the listing left out (size limit): 'memoryd inspect' lists them all" in text


def test_a_recall_of_long_memories_reaches_the_model_whole_not_as_a_preview(
    node_bin: Path, project: Project
) -> None:
    """Claude Code saves a tool answer over about 50,000 characters to a file and shows the
    model its first 2 KB: five 14 KB runbooks reached it as the start of the first one."""
    facts = project.memory / "facts"
    facts.mkdir(exist_ok=True)
    for i in range(5):
        steps = "".join(f"step {j} of runbook {i}: restart the zebra worker\n" for j in range(300))
        (facts / f"runbook-{i}.md").write_text(
            f"---\nkind: fact\nsummary: runbook {i} for the zebra worker\n---\n{steps}"
        )
    turns = [call("mcp__memoryd__memory_recall", query="zebra", limit=5), Turn(text="ok")]
    with FakeModelAPI(turns) as api:
        ask(claude(node_bin, project, api), "how do I restart the zebra worker?")
        sent = api.agent_requests()
    (answer,) = tool_results(sent[1])
    text = result_text(answer)
    assert "persisted-output" not in text
    assert text.startswith("## facts/runbook-")
    assert "[… cut at the 20000-character answer limit: the whole memory is " in text
    assert "[… 3 more matching memories left out at the 20000-character answer limit: " in text


def test_the_guard_hook_blocks_a_bad_memory_write_and_lets_source_edits_through(
    node_bin: Path, project: Project, tmp_path: Path
) -> None:
    layered = project.home / ".local" / "share" / "mimocode" / "memory"
    layered.mkdir(parents=True)
    bad, good = layered / "MEMORY.md", project.repo / "src" / "app.py"
    turns = [
        call("Write", file_path=str(bad), content="# notes\n"),
        call("Write", file_path=str(good), content="print('hi')\n"),
        Turn(text="done"),
    ]
    with FakeModelAPI(turns) as api:
        client = claude(node_bin, project, api)
        result = ask(client, "write two files", "--allowedTools", "Write")
        sent = api.agent_requests()
    refused = result_text(tool_results(sent[1])[-1])
    assert f"{bad} is not a memory path" in refused
    assert not bad.exists()
    assert good.read_text() == "print('hi')\n"
    assert result["result"] == "done"


def test_a_broken_config_blocks_neither_the_prompt_nor_an_edit(
    node_bin: Path, project: Project
) -> None:
    (project.home.parent / "memoryd-home" / "config.yaml").write_text("roots: [unclosed\n")
    good = project.repo / "src" / "app.py"
    turns = [call("Write", file_path=str(good), content="ok\n"), Turn(text="done")]
    with FakeModelAPI(turns) as api:
        client = claude(node_bin, project, api)
        result = ask(client, "edit the app", "--allowedTools", "Write")
        sent = api.agent_requests()
    assert good.read_text() == "ok\n"
    assert "<memory>" not in texts(sent[0])
    assert result["result"] == "done"
    (started,) = hook_runs(project, result["session_id"], "SessionStart")
    assert started["exitCode"] == 0
    assert started["stderr"].startswith("memoryd: context --hook injected nothing: ")
    # the user is told, once: at the session's start, not again with the prompt; the guard
    # says what it means for edits once too
    told = [
        (event, run["content"])
        for event in ("SessionStart", "UserPromptSubmit", "PreToolUse")
        for run in hook_runs(project, result["session_id"], event, "hook_system_message")
    ]
    assert [event for event, _ in told] == ["SessionStart", "PreToolUse"]
    assert told[0][1].startswith("memoryd: context --hook injected nothing: ")
    assert told[1][1].startswith("memoryd: guard --hook could not check the write, allowing it: ")
    assert all("config.yaml" in text and "\n" not in text for _, text in told)


def test_a_cache_folder_linked_to_an_unmounted_drive_is_told_and_fails_no_hook(
    node_bin: Path, project: Project
) -> None:
    """An error that was not memoryd's own (here the cache folder is a link to a drive that
    is not mounted) made 'context --hook' exit 1: a hook error on every prompt, never the
    one-line notice."""
    cache = project.home.parent / "memoryd-home" / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    drive = project.home.parent / "usb" / "cache"
    cache.symlink_to(drive)
    with FakeModelAPI([Turn(text="ok")]) as api:
        session = ask(claude(node_bin, project, api), "hello")["session_id"]
    records = [
        (e["attachment"]["hookEvent"], e["attachment"]["type"], e["attachment"].get("exitCode"))
        for e in transcript(project, session) if isinstance(e.get("attachment"), dict)
        and e["attachment"].get("hookEvent") in ("SessionStart", "UserPromptSubmit")
    ]  # fmt: skip
    assert records == [  # it was one record: hook_success with exit code 1, and no word
        ("SessionStart", "hook_success", 0), ("SessionStart", "hook_system_message", None),
    ]  # fmt: skip
    told = [run["content"] for run in hook_runs(project, session, "SessionStart", "hook_system_message")]
    assert told == [
        f"memoryd: context --hook injected nothing: {cache} is a link to {drive}, which does not "
        f"exist: the command stopped before it finished; hint: mount or create {drive} (or "
        "remove the link), then run it again"
    ]


def test_a_missing_global_root_is_told_once_and_the_project_block_still_comes(
    node_bin: Path, project: Project
) -> None:
    project.seed()
    shutil.rmtree(project.global_root)  # hooks set up on a machine without 'memoryd init'
    with FakeModelAPI([Turn(text="ok")]) as api:
        client = claude(node_bin, project, api)
        session = ask(client, "Why does FTS5 miss short Chinese words?")["session_id"]
        sent = api.agent_requests()
    assert "- 部署只用 pnpm (`rules/部署只用-pnpm`) [project]" in texts(sent[0])
    told = [
        (event, run["content"]) for event in ("SessionStart", "UserPromptSubmit")
        for run in hook_runs(project, session, event, "hook_system_message")
    ]  # fmt: skip
    assert told == [(
        "SessionStart",
        f"memoryd: context --hook: the global root {project.global_root} does not exist, so "
        "nothing of it was injected; hint: mount or move it back, create it with 'memoryd init', "
        f"or correct or remove its path in {project.home.parent / 'memoryd-home' / 'config.yaml'}",
    )]  # fmt: skip


def test_a_rule_remembered_through_the_bash_tool_is_only_a_proposal(
    node_bin: Path, project: Project
) -> None:
    """Claude Code sets CLAUDECODE=1 for the commands its Bash tool runs; memoryd sees it."""
    command = "memoryd remember --kind rule --summary 'Never push on Fridays'"
    accept = "memoryd accept proposals/never-push-on-fridays"
    turns = [
        call("Bash", command=command, description="save a rule"),
        call("Bash", command=accept, description="accept it"),
        Turn(text="done"),
    ]
    with FakeModelAPI(turns) as api:
        client = claude(node_bin, project, api)
        ask(client, "make it a rule", "--allowedTools", "Bash(memoryd remember:*)",
            "--allowedTools", "Bash(memoryd accept:*)")  # fmt: skip
        sent = api.agent_requests()
    saved = result_text(tool_results(sent[1])[-1])
    assert "saved as a rule-proposal" in saved
    refused = result_text(tool_results(sent[2])[-1])
    assert "refusing to accept 'proposals/never-push-on-fridays': this runs under an agent " in refused
    assert "CLAUDECODE=1 (Claude Code)" in refused
    assert (project.memory / "proposals" / "never-push-on-fridays.md").exists()
    assert not (project.memory / "rules" / "never-push-on-fridays.md").exists()


def test_session_start_reinjects_the_rules_on_resume_and_after_a_compaction(
    node_bin: Path, project: Project
) -> None:
    """The matchers startup, resume and compact (clear: the next test): each start of a
    session context gets the rules and the outline again, and holds them once (Claude Code
    records only some of these runs in the transcript, so the requests sent to the model are
    what is checked)."""
    project.remember("--kind", "rule", "--summary", "部署只用 pnpm")
    rule = "- 部署只用 pnpm (`rules/部署只用-pnpm`) [project]"
    turns = [Turn(text="first"), Turn(text="second"), Turn(text="summary"), Turn(text="after")]
    with FakeModelAPI(turns) as api:
        client = claude(node_bin, project, api)
        session = ask(client, "hello")["session_id"]
        started = len(api.requests)
        ask(client, "again", "--resume", session)
        resumed = [r.body for r in api.requests[started:] if r.body.get("tools")]
        ask(client, "/compact", "--resume", session)
        compacted = len(api.requests)
        ask(client, "after the compaction", "--resume", session)
        after = [r.body for r in api.requests[compacted:] if r.body.get("tools")]
    # the resumed session holds the rules once: resume's block (the prompt hook adds none)
    assert texts(resumed[-1]).count(rule) == 1
    names = [run["hookName"] for run in hook_runs(project, session, "SessionStart")]
    assert names[0] == "SessionStart:startup" and "SessionStart:compact" in names
    # after the compaction the old history is a summary; the rules came back with it
    assert "summary" in texts(after[-1]) and texts(after[-1]).count(rule) == 1


def user_message(text: str) -> str:
    """One line of ``--input-format stream-json``: a prompt typed into the running session."""
    message = {"type": "user", "message": {"role": "user", "content": text}}
    return json.dumps(message, ensure_ascii=False) + "\n"


def test_session_start_reinjects_the_rules_after_a_clear(node_bin: Path, project: Project) -> None:
    """The matcher clear: /clear typed into a running session begins a new context, whose
    SessionStart runs with the source clear and must give it the rules again (without the
    matcher the context after /clear had only the prompt hook's block). One process takes
    the three prompts on stdin, as a user types them: ``claude -p /clear --resume`` would
    run the resume hook first and carry its block into the new session, hiding the loss."""
    project.remember("--kind", "rule", "--summary", "部署只用 pnpm")
    rule = "- 部署只用 pnpm (`rules/部署只用-pnpm`) [project]"
    prompts = ["zeppelin before the clear", "/clear", "after the clear"]
    with FakeModelAPI([Turn(text="first"), Turn(text="after")]) as api:
        client = claude(node_bin, project, api)
        done = client.run(
            "claude", "-p", "--input-format", "stream-json", "--output-format", "stream-json",
            "--verbose", input="".join(user_message(p) for p in prompts), timeout=240,
        )  # fmt: skip
        sent = api.agent_requests()
    assert done.returncode == 0, (done.stdout, done.stderr)
    events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    sessions = list(dict.fromkeys(e["session_id"] for e in events if e.get("session_id")))
    assert len(sessions) == 2 and len(sent) == 2  # /clear began a new session; no model call
    assert [e["trigger"] for e in events if e["type"] == "conversation_reset"] == ["clear"]
    first, cleared = sessions
    assert [run["hookName"] for run in hook_runs(project, first, "SessionStart")] == [
        "SessionStart:startup"
    ]
    (run,) = hook_runs(project, cleared, "SessionStart")
    assert (run["hookName"], run["exitCode"]) == ("SessionStart:clear", 0)
    start = injected(project, cleared, "SessionStart")
    assert rule in start and "## Memory outline" in start
    # the context after /clear holds nothing of the old one, and the rules once again: the
    # clear's block (the prompt hook adds none: the session holds them)
    assert "zeppelin" in texts(sent[0]) and "zeppelin" not in texts(sent[1])
    assert (texts(sent[0]).count(rule), texts(sent[1]).count(rule)) == (1, 1)


MEMORY_DIR = re.compile(r"You have a persistent file-based memory at `([^`]+)`")


def memory_dir(body: dict[str, Any]) -> Path:
    """Claude Code's auto-memory folder of the session, as its system prompt names it."""
    found = MEMORY_DIR.search(texts(body))
    assert found, "Claude Code's system prompt names no memory folder"
    return Path(found[1])


@pytest.mark.parametrize("where", ["deep repository", "linked worktree"])
def test_claude_codes_own_memories_of_the_project_reach_its_prompt(
    node_bin: Path, project: Project, where: str
) -> None:
    """Claude Code keeps a project's auto memory in ~/.claude/projects/<folder>/memory,
    <folder> named after the main checkout (a linked worktree's session uses it) and cut
    and hashed past 200 characters (an emoji is two '-'). memoryd looked in the worktree's
    folder and in the uncut name: none of those memories were injected or recalled."""
    if where == "deep repository":
        cwd = project.repo.parent / ("packages-" * 12) / ("services-" * 12) / "部署 📦"
        cwd.mkdir(parents=True)
        git(cwd, "init", "-q")
    else:
        (project.repo / "README.md").write_text("app\n")
        git(project.repo, "add", "README.md")
        git(project.repo, "commit", "-qm", "start")
        cwd = project.repo.parent / "wt" / "feature"
        git(project.repo, "worktree", "add", "-q", "-b", "feature", str(cwd))
    with FakeModelAPI([Turn(text="hi"), Turn(text="ok")]) as api:
        client = Client(node_bin, claude(node_bin, project, api).env, cwd)
        ask(client, "hello")
        folder = memory_dir(api.agent_requests()[0])
        assert (folder.parent.name == claude_folder(project.repo)) is (where != "deep repository")
        (folder / "deploy.md").write_text("---\ntype: project\n---\nWe deploy with kamal.\n")
        done = run_cli("init", "--claude", cwd=cwd)
        assert done.returncode == 0, done.stderr
        ask(client, "how do we deploy with kamal?")
        sent = api.agent_requests()
    assert "### " + folder.parent.name + "/memory/deploy" in texts(sent[-1])
    assert "We deploy with kamal." in texts(sent[-1])


def claude_folder(path: Path) -> str:
    from memoryd.layouts.visible import claude_slug

    return claude_slug(path)


def test_a_worktree_removed_mid_session_still_has_its_projects_memory_over_mcp(
    node_bin: Path, project: Project
) -> None:
    """The session works in a linked worktree outside the main checkout; its Bash tool
    removes the worktree (git worktree remove), then the model recalls: memoryd's MCP server,
    started in the worktree, still serves the project's memories, not the global root alone."""
    project.seed()
    worktree = project.linked_worktree()
    remove = f"git -C {project.repo} worktree remove --force {worktree}"
    turns = [
        call("Bash", command=remove, description="remove the worktree"),
        call("mcp__memoryd__memory_recall", query="unicode61"),
        Turn(text="done"),
    ]
    with FakeModelAPI(turns) as api:
        client = Client(node_bin, claude(node_bin, project, api).env, worktree)
        ask(client, "clean up the worktree, then look up unicode61",
            "--allowedTools", "Bash(git -C:*)")  # fmt: skip
        sent = api.agent_requests()
    assert not worktree.exists()
    # the Bash tool's shell then fails its own 'pwd' there (exit code 1): the folder is gone
    _, recalled = (result_text(part) for part in tool_results(sent[2]))
    assert recalled.startswith("## pitfalls/fts5-unicode61-merges-a-chinese-run (project pitfall")


def test_a_secret_remembered_over_mcp_is_refused_to_the_model_with_the_fix(
    node_bin: Path, project: Project
) -> None:
    """The model sees the refusal as a tool error with the CLI's words: where the secret
    is (redacted), and what to say instead; nothing is written."""
    key = "sk_live_Zq8Lm2Nx7Rt4Vb9Kc3Hj6Wd1"
    turns = [
        call("mcp__memoryd__memory_remember", kind="fact", summary="Stripe live key",
             body=f"the key is {key}"),
        Turn(text="ok"),
    ]  # fmt: skip
    with FakeModelAPI(turns) as api:
        client = claude(node_bin, project, api)
        ask(client, "Remember the Stripe key", "--allowedTools", "mcp__memoryd__memory_remember")
        sent = api.agent_requests()
    (answer,) = tool_results(sent[1])
    text = result_text(answer)
    assert answer.get("is_error") is True, answer
    assert text.startswith(  # line 10: below the agent and session lines Claude Code gives
        "refusing to remember: the memory contains what looks like a secret\n"
        "  facts/stripe-live-key.md:10: stripe-secret-key sk_l…6Wd1 (fingerprint "
    ), text
    assert "hint: remove the secret (say where it lives instead" in text
    assert key not in text  # the refusal itself never repeats the secret
    assert not list((project.memory / "facts").glob("stripe*"))


THREE_PROMPTS = (
    "Why does FTS5 miss short Chinese words?",
    "and does unicode61 split 部署脚本 at all?",
    "how do we deploy?",
)


def three_prompt_session(client: Client, api: FakeModelAPI) -> tuple[str, list[dict[str, Any]]]:
    """One running session that takes three prompts on stdin, as a user types them: the
    session id, and the three requests the model was sent."""
    done = client.converse(
        "claude", "-p", "--input-format", "stream-json", "--output-format", "stream-json",
        "--verbose", inputs=[user_message(p) for p in THREE_PROMPTS], answered='"type":"result"',
    )  # fmt: skip
    assert done.returncode == 0, (done.stdout, done.stderr)
    events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    (session,) = dict.fromkeys(e["session_id"] for e in events if e.get("session_id"))
    return session, api.agent_requests()


def test_a_session_of_three_prompts_carries_one_rules_block(
    node_bin: Path, project: Project
) -> None:
    """SessionStart gives the rules and the outline; each prompt adds only what its query
    found that the session does not hold yet. Each hook's block stays in the history, so
    three prompts of one session carried 2, 3 and 4 copies of the rules and the outline."""
    project.seed()
    rule = "- 部署只用 pnpm (`rules/部署只用-pnpm`) [project]"
    pitfall = "### pitfalls/fts5-unicode61-merges-a-chinese-run (project pitfall)"
    with FakeModelAPI([Turn(text="one"), Turn(text="two"), Turn(text="three")]) as api:
        session, sent = three_prompt_session(claude(node_bin, project, api), api)
    assert len(sent) == 3
    assert [texts(body).count(rule) for body in sent] == [1, 1, 1]
    assert [texts(body).count("## Memory outline") for body in sent] == [1, 1, 1]
    # the first prompt found the pitfall; the second found it again and was not given it twice
    assert [texts(body).count(pitfall) for body in sent] == [1, 1, 1]
    prompts = [run["content"] for run in hook_runs(project, session, "UserPromptSubmit",
                                                   "hook_additional_context")]  # fmt: skip
    assert len(prompts) == 1 and "## Iron rules" not in "\n".join(prompts[0])
    stats = run_cli("context", "--stats", "--json", cwd=project.repo)
    assert stats.returncode == 0, stats.stderr
    (row,) = [s for s in json.loads(stats.stdout)["sessions"] if s["session"] == session]
    start = len(injected(project, session, "SessionStart"))
    assert row["starts"] == [start] and len(row["prompts"]) == 3 and row["prompts"][1:] == [0, 0]
