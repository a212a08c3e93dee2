"""Every decision of the layered tree's write gate, in one table, and the command."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memoryd.layouts.guard import WriteRequest, check_write
from tests.helpers import run_cli

ROOT = "/data/memory"
WT = "/work/proj"
CW = "checkpoint-writer"

# target, agent, task, write_enabled, allowed, rule
CASES = [
    # outside the tree: only the system agents' sandbox applies
    (f"{WT}/src/a.ts", "", "", True, True, "outside"),
    (f"{WT}/src/a.ts", "build", "", True, True, "outside"),
    ("src/a.ts", "build", "", False, True, "outside"),  # disable_write only covers the tree
    ("/data/memory-other/x.md", "", "", True, True, "outside"),  # prefix is not containment
    (f"{WT}/src/a.ts", CW, "", True, False, "sandbox"),
    ("/data/memory-other/x.md", CW, "", True, False, "sandbox"),
    (f"{ROOT}/projects/../../etc/x.md", CW, "", True, False, "sandbox"),
    (f"{WT}/src/a.ts", CW, "", False, False, "sandbox"),  # sandbox is checked first
    (f"{WT}/.mimocode/agents.json", "dream", "", True, True, "outside"),
    (f"{WT}/.mimocode/../src/x.ts", "dream", "", True, False, "sandbox"),
    (".mimocode/../src/x.ts", "dream", "", True, False, "sandbox"),
    (f"{WT}/src/x.ts", "distill", "", True, False, "sandbox"),
    (f"{WT}/.mimocode-evil/x.ts", "distill", "", True, False, "sandbox"),
    (f"{ROOT}/projects/p1/MEMORY.md", "dream", "", True, True, "memory"),
    (f"{ROOT}/global/MEMORY.md", "dream", "", True, True, "memory"),
    # disable_write: every write into the tree, whoever writes
    (f"{ROOT}/projects/p1/MEMORY.md", "", "", False, False, "disabled"),
    (f"{ROOT}/sessions/s1/checkpoint.md", CW, "", False, False, "disabled"),
    (f"{ROOT}/nowhere.txt", "", "", False, False, "disabled"),
    # shape: <scope>/<scope_id>/<key>.md
    (f"{ROOT}/MEMORY.md", "", "", True, False, "shape"),
    (f"{ROOT}/notes/s1/x.md", "", "", True, False, "shape"),
    (f"{ROOT}/projects/MEMORY.md", "", "", True, False, "shape"),
    (f"{ROOT}/projects/p1/MEMORY.txt", "", "", True, False, "shape"),
    (f"{ROOT}/projects/p1", "", "", True, False, "shape"),
    (ROOT, "", "", True, False, "shape"),
    (f"{ROOT}/sessions/../projects.md", "", "", True, False, "shape"),
    (f"{ROOT}/projects/p1/MEMORY.md", CW, "", True, True, "checkpoint-writer"),
    (f"{ROOT}/Global/MEMORY.md", CW, "", True, False, "shape"),
    # the main agent and other agents: anything well shaped outside tasks/
    (f"{ROOT}/global/MEMORY.md", "", "", True, True, "memory"),
    (f"{ROOT}/projects/p1/MEMORY.md", "build", "", True, True, "memory"),
    (f"{ROOT}/projects/p1/memory-arch.md", "", "", True, True, "memory"),
    (f"{ROOT}/projects/p1/free/deep/key.md", "", "", True, True, "memory"),
    (f"{ROOT}/sessions/s1/notes.md", "", "", True, True, "memory"),
    (f"{ROOT}/sessions/s1/checkpoint.md", "", "", True, True, "memory"),
    (f"{ROOT}/sessions/s1/tasks.md", "", "", True, True, "memory"),
    (f"{ROOT}/sessions/s1/tasks/T3/progress.md", "", "", True, False, "tasks"),
    (f"{ROOT}/sessions/s1/tasks/T3/progress.md", "build", "", True, False, "tasks"),
    (f"{ROOT}/sessions/s1/tasks/notes.md", "", "T3", True, False, "tasks"),
    # a subagent bound to a task: its own tasks/<TID>/ subtree only
    (f"{ROOT}/sessions/s1/tasks/T3/progress.md", "explore", "T3", True, True, "own-task"),
    (f"{ROOT}/sessions/s1/tasks/T3/sub/scratch.md", "explore", "T3", True, True, "own-task"),
    (f"{ROOT}/sessions/s1/tasks/T3.1.2/progress.md", "", "T3.1.2", True, True, "own-task"),
    (f"{ROOT}/sessions/s1/tasks/T4/progress.md", "explore", "T3", True, False, "tasks"),
    (f"{ROOT}/sessions/s1/tasks/T3.1/progress.md", "explore", "T3", True, False, "tasks"),
    (f"{ROOT}/sessions/s1/tasks/T3/../T4/x.md", "explore", "T3", True, False, "tasks"),
    (f"{ROOT}/sessions/s1/tasks/x3/p.md", "explore", "x3", True, False, "tasks"),
    (f"{ROOT}/sessions/s1/tasks/T3/data.json", "explore", "T3", True, False, "shape"),
    (f"{ROOT}/projects/p1/MEMORY.md", "explore", "T3", True, True, "memory"),
    # the checkpoint-writer's exact whitelist
    (f"{ROOT}/projects/p1/Memory.md", CW, "", True, True, "checkpoint-writer"),
    (f"{ROOT}/projects/p1/memory-arch.md", CW, "", True, True, "checkpoint-writer"),
    (f"{ROOT}/projects/p1/pinned.md", CW, "", True, False, "checkpoint-writer"),
    (f"{ROOT}/projects/p1/sub/MEMORY.md", CW, "", True, False, "checkpoint-writer"),
    (f"{ROOT}/sessions/s1/checkpoint.md", CW, "", True, True, "checkpoint-writer"),
    (f"{ROOT}/sessions/s1/checkpoint-tools.md", CW, "", True, True, "checkpoint-writer"),
    (f"{ROOT}/sessions/s1/notes.md", CW, "", True, True, "checkpoint-writer"),
    (f"{ROOT}/sessions/s1/Checkpoint.md", CW, "", True, False, "checkpoint-writer"),
    (f"{ROOT}/sessions/s1/other.md", CW, "", True, False, "checkpoint-writer"),
    (f"{ROOT}/sessions/s1/tasks/T3/progress.md", CW, "", True, True, "checkpoint-writer"),
    (f"{ROOT}/sessions/s1/tasks/T3.1.2/any-name.md", CW, "", True, True, "checkpoint-writer"),
    (f"{ROOT}/sessions/s1/tasks/X1/progress.md", CW, "", True, False, "checkpoint-writer"),
    (f"{ROOT}/sessions/s1/tasks/T3./progress.md", CW, "", True, False, "checkpoint-writer"),
    (f"{ROOT}/sessions/s1/tasks/T3/sub/x.md", CW, "", True, False, "checkpoint-writer"),
    (f"{ROOT}/global/MEMORY.md", CW, "", True, False, "checkpoint-writer"),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c[1] or 'main'}:{c[0]}" for c in CASES])
def test_guard_table(case: tuple[str, str, str, bool, bool, str]) -> None:
    target, agent, task, enabled, allowed, rule = case
    request = WriteRequest(
        target=target, memory_root=ROOT, cwd=WT, agent=agent, task=task, write_enabled=enabled
    )
    decision = check_write(request)
    assert (decision.allowed, decision.rule) == (allowed, rule)
    assert bool(decision.message) is not allowed


def test_disable_write_message_says_writing_is_off_and_memory_is_searchable() -> None:
    request = WriteRequest(
        target="projects/p1/MEMORY.md", memory_root=ROOT, cwd=ROOT, write_enabled=False
    )
    assert check_write(request).message == (
        "memory writing is turned off (disable_write), so /data/memory/projects/p1/MEMORY.md "
        "was not written. This is a setting, not a wrong path: do not retry under another "
        "memory path. Existing memory is still searchable (memoryd recall, or the memory tool)."
    )


def test_shape_message_names_the_two_canonical_paths() -> None:
    request = WriteRequest(
        target=f"{ROOT}/MEMORY.md", memory_root=ROOT, project_id="p9", session_id="s9"
    )
    assert check_write(request).message == (
        "/data/memory/MEMORY.md is not a memory path. Memory files live at "
        "/data/memory/<scope>/<scope_id>/<key>.md with scope global, projects or sessions.\n"
        "Write here instead:\n"
        "  /data/memory/projects/p9/MEMORY.md\n"
        "    project memory: edit its ## Rules, ## Architecture decisions or "
        "## Discovered durable knowledge section\n"
        "  /data/memory/sessions/s9/notes.md\n"
        "    session scratchpad: append entries headed ## [turn N · YYYY-MM-DDTHH:MM:SSZ]"
    )


def test_sandbox_message_shows_the_resolved_escape() -> None:
    request = WriteRequest(target=".mimocode/../src/x.ts", memory_root=ROOT, cwd=WT, agent="dream")
    assert check_write(request).message == (
        "agent 'dream' may write only inside the memory tree /data/memory or "
        "/work/proj/.mimocode; /work/proj/src/x.ts is outside both."
    )


def test_tasks_message_points_a_bound_subagent_at_its_own_folder() -> None:
    target = f"{ROOT}/sessions/s1/tasks/T4/progress.md"
    request = WriteRequest(target=target, memory_root=ROOT, task="T3", session_id="s1")
    message = check_write(request).message
    assert message.startswith("sessions/s1/tasks/T4/progress.md is under a session's tasks/")
    assert "(you are bound to task T3)" in message
    assert "/data/memory/sessions/s1/notes.md" in message


# -- the command ---------------------------------------------------------------------


@pytest.fixture
def mimo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "mimo"
    monkeypatch.setenv("MIMOCODE_HOME", str(home))
    root = home / "data" / "memory"
    root.mkdir(parents=True)
    return root


def test_guard_command_allows_and_refuses(mimo: Path, tmp_path: Path) -> None:
    ok = run_cli("guard", str(mimo / "projects" / "p1" / "MEMORY.md"))
    assert (ok.returncode, ok.stdout, ok.stderr) == (0, "", "")
    refused = run_cli(
        "guard", str(mimo / "sessions" / "s1" / "tasks" / "T2" / "progress.md"), "--task", "T1"
    )
    assert refused.returncode == 3  # a refusal, apart from memoryd's own failures (1)
    assert refused.stderr.startswith("memoryd: error: sessions/s1/tasks/T2/progress.md is under")
    own = run_cli("guard", str(mimo / "sessions/s1/tasks/T1/progress.md"), "--task", "T1")
    assert own.returncode == 0


def test_guard_command_resolves_relative_escapes_from_the_current_folder(
    mimo: Path, tmp_path: Path
) -> None:
    work = tmp_path / "proj"
    (work / ".mimocode").mkdir(parents=True)
    escape = run_cli("guard", ".mimocode/../src/x.ts", "--agent", "dream", cwd=work)
    assert escape.returncode == 3
    assert f"{work}/src/x.ts is outside both" in escape.stderr
    inside = run_cli("guard", ".mimocode/agent.json", "--agent", "dream", "--json", cwd=work)
    assert inside.returncode == 0 and '"allowed": true' in inside.stdout


def test_guard_command_sees_through_a_linked_spelling_of_the_tree(
    mimo: Path, tmp_path: Path
) -> None:
    link = tmp_path / "link-to-memory"
    os.symlink(mimo, link)
    refused = run_cli("guard", str(link / "MEMORY.md"))
    assert refused.returncode == 3 and "is not a memory path" in refused.stderr


def test_guard_command_reads_disable_write_from_config(mimo: Path) -> None:
    config = Path(os.environ["MEMORYD_HOME"]) / "config.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("layered:\n  disable_write: true\n")
    refused = run_cli("guard", str(mimo / "projects" / "p1" / "MEMORY.md"))
    assert refused.returncode == 3
    assert "memory writing is turned off (disable_write)" in refused.stderr
    assert "still searchable" in refused.stderr
    outside = run_cli("guard", str(mimo.parent / "other.txt"))
    assert outside.returncode == 0


def test_a_broken_config_is_a_failure_not_a_refusal(mimo: Path) -> None:
    config = Path(os.environ["MEMORYD_HOME"]) / "config.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("layered: [unclosed\n")
    failed = run_cli("guard", str(mimo / "MEMORY.md"))
    assert failed.returncode == 1  # a hook blocking on 3 lets the edit through
    assert failed.stderr.startswith("memoryd: error: ") and "config.yaml" in failed.stderr
    missing = run_cli("guard")
    assert (missing.returncode, missing.stderr) == (
        2, "memoryd: error: guard needs the PATH about to be written\n  hint: memoryd guard PATH\n"
    )


def _event(path: str, cwd: Path, tool: str = "Write", **extra: object) -> str:
    import json

    key = "notebook_path" if tool == "NotebookEdit" else "file_path"
    return json.dumps({
        "session_id": "s1", "hook_event_name": "PreToolUse", "cwd": str(cwd), "tool_name": tool,
        "tool_input": {key: path, "content": "x"}, **extra,
    })  # fmt: skip


def test_guard_hook_speaks_claude_codes_pretooluse_protocol(mimo: Path, tmp_path: Path) -> None:
    import json

    work = tmp_path / "proj"
    (work / "src").mkdir(parents=True)
    denied = run_cli("guard", "--hook", input=_event(str(mimo / "MEMORY.md"), work))
    assert denied.returncode == 0, denied.stderr
    decision = json.loads(denied.stdout)["hookSpecificOutput"]
    assert decision["hookEventName"] == "PreToolUse"
    assert decision["permissionDecision"] == "deny"
    assert decision["permissionDecisionReason"].startswith(
        f"{mimo}/MEMORY.md is not a memory path. Memory files live at"
    )
    for tool, path in (("Edit", "src/app.py"), ("NotebookEdit", str(work / "src/n.ipynb")),
                       ("Write", str(mimo / "projects/p1/MEMORY.md"))):  # fmt: skip
        allowed = run_cli("guard", "--hook", input=_event(path, work, tool))
        assert (allowed.returncode, allowed.stdout, allowed.stderr) == (0, "", ""), tool
    # the subagent's type in the event is the agent the sandbox judges
    sandboxed = run_cli(
        "guard", "--hook", input=_event("src/app.py", work, agent_type="checkpoint-writer")
    )
    assert json.loads(sandboxed.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    # a tool call without a path (Bash) is none of the guard's business
    bash = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                       "tool_input": {"command": "ls"}, "cwd": str(work)})  # fmt: skip
    assert run_cli("guard", "--hook", input=bash).stdout == ""


def test_guard_hook_answers_gemini_clis_beforetool_in_its_own_words(
    mimo: Path, tmp_path: Path
) -> None:
    """Gemini CLI reads a refusal as decision/reason (Claude Code's permissionDecision means
    nothing to it: the write went ahead)."""
    import json

    work = tmp_path / "proj"
    work.mkdir()
    event = json.loads(_event(str(mimo / "MEMORY.md"), work, "write_file"))
    event["hook_event_name"] = "BeforeTool"
    denied = run_cli("guard", "--hook", input=json.dumps(event))
    answer = json.loads(denied.stdout)
    assert (denied.returncode, sorted(answer)) == (0, ["decision", "reason"])
    assert answer["decision"] == "deny"
    assert answer["reason"].startswith(f"{mimo}/MEMORY.md is not a memory path.")
    event["tool_input"]["file_path"] = str(work / "app.py")
    allowed = run_cli("guard", "--hook", input=json.dumps(event))
    assert (allowed.returncode, allowed.stdout) == (0, "")


@pytest.mark.parametrize(
    ("stdin", "config", "reason"),
    [
        ("not json", None, "--hook expects the PreToolUse event's JSON on stdin: Expecting value"),
        ("[1]", None, "--hook expects a JSON object on stdin"),
        (None, "layered: [unclosed\n", "config.yaml"),
    ],
)
def test_guard_hook_never_blocks_a_tool_call_when_memoryd_fails(
    mimo: Path, tmp_path: Path, stdin: str | None, config: str | None, reason: str
) -> None:
    if config is not None:
        path = Path(os.environ["MEMORYD_HOME"]) / "config.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(config)
    event = stdin if stdin is not None else _event(str(mimo / "MEMORY.md"), tmp_path)
    done = run_cli("guard", "--hook", input=event)
    assert done.returncode == 0
    assert done.stderr.startswith("memoryd: guard --hook could not check the write, allowing it: ")
    assert reason in done.stderr
    told = json.loads(done.stdout)  # no decision: the call goes ahead, and the user is told
    assert list(told) == ["systemMessage"] and "\n" not in told["systemMessage"]
    assert told["systemMessage"].startswith(
        "memoryd: guard --hook could not check the write, allowing it: "
    )
    assert reason in told["systemMessage"]
    if config is not None:  # the same session's next write: stderr alone
        again = run_cli("guard", "--hook", input=event)
        assert (again.returncode, again.stdout) == (0, "")
        assert again.stderr == done.stderr
