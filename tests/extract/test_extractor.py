"""Extraction end to end without the daemon: real transcripts, a fake extractor command."""

from __future__ import annotations

import json
import time

from memoryd.extract.extractor import extractor_dir
from memoryd.extract.prompt import PROMPT
from memoryd.extract.tracker import DB_BUCKET, JSON_BUCKET, Tracker
from memoryd.extract_ledger import NO_COMMAND
from memoryd.memory import parse
from tests.extract.agents import ClaudeSession, OpenCodeDB, OpenCodeJSON, extractor_command
from tests.extract.conftest import SECRET, TURNS, World, claude_turns
from tests.helpers import git, run_cli


def settle_claude(world: World, tracker: Tracker, session: ClaudeSession) -> float | None:
    bucket = tracker.touched(session.file)
    assert bucket == f"claude:{session.file}"
    return tracker.settle(bucket)


def test_a_settled_claude_session_is_extracted_through_the_remember_gate(world: World) -> None:
    session = ClaudeSession(world.projects, world.repo)
    claude_turns(session, TURNS)
    tracker = world.tracker()
    assert settle_claude(world, tracker, session) is None

    [document] = world.calls()
    assert document.startswith(PROMPT.format(max_memories=8))
    assert "- git branch names, file paths, line numbers" in document
    assert (
        f"## The conversation (the new part of claude session {session.session} in {world.repo})"
        in document
    )
    assert "### user\n部署脚本为什么用 pnpm 而不是 npm?\n\n### assistant\n因为 lockfile" in document
    assert "TOOL OUTPUT 42" not in document and "hmm" not in document

    project = world.repo / ".memory"  # created on this first project write
    written = sorted(p.relative_to(project).as_posix() for p in project.rglob("*.md")
                     if p.name not in ("ROOT.md", "index.md"))  # fmt: skip
    # the rule became a proposal; nothing went into rules/
    assert written == [
        "pitfalls/部署脚本用-pnpm-而不是-npm-因为-lockfile-不兼容.md",
        "proposals/never-force-push-to-main.md",
    ]
    pitfall = parse((project / written[0]).read_bytes())
    assert pitfall.meta["load_when"] == ["部署", "pnpm"] and pitfall.kind == "pitfall"
    # where it came from: the session, its agent, the transcript the extraction read
    assert {k: pitfall.meta[k] for k in ("session", "agent", "extracted_from")} == {
        "session": session.session, "agent": "Claude Code",
        "extracted_from": str(session.file),
    }  # fmt: skip
    assert parse((project / written[1]).read_bytes()).kind == "rule-proposal"
    preferences = [
        p for p in (world.global_root / "preferences").glob("*.md") if p.name != "index.md"
    ]
    assert [parse(p.read_bytes()).summary for p in preferences] == ["用中文回答"]
    assert SECRET not in "".join(p.read_text() for p in world.repo.rglob("*.md"))
    assert SECRET not in "".join(p.read_text() for p in world.global_root.rglob("*.md"))

    entry = world.ledger()[f"claude:{session.session}"]
    assert entry["turns_done"] == 4 and entry["cwd"] == str(world.repo)
    last = entry["last"]
    assert isinstance(last, dict)
    assert last["outcome"] == "written"
    assert last["reason"] == "wrote 3 memories; 3 not written (see refused)"
    assert [w.split(":", 1)[0] for w in last["written"]] == ["project", "global", "project"]
    assert last["refused"] == [
        "item 5: kind 'rules' is not one of preference, decision, pitfall, fact, rule, rule-proposal",
        "item 6: kind None is not one of preference, decision, pitfall, fact, rule, rule-proposal",
        "(summary withheld: it looks like it holds a secret): refused as a secret",
    ]
    assert SECRET not in json.dumps(world.ledger())

    # nothing new: no second call; one new turn: only it goes to the command
    assert settle_claude(world, tracker, session) is None
    assert len(world.calls()) == 1
    claude_turns(session, [("One more thing: the CI runs on arm64.", "Noted, arm64 CI.")])
    settle_claude(world, tracker, session)
    second = world.calls()[-1]
    assert "### user\nOne more thing: the CI runs on arm64." in second
    assert "部署脚本为什么" not in second
    last = world.ledger()[f"claude:{session.session}"]["last"]
    assert isinstance(last, dict)
    assert last["reason"] == "nothing written: 3 duplicates, 1 refused as a secret"  # same answer


