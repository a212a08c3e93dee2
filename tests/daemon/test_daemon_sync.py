"""The daemon hands changes to git sync (debounced) and pulls on its timer."""

from __future__ import annotations

import logging
import os
import re
import subprocess
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.daemon.harness import (
    DaemonProcess,
    app_with_root,
    daemon_status,
    indexed,
    memory,
    remote_files,
    root_with_remote,
    save,
    wait_until,
)
from tests.helpers import git, run_cli, waiting_git

pytest.importorskip("memoryd.sync.engine")


def test_changes_are_pushed_after_the_debounce_and_pulls_are_indexed(tmp_path: Path) -> None:
    app, root, remote = root_with_remote(tmp_path, 0.3, daemon={"sync_interval_s": 1.0})
    daemon = DaemonProcess(tmp_path)
    try:
        daemon.wait_ready(app)
        (root / "facts" / "pushed.md").write_text(memory("travels to the remote"))
        ok = wait_until(lambda: "facts/pushed.md" in remote_files(remote))
        assert ok, daemon.output()

        def last_sync() -> dict[str, Any] | None:
            return daemon_status(app).roots[str(root)].last_sync

        assert wait_until(lambda: last_sync() is not None)  # written once the cycle returns
        synced = last_sync()
        assert synced is not None and synced["outcome"] == "ok", last_sync()

        other = tmp_path / "other"  # a second device pushes; the periodic pull brings it
        subprocess.run(["git", "clone", "-q", str(remote), str(other)], check=True)
        (other / "facts" / "pulled.md").write_text(memory("came from the other device"))
        git(other, "add", "-A")
        git(other, "commit", "-q", "-m", "from the other device")
        git(other, "push", "-q", "origin", "main")
        pulled = root / "facts" / "pulled.md"
        assert wait_until(lambda: any(p == str(pulled) for p, _ in indexed(app))), daemon.output()

        remote.rename(tmp_path / "gone.git")  # the remote goes away: a pending problem, not a crash
        (root / "facts" / "stranded.md").write_text(memory("waits for the remote"))
        problem = f"sync of {root}: offline: "

        def problems() -> list[str]:
            return daemon_status(app).problems

        assert wait_until(lambda: any(p.startswith(problem) for p in problems())), problems()
        (tmp_path / "gone.git").rename(remote)  # back: a later cycle pushes and clears it
        # (after the offline back-off, 12 to 18 s: the wait needs the suite's whole minute)
        assert wait_until(lambda: "facts/stranded.md" in remote_files(remote)), problems()
        assert wait_until(lambda: not any(p.startswith(problem) for p in problems()))
        assert daemon.terminate() == 0
    finally:
        daemon.kill()


