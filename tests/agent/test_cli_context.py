from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from memoryd.agent.remember import Request, remember
from memoryd.app import App
from memoryd.commands.context import HOOK_EVENT_HINT
from tests.agent.conftest import Setup
from tests.helpers import run_cli

FTS_BODY = "\n".join(
    [
        "实测 unicode61 把「部署脚本用」当成一个词条。",
        "trigram 要求查询至少三个字符，两字词全部漏掉。",
        "所以在代码里切 CJK 二元组，拉丁字母保持整词。",
    ]
)


def fill(setup: Setup) -> None:
    """Chinese and English memories in both roots (written in-process: context is under test)."""
    app = App(cwd=setup.repo)
    for request in [
        Request(kind="rule", summary="Never commit secrets", scope="global"),
        Request(kind="rule", summary="部署只用 pnpm"),
        Request(kind="pitfall", summary="FTS5 分词漏掉两字中文词", id="pitfalls/fts5",
                load_when=("分词", "FTS5"), body=FTS_BODY),
        Request(kind="fact", summary="The bastion host deploys staging", load_when=("deploy",),
                body="Use ssh -J bastion.\nOnly on weekdays."),
        Request(kind="preference", summary="Prefer tabs in Go files", scope="global"),
    ]:  # fmt: skip
        remember(app, request)


def test_context_layers_rules_outline_and_hits(setup: Setup) -> None:
    fill(setup)
    done = run_cli("context", "分词", "FTS5", cwd=setup.repo)
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert text.startswith(
        "<memory>\n## Iron rules (always follow; global first, then this project)\n"
    )
    assert text.index(
        "- Never commit secrets (`rules/never-commit-secrets`) [global]"
    ) < text.index("- 部署只用 pnpm (`rules/")
    outline = text.split("## Memory outline", 1)[1].split("## Relevant memories", 1)[0]
    assert f"### global memory ({setup.global_root})" in outline
    assert f"### project memory ({setup.project})" in outline
    assert "- pitfalls/ (1): Non-obvious traps and their root causes\n" in outline
    assert "- 分词 → `pitfalls/fts5`\n" in outline
    assert "- deploy → `facts/the-bastion-host-deploys-staging`\n" in outline
    relevant = text.split("## Relevant memories", 1)[1]
    assert relevant.startswith(
        " (best recall hits for this prompt)\n### pitfalls/fts5 (project pitfall): FTS5 分词漏掉两字中文词\n"
    )
    assert FTS_BODY in relevant
    assert "bastion" not in relevant
    assert text.endswith("</memory>\n")
    assert run_cli("context", "分词", "FTS5", cwd=setup.repo).stdout == text  # deterministic