def test_too_few_turns_too_short_and_still_active_sessions_wait(world: World) -> None:
    session = ClaudeSession(world.projects, world.repo)
    claude_turns(session, TURNS[:3])
    tracker = world.tracker()
    settle_claude(world, tracker, session)
    last = world.ledger()[f"claude:{session.session}"]["last"]
    assert isinstance(last, dict)
    assert (last["outcome"], last["reason"]) == (
        "nothing", "too few turns: 3 of the 4 extract.min_turns asks",
    )  # fmt: skip
    assert world.calls() == []

    world.now[0] = time.time() + 5  # written 5 s ago: 15 s of the 20 s settle left
    claude_turns(session, TURNS[3:])
    wait = settle_claude(world, tracker, session)
    assert wait is not None and 14 < wait <= 15.1
    assert world.calls() == []
    world.now[0] = time.time() + 3600
    assert tracker.settle(f"claude:{session.file}") is None
    assert len(world.calls()) == 1

    short = ClaudeSession(world.projects, world.repo)
    claude_turns(short, [("a", "b")] * 4)
    settle_claude(world, tracker, short)
    last = world.ledger()[f"claude:{short.session}"]["last"]
    assert isinstance(last, dict)
    assert last["reason"] == "too short: 8 new characters, extract.min_chars is 40"


def test_no_command_a_failing_command_and_a_bad_answer_are_told_apart(world: World) -> None:
    session = ClaudeSession(world.projects, world.repo)
    claude_turns(session, TURNS)
    world.configure(settle_ms=20000)
    tracker = world.tracker()
    settle_claude(world, tracker, session)
    last = world.ledger()[f"claude:{session.session}"]["last"]
    assert isinstance(last, dict) and last["reason"] == NO_COMMAND and world.calls() == []

    world.configure(command=extractor_command(world.log.parent), min_chars=40)
    world.mode.write_text("fail")
    tracker = world.tracker()
    settle_claude(world, tracker, session)
    entry = world.ledger()[f"claude:{session.session}"]
    last = entry["last"]
    assert isinstance(last, dict)
    assert (last["outcome"], last["reason"]) == ("failed", "the command failed with exit code 3")
    assert last["stderr"] == "warming up\nerror: model quota exceeded for claude-haiku-4-5\n"
    assert entry["turns_done"] == 0  # tried again at the next settled turn

    world.mode.write_text("prose")
    claude_turns(session, [("and another thing", "yes, another thing")])
    settle_claude(world, tracker, session)
    last = world.ledger()[f"claude:{session.session}"]["last"]
    assert isinstance(last, dict) and last["outcome"] == "failed"
    assert last["reason"] == (
        'the command did not answer with {"memories": [...]} JSON; it printed: Sure! I could not '
        "find anything."
    )
    assert len(world.calls()) == 2 and "部署脚本为什么" in world.calls()[-1]  # all 5 turns again

    world.answer.write_text('{"memories": []}')
    world.mode.write_text("answer")
    claude_turns(session, [("what now", "nothing now, all done")])
    settle_claude(world, tracker, session)
    entry = world.ledger()[f"claude:{session.session}"]
    assert entry["last"]["reason"] == "the extractor found nothing worth remembering"  # type: ignore[index]
    assert entry["turns_done"] == 6

    inspect = run_cli("inspect", cwd=world.repo)
    assert (
        f"extraction: on, extract.command: {extractor_command(world.log.parent)}" in inspect.stdout
    )
    assert (
        f"  claude session {session.session} at 2026-12-01T09:00:00+00:00: nothing: the extractor "
        "found nothing worth remembering\n" in inspect.stdout
    )
    status = json.loads(run_cli("status", "--json").stdout)
    assert status["extraction"]["enabled"] is True
    assert status["extraction"]["sessions"][0]["session"] == session.session


def test_a_command_that_hangs_is_stopped(world: World) -> None:
    world.configure(command=extractor_command(world.log.parent), min_chars=40, timeout_s=1)
    world.mode.write_text("sleep")
    session = ClaudeSession(world.projects, world.repo)
    claude_turns(session, TURNS)
    started = time.monotonic()
    settle_claude(world, world.tracker(), session)
    assert time.monotonic() - started < 10
    last = world.ledger()[f"claude:{session.session}"]["last"]
    assert isinstance(last, dict) and last["outcome"] == "failed"
    assert last["reason"] == "the command ran longer than extract.timeout_s (1 s) and was stopped"


