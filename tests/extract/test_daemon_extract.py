"""The real daemon extracts settled sessions, reports each, and outlives a failing extractor."""

from __future__ import annotations

import json
from pathlib import Path

from memoryd.app import App
from memoryd.daemon.runner import Daemon
from tests.daemon.harness import DaemonProcess, wait_until
from tests.extract.agents import ClaudeSession
from tests.extract.conftest import TURNS, World, claude_turns
from tests.helpers import run_cli


def ledger_last(world: World, session: ClaudeSession) -> dict[str, object] | None:
    try:
        entry = world.ledger().get(f"claude:{session.session}")
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    return None if entry is None else entry.get("last")  # type: ignore[return-value]


def recalled(world: World, query: str) -> list[str]:
    done = run_cli("recall", "--json", query, cwd=world.repo)
    return [h["id"] for h in json.loads(done.stdout)] if done.returncode == 0 else []


def test_the_daemon_extracts_settled_sessions_and_survives_a_failing_command(
    world: World, tmp_path: Path
) -> None:
    world.answer.write_text(json.dumps({"memories": [
        {"kind": "pitfall", "summary": "The test DB needs TZ=UTC or dates shift by a day"}]}))  # fmt: skip
    world.configure(command=world_command(world), settle_ms=400, min_turns=4, min_chars=40)
    daemon = DaemonProcess(tmp_path)
    try:
        daemon.wait_ready(world.app())
        # made after the daemon started, maybe before its watch began: found either way
        assert not world.projects.exists()
        session = ClaudeSession(world.projects, world.repo)
        claude_turns(session, TURNS[:1])
        assert wait_until(lambda: ledger_last(world, session) is not None), daemon.output()
        last = ledger_last(world, session)
        assert (
            last is not None
            and last["reason"] == "too few turns: 1 of the 4 extract.min_turns asks"
        )
        claude_turns(session, TURNS[1:])
        target = (
            world.repo
            / ".memory"
            / "pitfalls"
            / "the-test-db-needs-tz-utc-or-dates-shift-by-a-day.md"
        )
        assert wait_until(target.is_file), daemon.output()
        # the daemon indexes what it wrote a moment later (recall trusts it meanwhile)
        assert wait_until(
            lambda: (
                recalled(world, "TZ UTC")[:1]
                == ["pitfalls/the-test-db-needs-tz-utc-or-dates-shift-by-a-day"]
            )
        ), daemon.output()

        world.mode.write_text("fail")
        broken = ClaudeSession(world.projects, world.repo)
        claude_turns(broken, TURNS)
        assert wait_until(lambda: (ledger_last(world, broken) or {}).get("outcome") == "failed",
                          ), daemon.output()  # fmt: skip
        assert daemon.proc.poll() is None
        status = run_cli("status")
        assert status.returncode == 0, status.stderr
        assert "extraction: on, extract.command: " in status.stdout
        assert f"  claude session {broken.session} at " in status.stdout
        assert ": failed: the command failed with exit code 3\n" in status.stdout
        assert "    stderr: error: model quota exceeded for claude-haiku-4-5" in status.stdout
        world.mode.write_text("answer")
        world.answer.write_text(json.dumps({"memories": [
            {"kind": "fact", "summary": "Releases are cut on Thursdays"}]}))  # fmt: skip
        claude_turns(broken, [("when do we release?", "Thursdays, after the freeze lifts.")])
        fact = world.repo / ".memory" / "facts" / "releases-are-cut-on-thursdays.md"
        assert wait_until(fact.is_file), daemon.output()
    finally:
        assert daemon.terminate() == 0, daemon.output()
    assert "Traceback" not in daemon.output()


def world_command(world: World) -> str:
    from tests.extract.agents import extractor_command

    return extractor_command(world.log.parent)


def test_without_a_command_the_daemon_watches_no_transcript(world: World) -> None:
    world.configure(settle_ms=400)
    daemon = Daemon(App())
    daemon.start()
    try:
        assert daemon.extraction.tracker is None
        assert daemon.extraction._observer is None
        status = run_cli("status")
        assert status.returncode == 0, status.stderr
        assert status.stdout.endswith(
            "\nextraction: off: no extract.command is configured, so nothing is extracted "
            "(set extract.command in config.yaml)\n"
        )
    finally:
        daemon.stop()


def test_stopping_the_daemon_ends_a_running_extractor_at_once(world: World) -> None:
    import time

    world.configure(command=world_command(world), settle_ms=200, min_turns=4, min_chars=40)
    world.mode.write_text("sleep")  # the command would sleep 30 s
    world.projects.mkdir(parents=True)
    daemon = Daemon(App())
    daemon.start()
    try:
        session = ClaudeSession(world.projects, world.repo)
        claude_turns(session, TURNS)
        assert wait_until(lambda: bool(list(world.log.iterdir())))
    finally:
        started = time.monotonic()
        daemon.stop()
        took = time.monotonic() - started
    assert took < 10
    last = ledger_last(world, session)
    assert last is not None and last["outcome"] == "failed"
    assert last["reason"] == "the daemon stopped while the command ran"