def test_context_budget_cuts_bodies_at_a_line_with_a_marker(setup: Setup) -> None:
    fill(setup)
    first_line = FTS_BODY.split("\n")[0]
    done = run_cli(
        "context", "分词", "--max-chars", str(len(first_line) + 5), "--json", cwd=setup.repo
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["cut"] is True
    assert data["entries"] == [
        {"id": "pitfalls/fts5", "scope": "project", "kind": "pitfall",
         "summary": "FTS5 分词漏掉两字中文词", "cut": True},
    ]  # fmt: skip
    assert (
        f"{first_line}\n[… cut: memory_recall or memoryd recall pitfalls/fts5 has the rest]\n"
        in data["text"]
    )
    assert "trigram" not in data["text"].split("## Relevant memories")[1]
    few = run_cli("context", "deploy bastion 分词", "--max-entries", "1", "--json", cwd=setup.repo)
    assert len(json.loads(few.stdout)["entries"]) == 1


def test_context_without_query_has_rules_and_outline_only(setup: Setup) -> None:
    fill(setup)
    done = run_cli("context", cwd=setup.repo)
    assert done.returncode == 0, done.stderr
    assert "## Iron rules" in done.stdout and "## Memory outline" in done.stdout
    assert "## Relevant memories" not in done.stdout
    bad = run_cli("context", "x", "--max-chars", "-1", cwd=setup.repo)
    assert bad.returncode == 2
    assert (
        bad.stderr
        == "memoryd: error: --max-chars must not be negative, got -1\n  hint: --max-chars 0 or more\n"
    )


def test_context_reads_a_claude_code_hook_event(setup: Setup, tmp_path: object) -> None:
    fill(setup)
    event = json.dumps({"session_id": "s", "hook_event_name": "UserPromptSubmit",
                        "cwd": str(setup.repo), "prompt": "why does FTS5 miss 分词?"})  # fmt: skip
    done = run_cli("context", "--hook", input=event)  # run from elsewhere: cwd comes from the event
    assert done.returncode == 0, done.stderr
    assert "### pitfalls/fts5 (project pitfall)" in done.stdout
    assert "- 部署只用 pnpm" in done.stdout
    other = event.replace('"session_id": "s"', '"session_id": "t"')  # s holds the block now
    structured = run_cli("context", "--hook", "--json", input=other)
    assert structured.returncode == 0, structured.stderr
    answer = json.loads(structured.stdout)
    assert list(answer) == ["hookSpecificOutput"]
    assert answer["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert answer["hookSpecificOutput"]["additionalContext"] == done.stdout


@pytest.mark.parametrize(
    ("stdin", "reason"),
    [
        ("not json", "--hook expects the hook's JSON event on stdin: Expecting value: line 1 column 1 (char 0)"),
        ('["a list"]', "--hook expects a JSON object on stdin, got list"),
        ('{"prompt": "部署', "--hook expects the hook's JSON event on stdin: Unterminated string"),
    ],
)
def test_a_malformed_hook_event_never_blocks_the_prompt(setup: Setup, stdin: str, reason: str) -> None:
    """UserPromptSubmit exit 2 throws the user's prompt away: inject nothing, exit 0."""
    plain = run_cli("context", "--hook", input=stdin, cwd=setup.repo)
    assert (plain.returncode, plain.stdout) == (0, "")
    assert plain.stderr.startswith(f"memoryd: context --hook injected nothing: {reason}")
    structured = run_cli("context", "--hook", "--json", input=stdin, cwd=setup.repo)
    assert structured.returncode == 0
    assert structured.stderr == plain.stderr
    told = json.loads(structured.stdout)["systemMessage"]  # shown to the user, one line
    assert told.startswith(f"memoryd: context --hook injected nothing: {reason}")
    assert "\n" not in told and told.endswith("; hint: " + HOOK_EVENT_HINT)


def test_a_broken_config_never_blocks_the_prompt(setup: Setup) -> None:
    fill(setup)
    config = Path(os.environ["MEMORYD_HOME"]) / "config.yaml"
    config.write_text("roots: [unclosed\n")
    event = json.dumps({"hook_event_name": "UserPromptSubmit", "cwd": str(setup.repo), "prompt": "FTS5"})
    done = run_cli("context", "--hook", "--json", input=event)
    assert done.returncode == 0
    assert "<memory>" not in done.stdout and "systemMessage" in done.stdout
    assert done.stderr.startswith("memoryd: context --hook injected nothing: ")
    assert "config.yaml" in done.stderr
    plain = run_cli("context", "FTS5", cwd=setup.repo)  # without --hook the error still stops it
    assert plain.returncode == 1 and "config.yaml" in plain.stderr


def test_a_session_start_event_gets_rules_and_outline(setup: Setup) -> None:
    fill(setup)
    for source in ("startup", "resume", "clear", "compact"):
        event = json.dumps({"hook_event_name": "SessionStart", "source": source, "cwd": str(setup.repo)})
        done = run_cli("context", "--hook", "--json", input=event)
        assert done.returncode == 0, done.stderr
        out = json.loads(done.stdout)["hookSpecificOutput"]
        assert out["hookEventName"] == "SessionStart"
        assert "- 部署只用 pnpm" in out["additionalContext"]
        assert "## Memory outline" in out["additionalContext"]
        assert "## Relevant memories" not in out["additionalContext"]


def test_a_hand_written_memory_reaches_the_block_without_a_compile(setup: Setup) -> None:
    fill(setup)
    (setup.project / "rules" / "by-hand.md").write_text(
        "---\nkind: rule\nsummary: 手写的铁规则 stays\nload_when: [手写]\n---\n正文\n"
    )
    done = run_cli("context", "手写", cwd=setup.repo)
    assert done.returncode == 0, done.stderr
    assert "- 手写的铁规则 stays (`rules/by-hand`) [project]" in done.stdout
    assert "- 手写 → `rules/by-hand`" in done.stdout
    (setup.project / "rules" / "by-hand.md").unlink()
    again = run_cli("context", "手写", cwd=setup.repo)
    assert "by-hand" not in again.stdout


def test_context_opens_the_index_once(setup: Setup, monkeypatch: pytest.MonkeyPatch) -> None:
    from memoryd.agent.context import gather
    from memoryd.index import schema

    fill(setup)
    opened: list[object] = []
    connect = schema.connect

    def counting(*args: Any, **kwargs: Any) -> Any:
        opened.append(args[0])
        return connect(*args, **kwargs)

    monkeypatch.setattr(schema, "connect", counting)
    block = gather(App(cwd=setup.repo), "deploy staging")
    assert "bastion" in json.dumps(block, default=str, ensure_ascii=False)
    assert len(opened) == 1  # each open runs a whole-database check: once is enough


def test_the_context_block_never_explains_its_hits(
    setup: Setup, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The block an agent gets each turn shows the hits' bodies: their reasons (matched
    terms, snippet) are never worked out for it (a sixth of a recall's instructions)."""
    from memoryd.agent.context import gather
    from memoryd.index import search, snippet

    fill(setup)
    explained: list[str] = []
    explain = snippet.explain  # the function memoryd.index.search imported as its explain

    def counting(forms: Any, row: Any, marks: Any) -> Any:
        explained.append(row.id)
        return explain(forms, row, marks)

    monkeypatch.setattr(search, "explain", counting)
    block = gather(App(cwd=setup.repo), "deploy staging")
    assert "Use ssh -J bastion." in json.dumps(block, default=str, ensure_ascii=False)
    assert explained == []


def test_a_prompt_after_double_dash_is_data_never_an_option(setup: Setup) -> None:
    """The OpenCode plugin runs `memoryd context -- PROMPT`: a prompt '-h' is a query."""
    fill(setup)
    for prompt in ("-h", "--max-chars=0", "--hook"):
        done = run_cli("context", "--", prompt, cwd=setup.repo)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("<memory>\n## Iron rules") and "usage:" not in done.stdout
    helped = run_cli("context", "-h", cwd=setup.repo)  # without '--' it is the option
    assert helped.stdout.startswith("usage: memoryd context")


def test_the_current_goal_comes_with_the_block_when_filled_in(setup: Setup) -> None:
    fill(setup)
    assert "## Current goal" not in run_cli("context", cwd=setup.repo).stdout  # the template
    root_md = setup.project / "ROOT.md"
    text = root_md.read_text(encoding="utf-8")
    placeholder = text.split("## Current goal\n\n", 1)[1].split("\n", 1)[0]
    root_md.write_text(text.replace(placeholder, "Ship 同步 2.0 by March.\nKeep recall fast."))
    done = run_cli("context", cwd=setup.repo)
    assert done.returncode == 0, done.stderr
    assert (
        f"\n## Current goal\n### project ({setup.project})\nShip 同步 2.0 by March.\n"
        "Keep recall fast.\n\n## Memory outline" in done.stdout
    )


def test_iron_rules_over_the_total_are_announced_and_inspect_reports_them(setup: Setup) -> None:
    app = App(cwd=setup.repo)
    for i in range(120):
        remember(app, Request(kind="rule", scope="global", force=True,
                              summary=f"Iron rule {i:03} that every agent must follow, written out"))  # fmt: skip
    done = run_cli("context", "--json", cwd=setup.repo)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert len(data["text"]) <= 8000
    left_out = data["rules_left_out"]
    assert left_out > 0
    assert (
        f"[… {left_out} iron rule(s) left out: over injection.max_total_chars (8000); "
        f"all are in {setup.global_root}/ROOT.md]" in data["text"]
    )
    inspected = run_cli("inspect", cwd=setup.repo)
    assert inspected.returncode == 1
    assert (
        f"{setup.global_root}/ROOT.md: {left_out} of 120 iron rules do not fit in "
        "injection.max_total_chars (8000 characters): memoryd context leaves them out of every "
        "prompt\n  fix: merge or shorten iron rules (in rules/), or raise "
        "injection.max_total_chars in config.yaml (Claude Code stops inlining a hook's output "
        "above 10000)"
    ) in inspected.stdout


def in_deleted_folder(folder: Path, *args: str, stdin: str = "", pwd: bool = True) -> Any:
    """A real ``memoryd ARGS`` whose working folder was deleted under it (a removed
    worktree): the shell cds in, removes the folder, then execs memoryd."""
    import shlex
    import subprocess
    import sys

    folder.mkdir(parents=True)
    command = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "memoryd", *args])
    unset = "" if pwd else "unset PWD; "
    script = f'cd {shlex.quote(str(folder))} && rmdir "$PWD" && export PWD && {unset}exec {command}'
    return subprocess.run(
        ["sh", "-c", script], input=stdin, capture_output=True, text=True, timeout=60, check=False
    )


def test_a_deleted_working_folder_still_gets_its_projects_block(setup: Setup) -> None:
    """A session whose folder was removed (git worktree remove) still gets the block of the
    project the folder was in, not a traceback (os.getcwd() fails there)."""
    fill(setup)
    gone = setup.repo / "feature"
    event = json.dumps({"hook_event_name": "UserPromptSubmit", "cwd": str(gone), "prompt": "FTS5"})
    done = in_deleted_folder(gone, "context", "--hook", "--json", stdin=event)
    assert (done.returncode, done.stderr) == (0, "")
    assert "### pitfalls/fts5 (project pitfall)" in json.loads(done.stdout)["hookSpecificOutput"][
        "additionalContext"
    ]
    recalled = in_deleted_folder(setup.repo / "other", "recall", "bastion")
    assert recalled.returncode == 0, recalled.stderr
    assert "facts/the-bastion-host-deploys-staging" in recalled.stdout


def test_a_deleted_working_folder_with_no_name_left_is_one_clear_error(setup: Setup) -> None:
    done = in_deleted_folder(setup.repo / "gone", "recall", "--json", "bastion", pwd=False)
    assert done.returncode == 1
    assert done.stderr == (
        "memoryd: error: the current folder no longer exists (it was deleted or moved)\n"
        "  hint: cd to an existing folder and run the command again\n"
    )
    assert json.loads(done.stdout) == {
        "error": "the current folder no longer exists (it was deleted or moved)",
        "hint": "cd to an existing folder and run the command again",
        "exit": 1,
    }


def test_a_broken_config_is_told_to_the_user_once_per_session(setup: Setup) -> None:
    """Claude Code shows a hook's stderr only in its transcript view when the hook exits 0:
    the reason is the answer's systemMessage (shown to the user), once per session."""
    config = Path(os.environ["MEMORYD_HOME"]) / "config.yaml"
    good = config.read_text()
    config.write_text(good + "serach: 1\n")

    def hook(session: str, event: str = "UserPromptSubmit") -> Any:
        data = {"session_id": session, "hook_event_name": event, "cwd": str(setup.repo),
                "prompt": "FTS5"}  # fmt: skip
        done = run_cli("context", "--hook", "--json", input=json.dumps(data))
        assert done.returncode == 0
        assert done.stderr.startswith("memoryd: context --hook injected nothing: ")
        return json.loads(done.stdout) if done.stdout else None

    told = {"systemMessage": (
        f"memoryd: context --hook injected nothing: {config}: serach: unknown key (did you "
        f"mean 'search'?); hint: edit {config} (see docs/config.md)"
    )}  # fmt: skip
    assert hook("s1", "SessionStart") == told
    assert hook("s1") is None  # the same session, the same problem: stderr alone
    assert hook("s2") == told  # another session is told too
    config.write_text(good)
    assert "hookSpecificOutput" in hook_ok(setup, "s1")
    config.write_text(good + "serach: 1\n")
    assert hook("s1") == told  # gone and back: told again


def hook_ok(setup: Setup, session: str) -> dict[str, Any]:
    data = {"session_id": session, "hook_event_name": "UserPromptSubmit", "cwd": str(setup.repo)}
    done = run_cli("context", "--hook", "--json", input=json.dumps(data))
    assert (done.returncode, done.stderr) == (0, "")
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def test_a_root_that_is_not_there_is_told_once_and_the_block_still_comes(setup: Setup) -> None:
    """Hooks set up before 'memoryd init' (or a root moved away) injected an empty block on
    every prompt and said nothing, where 'memoryd recall' calls the same thing an error."""
    fill(setup)
    moved = setup.global_root.with_name("moved-away")
    setup.global_root.rename(moved)
    config = Path(os.environ["MEMORYD_HOME"]) / "config.yaml"
    problem = (
        f"the global root {setup.global_root} does not exist, so nothing of it was injected; "
        f"hint: mount or move it back, create it with 'memoryd init', or correct or remove its "
        f"path in {config}"
    )
    event = json.dumps({"session_id": "s1", "hook_event_name": "UserPromptSubmit",
                        "cwd": str(setup.repo), "prompt": "FTS5"})  # fmt: skip
    first = run_cli("context", "--hook", "--json", input=event)
    assert first.returncode == 0
    answer = json.loads(first.stdout)
    assert answer["systemMessage"] == f"memoryd: context --hook: {problem}"
    assert "### pitfalls/fts5 (project pitfall)" in answer["hookSpecificOutput"]["additionalContext"]
    assert first.stderr == (
        f"memoryd: context --hook: the global root {setup.global_root} does not exist, so nothing "
        "of it was injected\n"
        f"  hint: mount or move it back, create it with 'memoryd init', or correct or remove "
        f"its path in {config}\n"
    )
    again = run_cli("context", "--hook", "--json", input=event)
    assert list(json.loads(again.stdout)) == ["hookSpecificOutput"]  # told once
    moved.rename(setup.global_root)
    assert list(hook_ok(setup, "s1")) == ["hookSpecificOutput"]


def test_a_prompt_with_a_pasted_log_searches_its_opening_and_closing_words(setup: Setup) -> None:
    """Every distinct term of a prompt was one more OR branch of recall's query: a pasted
    290 KB log kept the hook about 3 s (580 KB: 9 s, by Claude Code's 10 s hook timeout)."""
    fill(setup)
    log = "\n".join(f"2026-12-01 ERROR worker{i} exited code={i} trace=t{i * 7919}" for i in range(3000))
    prompt = f"Deploy failed again, log below.\n{log}\nwhy does 分词 miss short words?"
    event = json.dumps({"hook_event_name": "UserPromptSubmit", "cwd": str(setup.repo), "prompt": prompt})
    done = run_cli("context", "--hook", input=event)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    # the question after the log and the request before it are both searched
    assert "### pitfalls/fts5 (project pitfall): FTS5 分词漏掉两字中文词\n" in done.stdout
    assert "### facts/the-bastion-host-deploys-staging (project fact)" in done.stdout
    assert done.stdout.endswith(
        "\n\n[… recall searched 256 of the prompt's 9014 search terms (its first and last): "
        "memory_recall with a few rare words finds the rest]\n</memory>\n"
    )
    plain = run_cli("context", "--json", prompt, cwd=setup.repo)
    assert json.loads(plain.stdout)["query_terms_left_out"] == 9014 - 256  # 'does' is a stop word (issue 40)


def test_a_prompt_of_few_terms_is_searched_whole_and_says_nothing_of_it(setup: Setup) -> None:
    fill(setup)
    done = run_cli("context", "--json", "分词", "deploy", cwd=setup.repo)
    answer = json.loads(done.stdout)
    assert answer["query_terms_left_out"] == 0 and "recall searched" not in answer["text"]


def test_a_hook_tells_a_cache_folder_linked_to_an_unmounted_drive_and_exits_0(
    setup: Setup, tmp_path: Path
) -> None:
    """A failure that was not memoryd's own error made 'context --hook' exit 1 (a hook error
    in Claude Code on every prompt) with 'internal error: FileExistsError ... please report
    it' for a cache folder linked to a drive that is not mounted."""
    cache = App(cwd=setup.repo).paths.cache_dir
    shutil.rmtree(cache, ignore_errors=True)
    drive = tmp_path / "usb" / "cache"
    cache.symlink_to(drive)
    said = (
        f"{cache} is a link to {drive}, which does not exist: the command stopped before it "
        f"finished; hint: mount or create {drive} (or remove the link), then run it again"
    )
    event = json.dumps({"session_id": "s1", "cwd": str(setup.repo), "prompt": "deploy"})
    done = run_cli("context", "--hook", "--json", input=event)
    assert done.returncode == 0
    assert json.loads(done.stdout) == {
        "systemMessage": f"memoryd: context --hook injected nothing: {said}"
    }
    recall = run_cli("recall", "deploy", cwd=setup.repo)
    assert recall.returncode == 1
    assert recall.stderr == "memoryd: error: " + said.replace("; hint: ", "\n  hint: ") + "\n"
