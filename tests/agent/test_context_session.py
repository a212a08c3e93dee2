"""One session's hooks: the rules and the outline once, each memory once, what is new after.

Claude Code keeps every hook's block in the session's history, so the rules and the outline
in every prompt's block piled up (three prompts carried 2, 3 and 4 copies of them).
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import pytest

from memoryd.agent import injected
from memoryd.app import App
from memoryd.injection import RootBlocks, Shown
from memoryd.injection_session import Given, block_for, memory_key, shown_digest
from tests.agent.conftest import Setup
from tests.agent.test_cli_context import fill
from tests.helpers import run_cli

RULE = "- 部署只用 pnpm (`rules/部署只用-pnpm`) [project]"
PITFALL = "### pitfalls/fts5 (project pitfall)"


def hook(setup: Setup, event: str, session: str = "s1", prompt: str = "", **more: Any) -> str:
    """One hook run, as Claude Code makes it: what it added to the context."""
    data = {"session_id": session, "hook_event_name": event, "cwd": str(setup.repo), **more}
    if prompt:
        data["prompt"] = prompt
    done = run_cli("context", "--hook", "--json", input=json.dumps(data))
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)["hookSpecificOutput"]
    assert answer["hookEventName"] == event
    text: str = answer["additionalContext"]
    return text


def test_a_session_gets_the_frame_once_and_each_memory_once(setup: Setup) -> None:
    fill(setup)
    start = hook(setup, "SessionStart", source="startup")
    assert RULE in start and "## Memory outline" in start and PITFALL not in start
    first = hook(setup, "UserPromptSubmit", prompt="why does FTS5 miss 分词?")
    assert first.startswith("<memory>\n## Relevant memories (best recall hits for this prompt)\n")
    assert PITFALL in first and "## Iron rules" not in first and "## Memory outline" not in first
    assert hook(setup, "UserPromptSubmit", prompt="FTS5 分词 again") == ""
    # a changed memory is shown again; the others are not
    pitfall = setup.project / "pitfalls" / "fts5.md"
    pitfall.write_text(pitfall.read_text() + "\nAlso: trigram needs three characters.\n")
    changed = hook(setup, "UserPromptSubmit", prompt="FTS5 分词 once more")
    assert PITFALL in changed and "trigram needs three characters" in changed
    assert "## Iron rules" not in changed
    # a new iron rule brings the frame back, with every rule
    done = run_cli("remember", "--kind", "rule", "--summary", "Never push on Fridays",
                   cwd=setup.repo)  # fmt: skip
    assert done.returncode == 0, done.stderr
    ruled = hook(setup, "UserPromptSubmit", prompt="what about deploys on friday")
    assert RULE in ruled and "Never push on Fridays" in ruled and "## Memory outline" in ruled
    assert hook(setup, "UserPromptSubmit", prompt="what about deploys on friday") == ""


@pytest.mark.parametrize("source", ["compact", "clear", "resume", "startup"])
def test_every_start_of_a_context_gives_the_frame_and_forgets_what_was_shown(
    setup: Setup, source: str
) -> None:
    fill(setup)
    hook(setup, "SessionStart", source="startup")
    assert PITFALL in hook(setup, "UserPromptSubmit", prompt="FTS5 分词")
    again = hook(setup, "SessionStart", source=source)
    assert RULE in again and "## Memory outline" in again
    assert PITFALL in hook(setup, "UserPromptSubmit", prompt="FTS5 分词")


def test_a_prompt_without_a_session_start_or_a_session_id_gets_the_whole_block(
    setup: Setup,
) -> None:
    """A session whose SessionStart hook failed or is not configured (or a harness that sends
    no session id, as the OpenCode plugin does) must still get the rules."""
    fill(setup)
    first = hook(setup, "UserPromptSubmit", session="no-start", prompt="FTS5 分词")
    assert RULE in first and PITFALL in first
    assert hook(setup, "UserPromptSubmit", session="no-start", prompt="FTS5 分词") == ""
    event = json.dumps({"cwd": str(setup.repo), "prompt": "FTS5 分词"})
    for _ in range(2):
        done = run_cli("context", "--hook", input=event)
        assert RULE in done.stdout and PITFALL in done.stdout


def test_two_sessions_are_kept_apart_and_stats_count_each_hook(setup: Setup) -> None:
    fill(setup)
    start = hook(setup, "SessionStart", session="a", source="startup")
    first = hook(setup, "UserPromptSubmit", session="a", prompt="FTS5 分词")
    assert hook(setup, "UserPromptSubmit", session="a", prompt="FTS5 分词") == ""
    other = hook(setup, "UserPromptSubmit", session="b", prompt="FTS5 分词")
    assert PITFALL in other and RULE in other
    done = run_cli("context", "--stats", "--json")
    assert done.returncode == 0, done.stderr
    stats = json.loads(done.stdout)
    rows = {row["session"]: (row["starts"], row["prompts"]) for row in stats["sessions"]}
    assert rows == {"a": ([len(start)], [len(first), 0]), "b": ([], [len(other)])}
    assert stats["per_start"] == len(start)
    assert stats["per_prompt"] == round((len(first) + len(other)) / 3)
    assert stats["prompts_with_nothing_new"] == 1
    text = run_cli("context", "--stats")
    assert text.stdout.splitlines()[0] == (
        f"2 session(s): 1 session start(s), {len(start)} characters each on average; "
        f"3 prompt(s), {stats['per_prompt']} characters each on average (1 had nothing new)"
    )
    assert f"  a: starts {len(start)}; prompts {len(first)}, 0" in text.stdout.splitlines()
    assert f"  b: starts -; prompts {len(other)}" in text.stdout.splitlines()


def test_stats_take_no_query_and_say_so(setup: Setup) -> None:
    done = run_cli("context", "--stats", "deploy")
    assert (done.returncode, done.stderr) == (
        2, "memoryd: error: --stats takes no query, --hook or --rebuild\n  hint: drop them\n"
    )  # fmt: skip
    empty = run_cli("context", "--stats")
    assert empty.stdout == (
        "0 session(s): 0 session start(s), 0 characters each on average; 0 prompt(s), "
        "0 characters each on average (0 had nothing new)\n"
    )


def test_the_records_stay_bounded_and_expire(
    setup: Setup, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(injected, "MAX_SESSIONS", 3)
    monkeypatch.setattr(injected, "MAX_SHOWN", 2)
    monkeypatch.setattr(injected, "MAX_SIZES", 2)
    app = App(cwd=setup.repo)
    folder = app.paths.state_dir / injected.FOLDER
    for i in range(5):
        record = injected.Record(f"s{i}")
        for n in range(4):
            record.add("UserPromptSubmit", _block({f"project:m{i}-{n}": "d"}, n))
        injected.save(folder, record)
        if i == 0:  # a week and a day untouched: gone at the next write
            old = time.time() - 8 * 24 * 3600
            os.utime(next(folder.glob("*.json")), (old, old))
    kept = injected.records(app)
    assert [r.session for r in kept] == ["s4", "s3", "s2"]
    assert kept[0].shown == {"project:m4-2": "d", "project:m4-3": "d"}
    assert kept[0].prompts == [2, 3]
    assert injected.load(folder, "s0") == injected.Record("s0")  # forgotten: the whole block


def test_an_unreadable_record_gives_the_whole_block(setup: Setup) -> None:
    fill(setup)
    hook(setup, "SessionStart", source="startup")
    folder = App(cwd=setup.repo).paths.state_dir / injected.FOLDER
    (record,) = folder.glob("*.json")
    record.write_text("{not json")
    assert RULE in hook(setup, "UserPromptSubmit", prompt="FTS5 分词")


def _block(shown: dict[str, str], size: int) -> Any:
    from memoryd.injection import Block

    return Block("x" * size, framed=False, shown=shown)


VIEWS = [RootBlocks("project", "/p", {"rules": ["- Use pnpm (`rules/pnpm`)"]})]
HITS = [Shown("facts/a", "project", "fact", "A", "alpha body"),
        Shown("facts/b", "project", "fact", "B", "beta body")]  # fmt: skip


def test_build_leaves_out_what_the_session_holds() -> None:
    whole = block_for(VIEWS, HITS, 2000, 5, 1000)
    assert whole.framed and "## Iron rules" in whole.text
    assert whole.shown == {memory_key(h): shown_digest(h) for h in HITS}
    given = Given(whole.frame, whole.shown)
    assert block_for(VIEWS, HITS, 2000, 5, 1000, given=given).text == ""
    changed = [HITS[0], Shown("facts/b", "project", "fact", "B", "beta body, changed")]
    news = block_for(VIEWS, changed, 2000, 5, 1000, given=given)
    assert news.text == (
        "<memory>\n## Relevant memories (best recall hits for this prompt)\n"
        "### facts/b (project fact): B\nbeta body, changed\n</memory>\n"
    )
    assert not news.framed and news.shown == {"project:facts/b": shown_digest(changed[1])}
    ruled = [RootBlocks("project", "/p", {"rules": ["- Use pnpm (`rules/pnpm`)", "- New"]})]
    assert block_for(ruled, HITS, 2000, 5, 1000, given=given).framed


def test_a_held_memory_leaves_room_for_the_next_best() -> None:
    given = Given(
        block_for(VIEWS, [], 2000, 5, 1000).frame, {memory_key(HITS[0]): shown_digest(HITS[0])}
    )
    news = block_for(VIEWS, HITS, 2000, 1, 1000, given=given)
    assert [e["id"] for e in news.entries] == ["facts/b"]