def test_a_memory_another_process_indexed_is_pushed_after_the_debounce(tmp_path: Path) -> None:
    """``memoryd remember`` writes, indexes and compiles by itself: the daemon's batch then
    finds its rows fresh, and the memory must still be committed and pushed after
    ``debounce_s``, not at the next periodic sync."""
    batch = {"quiet_ms": 1500, "max_wait_ms": 3000}  # the batch after remember is done
    app, _root, remote = root_with_remote(tmp_path, 0.3, daemon=batch)
    daemon = DaemonProcess(tmp_path)
    try:
        daemon.wait_ready(app)
        # start-up's own cycle (init's files) is over before remember writes
        assert wait_until(lambda: "ROOT.md" in remote_files(remote)), daemon.output()
        done = run_cli(
            "remember", "--kind", "fact", "--summary", "herons stand still", "--scope", "global",
            "heron", cwd=tmp_path,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        file = "facts/herons-stand-still.md"
        assert wait_until(lambda: file in remote_files(remote), timeout=20), daemon.output()
        assert "0 files changed" in daemon.output()  # the daemon itself indexed nothing
        assert daemon.terminate() == 0
    finally:
        daemon.kill()


def test_a_daemon_stopped_while_a_sync_waits_on_the_network_stops_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A remote that does not answer (a captive portal, a dropped SYN) holds each fetch,
    push and ls-remote for two minutes: SIGTERM must not wait for them (systemd kills a
    unit after TimeoutStopSec=30, and Ctrl-C at a terminal looked hung). The cycle it cuts
    short is no problem: it was logged as a WARNING 'offline: ... memoryd is stopping',
    recorded as the root's last error (and backed off), so a normal stop read like trouble
    and the commits waited for the periodic sync. It is an INFO line now, and the next
    start runs that sync at once."""
    from memoryd.app import App
    from memoryd.sync.state import load_state

    app, root = app_with_root()
    git(root, "init", "-q", "-b", "main")
    git(root, "remote", "add", "origin", "ssh://unreachable.example/memory.git")
    started, ssh = tmp_path / "ssh-started", tmp_path / "ssh"
    ssh.write_text(f"#!/bin/sh\ntouch {started}\nexec sleep 100\n")
    ssh.chmod(0o755)
    monkeypatch.setenv("GIT_SSH_COMMAND", str(ssh))
    settings = {
        "roots": [{"path": str(root), "sync": {"debounce_s": 0.3}}],
        "daemon": {"sync_interval_s": 3600},  # no periodic sync during the test
    }
    app.paths.config_file.write_text(yaml.safe_dump(settings))
    app = App()
    daemon = DaemonProcess(tmp_path)
    try:
        daemon.wait_ready(app)
        (root / "facts" / "stranded.md").write_text(memory("waits for the remote"))
        assert wait_until(started.exists), daemon.output()
        assert daemon.terminate(timeout=20) == 0, daemon.output()
    finally:
        daemon.kill()
    commits = git(root, "rev-list", "--count", "HEAD").strip()
    assert [line for line in daemon.output().splitlines() if "sync of " in line] == [
        f"memoryd: INFO: sync of {root}: cut short by memoryd's stop; it runs again at the "
        f"next start; {commits} commit(s) not pushed"
    ], daemon.output()
    assert "memoryd is stopping" not in daemon.output()
    assert not [p for p in daemon_status(app).problems if p.startswith("sync of ")]
    state = load_state(app.paths, root)
    assert (state.cut_short, state.last_status, state.last_error) == (True, "", None)
    assert (state.failures, state.retry_after_ms) == (0, 0)  # no back-off: it was no failure
    # the next start syncs at once (the remote answers now), not at the periodic sync
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    git(root, "remote", "set-url", "origin", str(remote))
    again = DaemonProcess(tmp_path)
    try:
        again.wait_ready(app)
        assert wait_until(lambda: "facts/stranded.md" in remote_files(remote)), again.output()
        assert wait_until(lambda: not load_state(app.paths, root).cut_short), again.output()
        assert again.terminate() == 0
    finally:
        again.kill()
    assert load_state(app.paths, root).last_status == "ok"


def test_a_quarantined_file_is_told_once_in_the_log_with_what_to_do(tmp_path: Path) -> None:
    """The daemon held a file with a secret back with not a word in its log (the journal of
    the service): the user learnt of it only by running status or inspect."""
    from tests.secrets.fake_tokens import github

    app, root, remote = root_with_remote(tmp_path, 0.2)
    daemon = DaemonProcess(tmp_path)
    token = github("daemon-once")
    told = (
        f"memoryd: WARNING: sync of {root}: facts/ci.md kept out of git: line 5: github-token "
        f"({token[:4]}…{token[-4:]}); remove the secret (or allow it: see memoryd scan); "
        "it syncs once it is gone"
    )
    try:
        daemon.wait_ready(app)
        (root / "facts" / "ci.md").write_text(memory("ci token", f"GH={token}"))
        (root / "facts" / "one.md").write_text(memory("first clean memory"))
        assert wait_until(lambda: "facts/one.md" in remote_files(remote)), daemon.output()
        (root / "facts" / "two.md").write_text(memory("second clean memory"))
        assert wait_until(lambda: "facts/two.md" in remote_files(remote)), daemon.output()
        assert "facts/ci.md" not in remote_files(remote)
        (root / "facts" / "ci.md").write_text(memory("ci token", "GH is in the CI's secrets"))
        assert wait_until(lambda: "facts/ci.md" in remote_files(remote)), daemon.output()
        assert daemon.terminate() == 0
        lines = daemon.output().splitlines()
        assert [line for line in lines if "kept out of git" in line] == [told]
        assert token not in daemon.output()
    finally:
        daemon.kill()


def cycles_ended(app: Any, root: Path, outcome: str) -> Callable[[], int]:
    """How many of the daemon's sync cycles of ``root`` ended in ``outcome`` so far, as
    seen by polling its status (a cycle is told apart by its time)."""
    from memoryd.daemon.status import read_status

    seen: set[str] = set()

    def count() -> int:
        status = read_status(app.paths).status
        last = status.roots[str(root)].last_sync if status is not None else None
        if last and last["outcome"] == outcome:
            seen.add(last["at"])
        return len(seen)

    return count


def test_a_missing_git_identity_is_logged_once_and_stays_a_problem_until_fixed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a machine where git knows no one every cycle fails the same way: the log said so
    twice per cycle (the engine and the daemon each), every sync_interval_s, forever."""
    from memoryd.daemon.status import Status, read_status

    for name in ("EMAIL", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL"):
        monkeypatch.delenv(name, raising=False)
    for name in ("GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"):
        monkeypatch.delenv(name, raising=False)
    gitconfig = tmp_path / "gitconfig"  # the isolated home's: no one, and no guessing
    identity = gitconfig.read_text()
    gitconfig.write_text("[user]\n\tuseConfigOnly = true\n[init]\n\tdefaultBranch = main\n")
    app, root, _remote = root_with_remote(tmp_path, 0.2, daemon={"sync_interval_s": 0.5})
    problem = (
        f"sync of {root}: error: git does not know who commits on this machine: no email was "
        "given and auto-detection is disabled (tell git who commits on this machine: git config "
        '--global user.name "Your Name" && git config --global user.email "you@example.com")'
    )

    def status() -> Status:
        now = read_status(app.paths).status
        assert now is not None
        return now

    daemon = DaemonProcess(tmp_path)
    try:
        daemon.wait_ready(app)
        failed_cycles = cycles_ended(app, root, "error")
        assert wait_until(lambda: failed_cycles() >= 3), daemon.output()  # 3 seconds apart
        assert status().problems == [problem]
        logged = problem.split(" (tell git", maxsplit=1)[0]  # the hint is in status and doctor
        shown = run_cli("status").stdout.splitlines()  # the problem once, with its fix
        assert [line for line in shown if "who commits" in line] == [  # not on the root's line
            f"  sync: {root}: last sync: {logged.split(': ', 2)[2]}",
            '    fix: tell git who commits on this machine: git config --global user.name "Your '
            'Name" && git config --global user.email "you@example.com"',
        ], shown
        doctor = run_cli("doctor")
        assert f"FAIL  daemon    daemon pid {daemon.proc.pid} reports: {problem}\n" in doctor.stdout
        said = [line for line in daemon.output().splitlines() if "who commits" in line]
        assert said == [f"memoryd: WARNING: {logged}"], daemon.output()

        gitconfig.write_text(identity)  # told git: the next cycle commits, and says so once
        assert wait_until(lambda: status().problems == []), daemon.output()
        assert daemon.terminate() == 0
        lines = daemon.output().splitlines()
        assert len([line for line in lines if "who commits" in line]) == 1, daemon.output()
        again = [line for line in lines if "working again" in line]
        assert again == [f"memoryd: INFO: sync of {root}: working again: pushed"], daemon.output()
    finally:
        daemon.kill()


def test_a_git_commit_left_in_its_editor_is_a_problem_once_its_lock_is_old(
    tmp_path: Path,
) -> None:
    """A 'git commit -a' waiting in its editor holds index.lock: while the lock is fresh the
    cycle retries quietly ('busy'); once it is older than stale_lock_s the root is blocked,
    logged once and kept as a problem naming the lock, the git by pid and what to do, and
    cleared when that git ends. It stayed 'busy' for as long as the editor was open, which
    neither the log, the daemon's problems nor doctor ever told."""
    from memoryd.daemon.status import Status, read_status

    app, root, remote = root_with_remote(tmp_path, 0.2, daemon={"sync_interval_s": 0.5})
    lock = root / ".git" / "index.lock"
    daemon = DaemonProcess(tmp_path)

    def status() -> Status:
        now = read_status(app.paths).status
        assert now is not None
        return now

    def outcome() -> str | None:
        last = status().roots[str(root)].last_sync
        return last["outcome"] if last else None

    try:
        daemon.wait_ready(app)
        assert wait_until(lambda: "ROOT.md" in remote_files(remote)), daemon.output()
        with waiting_git(root, "commit", "-a", "--allow-empty") as commit:
            assert wait_until(lambda: outcome() == "busy"), daemon.output()  # fresh: quiet
            assert status().problems == [], daemon.output()
            taken = datetime(2020, 1, 2, 3, 4, 5, tzinfo=UTC).timestamp()
            os.utime(lock, (taken, taken))  # the person went for lunch
            said = (
                f"{lock} has been held since 2020-01-02 03:04 UTC by git commit (pid {commit.pid})"
            )
            fix = "finish or quit that git command; memoryd syncs after that"
            problem = f"sync of {root}: blocked: {said} ({fix})"
            assert wait_until(lambda: status().problems == [problem]), daemon.output()
            blocked_cycles = cycles_ended(app, root, "blocked")
            assert wait_until(lambda: blocked_cycles() >= 3), daemon.output()  # 1 s apart
            shown = run_cli("status").stdout.splitlines()
            [mine] = [line for line in shown if line.startswith(f"  {root}: ")]
            assert re.fullmatch(  # the root's line says when; the sync line below says why
                rf"  {re.escape(str(root))}: watching, \w+, last sync blocked at [0-9T:-]+Z",
                mine,
            ), shown
            assert [
                line for line in shown if line.startswith(("  problem: ", "  sync: ", "    "))
            ] == [
                f"  sync: {root}: last sync: {said}",
                f"    fix: {fix}",
            ], shown
            doctor = run_cli("doctor").stdout
            assert f"FAIL  daemon    daemon pid {daemon.proc.pid} reports: {problem}\n" in doctor
            assert commit.finish() == 1  # the empty message aborts it, and git unlocks
        assert wait_until(lambda: status().problems == []), daemon.output()
        assert daemon.terminate() == 0
        lines = daemon.output().splitlines()
        told = [line for line in lines if "index.lock" in line]
        assert told == [f"memoryd: WARNING: sync of {root}: blocked: {said}"], daemon.output()
        again = [line for line in lines if "working again" in line]
        assert len(again) == 1, daemon.output()
    finally:
        daemon.kill()


def test_the_conflict_copies_of_one_cycle_are_one_line_in_the_log_and_in_status(
    tmp_path: Path,
) -> None:
    """Fifty memories edited on two devices: the daemon's log said nothing of the copies it
    saved, and ``memoryd status`` gave one line to each of the fifty."""
    app, root, remote = root_with_remote(tmp_path, 0.3)
    names = [f"facts/m{i:02}.md" for i in range(50)]
    for name in names:
        (root / name).write_text(memory(name, "as both devices had it"))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "both devices")
    git(root, "push", "-q", "-u", "origin", "main")
    other = tmp_path / "other"
    subprocess.run(["git", "clone", "-q", str(remote), str(other)], check=True)
    for name in names:
        (other / name).write_text(memory(name, "as the other device has it"))
    git(other, "commit", "-q", "-am", "the other device")
    git(other, "push", "-q", "origin", "main")
    for name in names:
        (root / name).write_text(memory(name, "as this device has it"))
    daemon = DaemonProcess(tmp_path)
    fix = (
        "'memoryd conflicts' lists the copies, 'memoryd resolve ID --keep local|remote|both' "
        "settles each"
    )
    try:
        daemon.wait_ready(app)

        def copies() -> list[Path]:
            return sorted((root / "facts").glob("*.conflict-*.md"))

        assert wait_until(lambda: len(copies()) == 50), daemon.output()
        assert wait_until(lambda: "conflict copies" in daemon.output()), daemon.output()
        listed = run_cli("conflicts")
        assert listed.stdout.startswith("50 sync conflict(s):\n"), listed.stdout
        status = run_cli("status")
        first = ", ".join(f"facts/{p.name}" for p in copies()[:3])
        assert f"  sync: {root}: 50 sync conflicts: {first} and 47 more; {fix}\n" in status.stdout
        assert ".conflict-" not in status.stdout.replace(first, ""), status.stdout
        assert daemon.terminate() == 0
        lines = daemon.output().splitlines()
        said = [line for line in lines if "conflict" in line.replace(str(tmp_path), "")]
        assert said == [
            f"memoryd: WARNING: sync of {root}: 50 conflict copies saved beside facts/m00.md, "
            f"facts/m01.md, facts/m02.md and 47 more (changed on two devices); {fix}"
        ], daemon.output()
    finally:
        daemon.kill()


def test_a_compiled_file_a_pull_brought_is_recompiled_without_calling_it_a_hand_edit(
    tmp_path: Path,
) -> None:
    """The other device's index.md (its memoryd lists what it has, or an older memoryd lists
    it its own way) arrived with a pull, the daemon recompiled it and logged "a hand edit
    there is overwritten" though nobody had edited it: the file came through git."""
    app, root, remote = root_with_remote(tmp_path, 60.0)
    daemon = DaemonProcess(tmp_path)
    index_md = root / "facts" / "index.md"
    try:
        daemon.wait_ready(app)
        save(root / "facts" / "mine.md", memory("written on this device"))
        assert wait_until(index_md.exists), daemon.output()
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "this device")
        git(root, "push", "-q", "-u", "origin", "main")
        other = tmp_path / "other"
        subprocess.run(["git", "clone", "-q", str(remote), str(other)], check=True)
        (other / "facts" / "theirs.md").write_text(memory("written on the other device"))
        listed = (other / "facts" / "index.md").read_text()
        (other / "facts" / "index.md").write_text(listed.replace("written on", "as listed on"))
        git(other, "add", "-A")
        git(other, "commit", "-q", "-m", "the other device")
        git(other, "push", "-q", "origin", "main")
        git(root, "pull", "-q", "--ff-only")  # the user pulls by hand, as a sync pull does
        assert wait_until(lambda: "as listed on" not in index_md.read_text()), daemon.output()
        assert wait_until(lambda: "theirs.md" in index_md.read_text()), daemon.output()
        save(index_md, index_md.read_text().replace("written on", "hand edit of"))  # a real one
        assert wait_until(lambda: "hand edit of" not in index_md.read_text()), daemon.output()
        assert daemon.terminate() == 0
        said = [line for line in daemon.output().splitlines() if "hand edit" in line]
        assert said == [
            f"memoryd: WARNING: restored the compiled parts of {index_md}: a hand edit there is "
            "overwritten by every compile (edit the memories' frontmatter instead)"
        ], daemon.output()
    finally:
        daemon.kill()


