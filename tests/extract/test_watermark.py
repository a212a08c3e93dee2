"""The Claude Code watermark: turns written while no watch ran are extracted, old ones never.

Real transcripts, the real daemon (in this process where a test must step in
between its start-up steps, as a subprocess otherwise), real watchdog.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memoryd.app import App
from memoryd.daemon.extracting import JOB_PREFIX
from memoryd.daemon.runner import Daemon
from memoryd.extract.tracker import CLAUDE_MARK, MTIME_SLACK_S, Watch
from tests.daemon.harness import DaemonProcess, daemon_ready, wait_until
from tests.extract.agents import ClaudeSession, OpenCodeDB, extractor_command
from tests.extract.conftest import TURNS, World, claude_turns

BACKUPS = ("where do the nightly backups go?", "To the cold-storage bucket in eu-west-1.")
DAY = 86400.0


def configure(world: World, settle_ms: int = 300) -> None:
    world.configure(command=extractor_command(world.log.parent), settle_ms=settle_ms,
                    min_turns=4, min_chars=40)  # fmt: skip


def ledger_file(world: World) -> dict[str, Any]:
    try:
        data: dict[str, Any] = json.loads(
            (world.app().paths.state_dir / "extract.json").read_text()
        )
    except (FileNotFoundError, json.JSONDecodeError):
        return {"sessions": {}, "marks": {}}
    return data


def entry(world: World, session: ClaudeSession) -> dict[str, Any]:
    found: dict[str, Any] = ledger_file(world)["sessions"].get(f"claude:{session.session}") or {}
    return found


def claude_mark(world: World) -> float | None:
    mark = ledger_file(world)["marks"].get(CLAUDE_MARK)
    return None if mark is None else float(mark)


def aged(session: ClaudeSession, seconds: float) -> float:
    """Make the transcript's last write ``seconds`` old; its mtime."""
    when = time.time() - seconds
    os.utime(session.file, (when, when))
    return when


def armed(daemon: Daemon, session: ClaudeSession) -> bool:
    return daemon.scheduler.has(f"{JOB_PREFIX}claude:{session.file}")


def run_with_session(world: World, until: Callable[[Daemon, ClaudeSession], bool]) -> ClaudeSession:
    """A daemon run in which a session of four turns is written; it stops once ``until`` holds."""
    world.projects.mkdir(parents=True, exist_ok=True)
    daemon = Daemon(App())
    daemon.start()
    try:
        session = ClaudeSession(world.projects, world.repo)
        claude_turns(session, TURNS)
        assert wait_until(lambda: until(daemon, session))
    finally:
        daemon.stop()
    return session


def run_until(cond: Callable[[], bool]) -> float:
    """A daemon run that stops once ``cond`` holds; the time just before the stop."""
    daemon = Daemon(App())
    daemon.start()
    try:
        assert wait_until(cond)
        return time.time()
    finally:
        daemon.stop()


def test_a_session_written_after_the_daemon_is_ready_but_before_its_watch_is_extracted(
    world: World,
) -> None:
    """CI's race, made certain: the status says ready, then the session, then the watch."""
    configure(world)
    app = App()
    daemon = Daemon(app)
    real_start = daemon.extraction.start
    written: list[ClaudeSession] = []

    def start_late(*args: Any, **kwargs: Any) -> None:
        assert wait_until(lambda: daemon_ready(app, os.getpid()))  # what wait_ready waits for
        assert not world.projects.exists()
        session = ClaudeSession(world.projects, world.repo)  # the folder appears here
        claude_turns(session, TURNS)
        written.append(session)
        real_start(*args, **kwargs)

    daemon.extraction.start = start_late  # type: ignore[method-assign]
    daemon.start()
    try:
        [session] = written
        assert wait_until(lambda: entry(world, session).get("turns_done") == 4)
        assert entry(world, session)["last"]["outcome"] == "written"
    finally:
        daemon.stop()


def test_turns_written_while_the_daemon_was_down_are_extracted_at_its_next_start(
    world: World, tmp_path: Path
) -> None:
    configure(world)
    first = DaemonProcess(tmp_path)
    try:
        first.wait_ready(world.app())
        active = ClaudeSession(world.projects, world.repo)
        claude_turns(active, TURNS)
        assert wait_until(lambda: entry(world, active).get("turns_done") == 4), first.output()
        stopping = time.time()
    finally:
        assert first.terminate() == 0, first.output()
    stopped = time.time()
    mark = claude_mark(world)
    calls = len(world.calls())

    # the daemon is down: one more turn in the session, and a whole new session
    world.answer.write_text(json.dumps({"memories": [
        {"kind": "fact", "summary": "Nightly backups go to the cold-storage bucket"}]}))  # fmt: skip
    claude_turns(active, [BACKUPS])
    fresh = ClaudeSession(world.projects, world.repo)
    claude_turns(fresh, TURNS)

    second = DaemonProcess(tmp_path)
    try:  # no further change: the start alone finds both
        second.wait_ready(world.app())
        assert wait_until(lambda: entry(world, active).get("turns_done") == 5), second.output()
        assert wait_until(lambda: entry(world, fresh).get("turns_done") == 4), second.output()
    finally:
        assert second.terminate() == 0, second.output()
    new_calls = world.calls()[calls:]
    assert len(new_calls) == 2, new_calls
    [for_active] = [c for c in new_calls if active.session in c]
    assert BACKUPS[0] in for_active and TURNS[0][0] not in for_active  # only the new turn
    fact = world.repo / ".memory" / "facts" / "nightly-backups-go-to-the-cold-storage-bucket.md"
    assert fact.is_file()
    assert "Traceback" not in first.output() + second.output()
    # the first run settled everything: its stop moved the mark up to the stop
    assert mark is not None and stopping - MTIME_SLACK_S <= mark <= stopped - MTIME_SLACK_S


