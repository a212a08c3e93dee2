"""memoryd context --rebuild: the layered tree's four sections and key index, within budgets."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from memoryd.agent import budget
from memoryd.agent.rebuild import CUT, INDEX_CUT
from memoryd.app import App
from tests.helpers import git, run_cli

SID = "ses_8f2a"
PID = "3f2a-uuid"
HEADERS = [
    "# Session checkpoint",
    "# Project durable knowledge",
    "# Session notes",
    "# Global memory",
]


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MIMOCODE_HOME", str(tmp_path / "mimo"))
    return tmp_path / "mimo" / "data" / "memory"


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def english_lines(count: int) -> list[str]:
    return [
        f"- step {n}: ran the migration on replica {n % 7} and checked the lag graph"
        for n in range(count)
    ]


def chinese_lines(count: int) -> list[str]:
    return [
        f"- 第{n}条:部署脚本用 pnpm 而不是 npm,因为 lockfile 格式不兼容。" for n in range(count)
    ]


def rebuild(*args: str, cwd: Path | None = None, stdin: str | None = None) -> dict[str, object]:
    done = run_cli("context", "--rebuild", "--json", *args, cwd=cwd, input=stdin)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def sections(data: dict[str, object]) -> dict[str, dict[str, object]]:
    listed = data["sections"]
    assert isinstance(listed, list), listed  # the JSON's sections: a list of objects
    return {s["name"]: s for s in listed}


def body_of(text: str, title: str) -> str:
    """The text under one header of the rendered rebuild (up to the next top-level header)."""
    start = text.index(title + "\n\n") + len(title) + 2
    ends = [text.index("\n\n# ", start)] if "\n\n# " in text[start:] else []
    return text[start : ends[0] if ends else len(text)]


def test_token_estimates_differ_for_chinese_and_english() -> None:
    assert budget.estimate("") == 0
    assert budget.estimate("hello world") == 3  # 11 characters, a quarter token each, rounded up
    assert budget.estimate("a" * 4000) == 1000
    assert budget.estimate("部署" * 500) == 1000  # one token per Han character
    assert budget.estimate("部署脚本用 pnpm 而不是 npm，因为 lockfile 不兼容") == 14 + 5
    assert (
        budget.estimate("。「」，한국어かな") == 9
    )  # CJK punctuation, full-width forms, Hangul, Kana


LINE = st.text(alphabet=st.sampled_from([*"abc xyz部署脚本，。 \t", "é", "🙂"]), max_size=120)


@given(lines=st.lists(LINE, max_size=40), limit=st.integers(min_value=0, max_value=600))
@example(lines=["x" * 5000], limit=30)  # one line longer than the whole budget
@example(lines=["部署" * 3000, "tail"], limit=100)
def test_a_cut_fits_its_budget_and_keeps_a_prefix_of_whole_lines(
    lines: list[str], limit: int
) -> None:
    text = "\n".join(lines)
    marker = "[… cut]"
    out, was_cut = budget.cut(text, limit, marker)
    assert budget.estimate(out) <= limit
    if not was_cut:
        assert out == text.strip("\n")
        return
    if not out:
        return
    kept = out.split("\n")
    assert kept[-1] == marker
    source = text.strip("\n").split("\n")
    body = kept[:-1]
    whole = body[:-1] if body and body[-1] not in source[: len(body)] else body
    assert source[: len(whole)] == whole  # whole lines, in order, from the start
    if len(body) > len(whole):  # only a first line longer than the budget is cut inside
        assert len(body) == 1 and source[0].startswith(body[0]) and body[0] != source[0]


def test_every_section_in_order_within_its_budget_on_chinese_and_english(tree: Path) -> None:
    checkpoint = english_lines(2000)  # ~150 KB of English: far over 11000 tokens
    project = chinese_lines(2000)  # ~60k Chinese characters: far over 10000 tokens
    write(tree, f"sessions/{SID}/checkpoint.md", "\n".join(checkpoint) + "\n")
    write(tree, f"projects/{PID}/MEMORY.md", "\n".join(project) + "\n")
    write(
        tree, f"sessions/{SID}/notes.md", "## [turn 3 · 2026-11-30T10:00:00Z]\n发现:CI 用 arm64\n"
    )
    write(tree, "global/MEMORY.md", "# Global\n- Answer in English unless asked otherwise\n")
    data = rebuild("--session", SID, "--project-id", PID)
    text = str(data["text"])
    found = [line for line in text.split("\n") if line in (*HEADERS, "# Memory index")]
    assert found == [*HEADERS, "# Memory index"]  # the document's order
    parts = sections(data)
    for name, limit in [("checkpoint", 11000), ("project", 10000), ("notes", 6000),
                        ("global", 6000), ("index", 500)]:  # fmt: skip
        assert parts[name]["budget"] == limit and parts[name]["present"] is True
        assert int(parts[name]["tokens"]) <= limit  # type: ignore[call-overload]
    assert [parts[n]["cut"] for n in ("checkpoint", "project", "notes", "global")] == [
        True, True, False, False,
    ]  # fmt: skip

    english = body_of(text, "# Session checkpoint").split("\n")
    assert english[-1] == CUT.format(budget=11000, path=tree / f"sessions/{SID}/checkpoint.md")
    assert english[:-1] == checkpoint[: len(english) - 1]
    chinese = body_of(text, "# Project durable knowledge").split("\n")
    assert chinese[-1] == CUT.format(budget=10000, path=tree / f"projects/{PID}/MEMORY.md")
    assert chinese[:-1] == project[: len(chinese) - 1]
    for shown, source, limit in [(english, checkpoint, 11000), (chinese, project, 10000)]:
        used = sum(budget.line_cost(line) for line in shown)  # the kept lines and the marker
        assert used <= limit < used + budget.line_cost(source[len(shown) - 1])  # as much as fits
    english_chars = sum(len(line) + 1 for line in english)
    chinese_chars = sum(len(line) + 1 for line in chinese)
    assert 40000 < english_chars <= 44000  # about four characters a token
    assert chinese_chars < english_chars / 2  # Han characters cost a token each
    assert (
        body_of(text, "# Session notes") == "## [turn 3 · 2026-11-30T10:00:00Z]\n发现:CI 用 arm64"
    )


def test_budgets_come_from_config_yaml(tree: Path) -> None:
    write(tree, f"sessions/{SID}/checkpoint.md", "\n".join(chinese_lines(50)))
    config = App().paths.config_file
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("rebuild:\n  checkpoint_tokens: 120\n  index_tokens: 40\n")
    data = rebuild("--session", SID, "--project-id", PID)
    parts = sections(data)
    assert parts["checkpoint"]["budget"] == 120 and parts["checkpoint"]["cut"] is True
    assert 100 < int(parts["checkpoint"]["tokens"]) <= 120  # type: ignore[call-overload]
    assert parts["index"]["budget"] == 40
    config.write_text("rebuild:\n  checkpoint_tokens: lots\n")
    done = run_cli("context", "--rebuild", "--session", SID)
    assert done.returncode == 1
    assert done.stderr.startswith(
        f"memoryd: error: {config}: rebuild.checkpoint_tokens: must be a whole number, got 'lots'"
    )


def test_missing_files_leave_their_sections_out_and_the_index_stays_in_scope(tree: Path) -> None:
    write(tree, f"sessions/{SID}/tasks/T3/progress.md", "§1 done\n")
    write(tree, f"sessions/{SID}/notes.md", "note\n")
    write(tree, "sessions/other-session/checkpoint.md", "not ours\n")
    write(tree, f"projects/{PID}/memory-deploy.md", "deploy notes\n")
    write(tree, "projects/other-project/MEMORY.md", "not ours\n")
    write(tree, "global/MEMORY.md", "global\n")
    write(tree, f"sessions/{SID}/draft.txt", "not a memory file\n")
    data = rebuild("--session", SID, "--project-id", PID)
    parts = sections(data)
    assert parts["checkpoint"]["present"] is False and parts["project"]["present"] is False
    text = str(data["text"])
    assert "# Session checkpoint" not in text and "# Project durable knowledge" not in text
    assert body_of(text, "# Memory index").split("\n") == [
        f"Memory files of this session, this project and global, under {tree}:",
        f"- sessions/{SID}/notes.md",
        f"- sessions/{SID}/tasks/T3/progress.md",
        f"- projects/{PID}/memory-deploy.md",
        "- global/MEMORY.md",
    ]
    for many in range(400):
        write(tree, f"sessions/{SID}/tasks/T{many}/notes.md", "x\n")
    index = body_of(str(rebuild("--session", SID, "--project-id", PID)["text"]), "# Memory index")
    assert index.endswith("\n" + INDEX_CUT.format(root=tree))
    assert budget.estimate(index) <= 500


def test_plain_text_output_and_an_empty_tree(tree: Path) -> None:
    done = run_cli("context", "--rebuild", "--session", SID, "--project-id", PID)
    assert done.returncode == 0
    assert done.stdout == ""
    assert done.stderr == f"memoryd: no layered memory tree at {tree} (memoryd init --layered)\n"
    write(tree, "global/MEMORY.md", "- 用中文回答\n")
    done = run_cli("context", "--rebuild", "--session", SID, "--project-id", PID)
    assert done.stdout == (
        "# Global memory\n\n- 用中文回答\n\n# Memory index\n\n"
        f"Memory files of this session, this project and global, under {tree}:\n"
        "- global/MEMORY.md\n"
    )


def test_the_project_id_defaults_to_mimo_codes_and_a_session_start_hook_asks(
    tree: Path, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    write(tree, f"projects/{PID}/MEMORY.md", "## Rules\n- 不要改 vendor/\n")
    write(tree, f"sessions/{SID}/checkpoint.md", "## Goal\nship the importer\n")
    no_id = run_cli("context", "--rebuild", "--session", SID, cwd=repo)
    assert "# Project durable knowledge" not in no_id.stdout
    assert no_id.stderr == (
        "memoryd: this repository has no MiMo Code project id yet, so no project MEMORY.md"
        " (pass --project-id)\n"
    )
    (repo / ".git" / "mimocode-project-id").write_text(PID + "\n")
    event = {"session_id": SID, "cwd": str(repo), "hook_event_name": "SessionStart",
             "source": "compact", "transcript_path": str(tmp_path / "t.jsonl")}  # fmt: skip
    done = run_cli("context", "--rebuild", "--hook", cwd=tmp_path, input=json.dumps(event))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("# Session checkpoint\n\n## Goal\nship the importer\n\n")
    assert "# Project durable knowledge\n\n## Rules\n- 不要改 vendor/\n" in done.stdout


def test_the_hook_fails_open_and_the_command_line_fails_loudly(tree: Path) -> None:
    broken = run_cli("context", "--rebuild", "--hook", input="{not json")
    assert (broken.returncode, broken.stdout) == (0, "")
    assert broken.stderr == (
        "memoryd: rebuild injection skipped: the hook event on stdin is not JSON: Expecting "
        "property name enclosed in double quotes: line 1 column 2 (char 1)\n"
        "  hint: configure 'memoryd context --rebuild --hook' as a SessionStart hook "
        "(matcher compact)\n"
    )
    listed = run_cli("context", "--rebuild", "--hook", input="[1, 2]")
    assert (listed.returncode, listed.stdout) == (0, "")
    assert listed.stderr == (
        "memoryd: rebuild injection skipped: --rebuild needs the session id\n"
        "  hint: pass --session SID (or --hook with a SessionStart event)\n"
    )
    evil = run_cli("context", "--rebuild", "--hook", input='{"session_id": "../../etc"}')
    assert (evil.returncode, evil.stdout) == (0, "")
    assert "cannot name a folder of the layered tree" in evil.stderr
    for args, message in [
        (["--rebuild"], "--rebuild needs the session id\n  hint: pass --session SID (or --hook "
         "with a SessionStart event)"),
        (["--rebuild", "--session", "a/b"], "session id 'a/b' cannot name a folder of the layered "
         "tree\n  hint: pass --session with letters, digits, '.', '_' or '-' only"),
        (["--session", SID], "--session and --project-id go with --rebuild\n  hint: add "
         "--rebuild, or drop them"),
        (["--rebuild", "--session", SID, "deploy"], "--rebuild takes no query\n  hint: drop the "
         "query words"),
    ]:  # fmt: skip
        done = run_cli("context", *args)
        assert (done.returncode, done.stderr) == (2, f"memoryd: error: {message}\n"), args


def test_the_mcp_memory_context_tool_can_ask_for_a_rebuild(tree: Path) -> None:
    from tests.agent.test_mcp import call

    write(tree, f"sessions/{SID}/checkpoint.md", "## Goal\n迁移到 PostgreSQL 16\n")
    write(tree, f"projects/{PID}/MEMORY.md", "## Rules\n- never touch vendor/\n")
    app = App()
    error, text = call(app, "memory_context", rebuild=True, session=SID, project_id=PID)
    assert not error
    assert text.startswith(
        "# Session checkpoint\n\n## Goal\n迁移到 PostgreSQL 16\n\n"
        "# Project durable knowledge\n\n## Rules\n- never touch vendor/\n\n# Memory index\n"
    )
    error, text = call(app, "memory_context", rebuild=True)
    assert error and text == "rebuild needs the session id\n  hint: pass session=<the session id>"


def test_a_broken_config_is_told_to_the_user_and_the_hooks_json_is_claude_codes(
    tree: Path, tmp_path: Path
) -> None:
    """Claude Code shows a hook's stderr only in its transcript view: with --json the reason
    is the answer's systemMessage (once per session), and the block comes as
    hookSpecificOutput.additionalContext, the form Claude Code reads."""
    write(tree, f"sessions/{SID}/checkpoint.md", "## Goal\nship the importer\n")
    event = json.dumps({"session_id": SID, "cwd": str(tmp_path),
                        "hook_event_name": "SessionStart", "source": "compact"})  # fmt: skip
    done = run_cli("context", "--rebuild", "--hook", "--json", input=event)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert answer["hookSpecificOutput"]["additionalContext"].startswith(
        "# Session checkpoint\n\n## Goal\nship the importer\n"
    )
    config = Path(os.environ["MEMORYD_HOME"]) / "config.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("serach: 1\n")
    broken = run_cli("context", "--rebuild", "--hook", "--json", input=event)
    problem = (
        f"{config}: serach: unknown key (did you mean 'search'?); hint: edit {config} "
        "(see docs/config.md)"
    )
    assert broken.returncode == 0
    assert json.loads(broken.stdout) == {
        "systemMessage": f"memoryd: rebuild injection skipped: {problem}"
    }
    assert broken.stderr == (
        f"memoryd: rebuild injection skipped: {problem.replace('; hint: ', chr(10) + '  hint: ')}\n"
    )
    again = run_cli("context", "--rebuild", "--hook", "--json", input=event)
    assert (again.returncode, again.stdout) == (0, "")  # told once per session