def test_a_change_made_while_a_sync_runs_is_synced_after_the_debounce(tmp_path: Path) -> None:
    """The debounced sync of a change saved while the root's sync ran (a slow remote, a
    hook) fired while that one still ran: the scheduler skipped it ("maximum number of
    running instances reached", a warning in the log) and dropped it, so the change waited
    for the periodic pull, five minutes by default."""
    app, root, remote = root_with_remote(tmp_path, 0.3, daemon={"sync_interval_s": 3600.0})
    started = tmp_path / "push-started"
    hook = root / ".git" / "hooks" / "pre-push"
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text(f"#!/bin/sh\ntouch {started}\nsleep 3\n")  # a slow push
    hook.chmod(0o755)
    daemon = DaemonProcess(tmp_path)
    try:
        daemon.wait_ready(app)
        assert wait_until(lambda: "ROOT.md" in remote_files(remote)), daemon.output()
        started.unlink()
        save(root / "facts" / "first.md", memory("saved first"))
        assert wait_until(started.exists), daemon.output()  # its sync is pushing
        save(root / "facts" / "second.md", memory("saved while the first was pushed"))
        assert wait_until(lambda: "facts/first.md" in remote_files(remote)), daemon.output()
        assert wait_until(lambda: "facts/second.md" in remote_files(remote), timeout=30), (
            daemon.output()
        )
        assert daemon.terminate() == 0
        assert "maximum number of running instances" not in daemon.output()
    finally:
        daemon.kill()