def test_the_first_start_leaves_old_transcripts_alone(world: World) -> None:
    configure(world)
    sessions = [ClaudeSession(world.projects, world.repo) for _ in range(4)]
    for session in sessions:
        claude_turns(session, TURNS)
    ages = [3 * 365 * DAY, 200 * DAY, 3600.0, 30.0]  # years old to half a minute old
    mtimes = [aged(s, age) for s, age in zip(sessions, ages, strict=True)]
    began = time.time()
    daemon = Daemon(App())
    daemon.start()
    try:
        mark = claude_mark(world)
        assert mark is not None and max(mtimes) < began - MTIME_SLACK_S <= mark <= time.time()
        assert not [s for s in sessions if armed(daemon, s)]  # nothing queued for the model
        claude_turns(sessions[1], [BACKUPS])  # a change is watched, old or not
        assert wait_until(lambda: entry(world, sessions[1]).get("turns_done") == 5)
        assert [s for s in sessions if entry(world, s)] == [sessions[1]]
    finally:
        daemon.stop()
    daemon = Daemon(App())  # the next start: still nothing old
    daemon.start()
    try:  # the changed one may be looked at again (its turns are done), the old ones never
        assert not [s for s in sessions if s is not sessions[1] and armed(daemon, s)]
    finally:
        daemon.stop()
    assert [s for s in sessions if entry(world, s)] == [sessions[1]]
    assert len(world.calls()) == 1


def test_a_stop_before_a_turn_settled_keeps_the_mark_below_it(world: World) -> None:
    configure(world, settle_ms=600_000)  # the turn cannot settle in this run
    session = run_with_session(world, armed)
    mark = claude_mark(world)
    assert mark is not None and mark < session.file.stat().st_mtime
    assert world.calls() == [] and not entry(world, session)

    configure(world)
    stopping = run_until(lambda: entry(world, session).get("turns_done") == 4)  # no change since
    assert len(world.calls()) == 1
    mark = claude_mark(world)  # settled: moved up to the stop
    assert mark is not None and stopping - MTIME_SLACK_S <= mark <= time.time() - MTIME_SLACK_S


def test_a_command_cut_short_by_the_stop_is_tried_again_at_the_next_start(world: World) -> None:
    configure(world, settle_ms=200)
    world.mode.write_text("sleep")  # the command would sleep 30 s: the stop ends it
    session = run_with_session(world, lambda _daemon, _session: bool(world.calls()))
    assert entry(world, session)["last"]["reason"] == "the daemon stopped while the command ran"
    mark = claude_mark(world)
    assert mark is not None and mark < session.file.stat().st_mtime

    world.mode.write_text("answer")
    run_until(lambda: entry(world, session).get("turns_done") == 4)  # no change since
    assert entry(world, session)["last"]["outcome"] == "written"


def test_a_write_the_watcher_never_reported_keeps_the_mark_below_it(world: World) -> None:
    tracker = world.tracker()
    tracker.clock = time.time
    world.projects.mkdir(parents=True)
    tracker.prime()
    tracker.extractor.ledger.mark(CLAUDE_MARK, time.time() - 3600)
    session = ClaudeSession(world.projects, world.repo)
    claude_turns(session, TURNS)
    aged(session, 600)  # quiet for ten minutes: it settles at once
    assert tracker.settle(str(tracker.touched(session.file))) is None
    assert entry(world, session)["turns_done"] == 4

    claude_turns(session, [BACKUPS])
    unreported = aged(session, 300)  # written, never touched()
    tracker.advance()
    assert claude_mark(world) == session.file.stat().st_mtime - MTIME_SLACK_S
    assert abs(unreported - session.file.stat().st_mtime) < 0.001
    assert tracker.backlog(Watch(world.projects, recursive=True), late=False) == [session.file]

    assert tracker.settle(str(tracker.touched(session.file))) is None
    assert entry(world, session)["turns_done"] == 5
    tracker.advance()  # all settled: up to now
    mark = claude_mark(world)
    assert mark is not None and abs(mark - (time.time() - MTIME_SLACK_S)) < 5
    assert tracker.backlog(Watch(world.projects, recursive=True), late=False) == []


def test_opencode_sessions_saved_while_the_daemon_was_down_are_extracted_at_its_start(
    world: World,
) -> None:
    configure(world)
    db = OpenCodeDB(world.opencode)
    try:
        old = db.session(world.repo)
        for prompt, answer in TURNS:
            db.turn(old, prompt, answer)
        daemon = Daemon(App())  # the first sight of the database: what is there is history
        daemon.start()
        daemon.stop()
        time.sleep(0.01)  # OpenCode's times are in milliseconds
        sid = db.session(world.repo)  # the daemon is down
        for prompt, answer in TURNS:
            db.turn(sid, prompt, answer)
    finally:
        db.close()
    key = f"opencode:{sid}"
    run_until(lambda: ledger_file(world)["sessions"].get(key, {}).get("turns_done") == 4)
    assert f"opencode:{old}" not in ledger_file(world)["sessions"]
    assert len(world.calls()) == 1