def test_opencode_sessions_from_the_database_and_the_json_store(world: World) -> None:
    world.answer.write_text(json.dumps({"memories": [
        {"kind": "decision", "summary": "Deploy with Kamal instead of Capistrano",
         "body": "Kamal ships containers; Capistrano needed Ruby on the hosts."}]}))  # fmt: skip
    tracker = world.tracker()
    db = OpenCodeDB(world.opencode)
    old = db.session(world.repo)
    for prompt, answer in TURNS:
        db.turn(old, prompt, answer)
    tracker.prime()  # first sight: the sessions already there are history, not extracted
    assert world.app().paths.state_dir.joinpath("extract.json").is_file()
    time.sleep(0.01)
    sid = db.session(world.repo)
    for prompt, answer in TURNS:
        db.turn(sid, prompt, answer)
    db.close()
    assert tracker.touched(world.opencode / "opencode.db-wal") == DB_BUCKET
    assert tracker.settle(DB_BUCKET) is None
    assert f"opencode:{old}" not in world.ledger()
    last = world.ledger()[f"opencode:{sid}"]["last"]
    assert isinstance(last, dict) and last["written"] == [
        "project:decisions/deploy-with-kamal-instead-of-capistrano"
    ]
    assert "SYNTHETIC REMINDER" not in world.calls()[-1] and "REASONING" not in world.calls()[-1]

    store = OpenCodeJSON(world.opencode)
    world.answer.write_text(json.dumps({"memories": [
        {"kind": "fact", "summary": "The jump host only opens on weekdays"}]}))  # fmt: skip
    other = world.repo.parent / "other"
    other.mkdir()
    git(other, "init", "-q")
    sid2 = store.session(other)
    for prompt, answer in TURNS:
        store.turn(sid2, prompt, answer)
    for part in (store.storage / "part").rglob("*.json"):
        assert tracker.touched(part) == JSON_BUCKET
    assert tracker.settle(JSON_BUCKET) is None
    assert (other / ".memory" / "facts" / "the-jump-host-only-opens-on-weekdays.md").is_file()


def test_the_extractors_own_sessions_are_never_extracted(world: World) -> None:
    own = extractor_dir(world.app())
    own.mkdir(parents=True, exist_ok=True)
    session = ClaudeSession(world.projects, own)  # `claude -p` run by memoryd leaves this
    claude_turns(session, TURNS)
    tracker = world.tracker()
    assert settle_claude(world, tracker, session) is None
    assert world.calls() == [] and not (world.app().paths.state_dir / "extract.json").exists()


def test_the_mcp_inspect_tool_says_whether_extraction_runs(world: World) -> None:
    from tests.agent.test_mcp import call

    world.configure(settle_ms=20000)
    error, text = call(world.app(), "memory_inspect")
    assert not error
    assert text.endswith(
        "\nextraction: off: no extract.command is configured, so nothing is extracted "
        "(set extract.command in config.yaml)"
    )


def test_all_duplicates_and_a_refused_secret_each_say_so(world: World) -> None:
    world.answer.write_text(json.dumps({"memories": [
        {"kind": "fact", "summary": "Staging deploys run from the bastion host"}]}))  # fmt: skip
    first = ClaudeSession(world.projects, world.repo)
    claude_turns(first, TURNS)
    tracker = world.tracker()
    settle_claude(world, tracker, first)
    second = ClaudeSession(world.projects, world.repo)  # another session says the same again
    claude_turns(second, TURNS)
    settle_claude(world, tracker, second)
    last = world.ledger()[f"claude:{second.session}"]["last"]
    assert isinstance(last, dict) and (last["outcome"], last["reason"]) == (
        "nothing", "every candidate was a duplicate of an existing memory",
    )  # fmt: skip
    assert last["refused"] == [
        "Staging deploys run from the bastion host: refusing to remember: "
        "'facts/staging-deploys-run-from-the-bastion-host' (project) already covers 100% of this "
        "memory's terms"
    ]

    world.answer.write_text(json.dumps({"memories": [
        {"kind": "fact", "summary": f"The live key is {SECRET}"}]}))  # fmt: skip
    third = ClaudeSession(world.projects, world.repo)
    claude_turns(third, TURNS)
    settle_claude(world, tracker, third)
    last = world.ledger()[f"claude:{third.session}"]["last"]
    assert isinstance(last, dict) and (last["outcome"], last["reason"]) == (
        "nothing", "nothing written: 1 refused as a secret",
    )  # fmt: skip
    assert SECRET not in (world.app().paths.state_dir / "extract.json").read_text()
    text = run_cli("inspect", cwd=world.repo).stdout
    assert (
        f"  claude session {third.session} at 2026-12-01T09:00:00+00:00: nothing: nothing written: "
        "1 refused as a secret\n    refused (summary withheld: it looks like it holds a secret): "
        "refused as a secret\n" in text
    )