def test_a_periodic_sync_skipped_while_a_slow_one_runs_is_not_a_warning(tmp_path: Path) -> None:
    """Coalescing means a period whose sync still runs is skipped; APScheduler said so as a
    warning ('Execution of job "guarded.<locals>.run (trigger: interval[...' skipped) each
    period, behind a slow remote every five minutes."""
    app, root, remote = root_with_remote(tmp_path, 0.3, daemon={"sync_interval_s": 0.5})
    started = tmp_path / "push-started"
    hook = root / ".git" / "hooks" / "pre-push"
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text(f"#!/bin/sh\ntouch {started}\nsleep 2\n")  # a slow push: 4 periods
    hook.chmod(0o755)
    daemon = DaemonProcess(tmp_path)
    try:
        daemon.wait_ready(app)
        assert wait_until(started.exists), daemon.output()
        assert wait_until(lambda: "ROOT.md" in remote_files(remote)), daemon.output()
        assert daemon.terminate() == 0
        assert "maximum number of running instances" not in daemon.output(), daemon.output()
    finally:
        daemon.kill()


def test_a_crashing_sync_logs_its_traceback_once_and_again_only_when_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """An exception the engine does not turn into an outcome (a bug) logged its full
    traceback every cycle, every sync_interval_s, forever, outside the once-only logging
    of the cycle's other problems: now it is one of them, its traceback logged with it."""
    from memoryd.daemon.runner import Daemon
    from memoryd.sync import engine

    real, crashes = engine.sync_root, ["boom"] * 3 + ["bang"] * 3
    cycles: list[int] = []

    def sync_root(*args: Any, **kwargs: Any) -> Any:
        cycles.append(len(cycles))
        if len(cycles) <= len(crashes):
            raise RuntimeError(crashes[len(cycles) - 1])
        return real(*args, **kwargs)

    monkeypatch.setattr(engine, "sync_root", sync_root)
    caplog.set_level(logging.INFO, logger="memoryd.daemon.syncing")
    app, root, remote = root_with_remote(tmp_path, 0.2, daemon={"sync_interval_s": 0.2})
    daemon = Daemon(app)
    daemon.start()
    try:
        assert wait_until(lambda: "working again" in caplog.text), caplog.text
        assert "ROOT.md" in remote_files(remote)
        said = [
            (r.levelname, r.getMessage(), repr(r.exc_info[1]) if r.exc_info else None)
            for r in caplog.records
            if r.name == "memoryd.daemon.syncing"
        ]  # before stop, which cuts a cycle short (an INFO line)
        traces = caplog.text.count("Traceback (most recent call last)")
    finally:
        daemon.stop()
    assert len(cycles) > len(crashes)
    assert said == [
        ("ERROR", f"sync of {root}: failed: RuntimeError: boom", "RuntimeError('boom')"),
        ("ERROR", f"sync of {root}: failed: RuntimeError: bang", "RuntimeError('bang')"),
        ("INFO", f"sync of {root}: working again: pushed", None),
    ], caplog.text
    assert traces == 2, caplog.text
