"""``memoryd doctor`` against a real root, a real bare remote and fake systemctl.

The ``world`` fixture makes every check pass; each test breaks one thing and
asserts that exactly that check fails, with its fix.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from memoryd.config.loader import load_config
from memoryd.daemon import manager as service_manager
from memoryd.daemon.status import StatusBoard
from memoryd.doctor import checks as doctor
from memoryd.doctor.verdict import Machine, Verdict
from memoryd.paths import resolve_paths
from memoryd.runlock import DaemonLock
from tests.fakes import FakeTool, install_fakes
from tests.helpers import git, run_cli


@dataclass
class World:
    root: Path
    remote: Path
    ctx: Machine
    lock: DaemonLock
    systemctl: FakeTool

    def statuses(self, **changes: object) -> dict[str, str]:
        checks = doctor.run_checks(replace(self.ctx, **changes))  # type: ignore[arg-type]
        return {c.name: c.status for c in checks}

    def check(self, name: str, **changes: object) -> Verdict:
        checks = doctor.run_checks(replace(self.ctx, **changes))  # type: ignore[arg-type]
        (found,) = [c for c in checks if c.name == name]
        return found


ALL_OK = {
    "git": "ok", "root": "ok", "identity": "ok", "remote": "ok", "push-auth": "ok",
    "inotify": "ok", "disk": "ok", "private": "ok", "index": "ok", "service": "ok",
    "daemon": "ok",
}  # fmt: skip


@pytest.fixture
def world(tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    fakes = install_fakes(tmp_path, monkeypatch)
    remote, root = tmp_path / "remote.git", tmp_path / "mem"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    root.mkdir()
    git(root, "init", "-q")
    (root / "note.md").write_text("hello\n")
    git(root, "add", "note.md")
    git(root, "commit", "-qm", "first")
    git(root, "remote", "add", "origin", str(remote))
    git(root, "push", "-q", "origin", "HEAD:main")
    isolated_home.mkdir(exist_ok=True)
    root.chmod(0o700)  # as memoryd init makes a root; the test's mkdir follows its umask
    isolated_home.chmod(0o700)
    (isolated_home / "config.yaml").write_text(f"roots:\n  - path: {root}\n")
    watches = tmp_path / "max_user_watches"
    watches.write_text("524288\n")
    env = dict(os.environ)
    paths = resolve_paths(env)
    service_manager.install("systemd", env, paths)
    lock = DaemonLock(paths.lock_file)
    lock.acquire()
    StatusBoard(paths.status_file).update()
    ctx = Machine(env, paths, load_config(paths), "systemd", watches, 10.0)
    yield World(root, remote, ctx, lock, fakes["systemctl"])
    lock.release()


def test_everything_ok(world: World) -> None:
    checks = doctor.run_checks(world.ctx)
    assert [c.detail for c in checks if c.status != "ok"] == []
    assert {c.name: c.status for c in checks} == ALL_OK
    assert not doctor.failed(checks)
    text = doctor.render(checks)
    assert f"ok    remote    {world.root}: 'origin' ({world.remote}) answers\n" in text
    assert text.endswith("\n11 ok")


def test_no_remote(world: World) -> None:
    git(world.root, "remote", "remove", "origin")
    check = world.check("remote")
    assert (check.status, check.detail) == ("fail", f"{world.root}: no remote 'origin'")
    config = world.ctx.config.source or world.ctx.paths.config_file
    assert check.fix == (
        f"git -C {world.root} remote add origin <url of your memory repository> (or, to keep "
        f"this root on this machine, give it 'sync: {{push: false, pull: false}}' in {config})"
    )
    statuses = world.statuses()
    assert "push-auth" not in statuses
    assert [n for n, s in statuses.items() if s != "ok"] == ["remote"]


def test_unreachable_remote(world: World, tmp_path: Path) -> None:
    gone = tmp_path / "moved-away.git"
    git(world.root, "remote", "set-url", "origin", str(gone))
    check = world.check("remote")
    assert check.status == "fail"
    assert check.detail == (
        f"{world.root}: 'origin' ({gone}) is unreachable: "
        f"fatal: '{gone}' does not appear to be a git repository"
    )
    assert check.fix.startswith(f"check the URL (git -C {world.root} remote -v)")


def test_a_remote_that_hangs_is_given_up_after_the_timeout(world: World) -> None:
    git(world.root, "config", "protocol.ext.allow", "always")
    git(world.root, "remote", "set-url", "origin", "ext::sleep 30")
    started = time.monotonic()
    check = world.check("remote", remote_timeout_s=0.5)
    assert time.monotonic() - started < 10
    assert check.status == "fail"
    assert check.detail.endswith("(ext::sleep 30) is unreachable: no answer in 0.5 s")


def test_missing_identity(world: World, tmp_path: Path) -> None:
    empty = tmp_path / "empty-gitconfig"
    empty.write_text("[user]\n\tuseConfigOnly = true\n")  # no guess from the host either
    env = {**world.ctx.env, "GIT_CONFIG_GLOBAL": str(empty)}
    check = world.check("identity", env=env)
    assert check.status == "fail"
    assert check.detail == f"{world.root}: user.name and user.email not set; git refuses to commit"
    assert check.fix == (
        'git config --global user.name "Your Name" && '
        'git config --global user.email "you@example.com"'
    )
    assert [n for n, s in world.statuses(env=env).items() if s != "ok"] == ["identity"]


def test_an_identity_from_the_environment_is_an_identity(world: World, tmp_path: Path) -> None:
    empty = tmp_path / "empty-gitconfig"
    empty.write_text("[user]\n\tuseConfigOnly = true\n")
    env = {
        **world.ctx.env, "GIT_CONFIG_GLOBAL": str(empty),
        "GIT_AUTHOR_NAME": "CI Bot", "GIT_AUTHOR_EMAIL": "ci@example.invalid",
        "GIT_COMMITTER_NAME": "CI Bot", "GIT_COMMITTER_EMAIL": "ci@example.invalid",
    }  # fmt: skip
    check = world.check("identity", env=env)
    assert (check.status, check.detail) == (
        "ok",
        f"{world.root}: commits as CI Bot <ci@example.invalid>",
    )
    done = subprocess.run(
        ["git", "-C", str(world.root), "commit", "--allow-empty", "-q", "-m", "works"],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    half = {k: v for k, v in env.items() if not k.startswith("GIT_COMMITTER_")}
    assert world.check("identity", env=half).detail == (
        f"{world.root}: user.name and user.email not set; git refuses to commit"
    )


def test_an_identity_git_guesses_is_a_warning_not_a_failure(
    world: World, tmp_path: Path
) -> None:
    """No user.name or user.email, yet git commits: it takes the email from $EMAIL and the
    name from the user's account. The doctor says so (WARN, with the fix) instead of
    claiming git refuses, and the commit indeed goes out under that guess."""
    empty = tmp_path / "empty-gitconfig"
    empty.write_text("")
    env = {**world.ctx.env, "GIT_CONFIG_GLOBAL": str(empty), "EMAIL": "me@laptop.example"}
    check = world.check("identity", env=env)
    guessed = subprocess.run(
        ["git", "-C", str(world.root), "var", "GIT_AUTHOR_IDENT"],
        env=env, capture_output=True, text=True, check=True,
    ).stdout.rsplit(" ", 2)[0]  # fmt: skip
    assert guessed.endswith(" <me@laptop.example>")
    assert (check.status, check.detail) == (
        "warn",
        f"{world.root}: user.name not set; git commits as {guessed} (its guess from the host)",
    )
    assert check.fix == 'git config --global user.name "Your Name"'
    done = subprocess.run(
        ["git", "-C", str(world.root), "commit", "--allow-empty", "-q", "-m", "guessed"],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_low_watch_limit(world: World, tmp_path: Path) -> None:
    low = tmp_path / "low"
    low.write_text("16\n")
    folders = doctor.count_folders([world.root])
    assert folders > 8  # .git alone has more
    check = world.check("inotify", inotify_file=low)
    assert check.status == "fail"
    assert check.detail == (
        f"memoryd watches {folders} folders; the limit is 16 for all your programs, "
        "and memoryd alone needs over half"
    )
    assert "fs.inotify.max_user_watches=524288" in check.fix
    assert world.check("inotify", inotify_file=tmp_path / "absent").status == "skip"


def test_folders_and_a_database_others_can_read_are_reported_with_the_chmod(
    world: World,
) -> None:
    home, db = world.ctx.paths.config_dir, world.ctx.paths.index_db
    run_cli("reindex")
    assert world.check("private").status == "ok"
    db.chmod(0o644)
    world.root.chmod(0o755)  # a root the user opened on purpose: said, never changed
    check = world.check("private")
    assert (check.status, check.detail, check.fix) == (
        "warn",
        f"{db}: the search database is readable by other users (mode 644); "
        f"{world.root}: a memory root is readable by other users (mode 755)",
        f"chmod 600 {db} && chmod 700 {world.root}",
    )
    assert oct(world.root.stat().st_mode & 0o777) == "0o755"
    home.chmod(0o750)
    assert world.check("private").detail.startswith(
        f"{home}: memoryd's folder is readable by other users (mode 750); {db}:"
    )
    done = run_cli("inspect", "--json")
    found = [f for f in json.loads(done.stdout)["problems"] if f["check"] == "home.private"]
    assert [(f["path"], f["fix"]) for f in found] == [
        (str(home), f"chmod 700 {home}"), (str(db), f"chmod 600 {db}"),
        (str(world.root), f"chmod 700 {world.root}"),
    ]  # fmt: skip


def test_a_full_disk_fails_since_the_daemon_cannot_write_its_status_to_say_so(
    world: World,
) -> None:
    cache = world.ctx.paths.cache_dir
    # the threshold is said as one, not as a measurement of the disk
    detail = "1 disk(s) hold memoryd's folders, none with less than 16 MiB free"
    assert world.check("disk").detail == detail
    check = world.check("disk", free_bytes=lambda folder: 1024 * 1024)
    assert (check.status, check.detail, check.fix) == (
        "fail",
        f"the disk holding {cache} has 1.0 MiB free: indexing, compiling and committing there fail",
        f"free some space on it (df -h {cache})",
    )


def test_stale_status(world: World) -> None:
    world.lock.release()  # the daemon died without writing stopped_at
    check = world.check("daemon")
    assert check.status == "fail"
    assert check.detail.startswith(f"the daemon status is stale: pid {os.getpid()} is gone")
    assert check.fix.startswith("memoryd service install (or memoryd run)")
    assert [n for n, s in world.statuses().items() if s != "ok"] == ["daemon"]


def test_no_daemon_at_all(world: World) -> None:
    world.lock.release()
    world.ctx.paths.status_file.unlink()
    check = world.check("daemon")
    assert (check.status, check.detail) == ("fail", "no memoryd daemon is running")


def test_a_running_daemon_whose_status_file_is_deleted_is_running(world: World) -> None:
    world.ctx.paths.status_file.unlink()
    check = world.check("daemon")
    assert (check.status, check.detail, check.fix) == (
        "warn",
        f"daemon pid {os.getpid()} is running, but its status file "
        f"{world.ctx.paths.status_file} is missing",
        "the daemon writes it again within seconds; if it stays so, restart the daemon",
    )


def test_push_auth_over_ssh_needs_an_agent_the_service_can_reach(
    world: World, tmp_path: Path
) -> None:
    git(world.root, "remote", "set-url", "--push", "origin", "git@example.invalid:me/mem.git")
    check = world.check("push-auth")
    assert check.status == "fail"
    assert check.detail == (
        f"{world.root}: push to git@example.invalid:me/mem.git: "
        "the service gets no SSH agent (SSH_AUTH_SOCK) and no ssh command"
    )
    assert check.fix.endswith("see docs/service.md")
    agent = socket.socket(socket.AF_UNIX)
    sock = tmp_path / "a.sock"
    agent.bind(str(sock))
    try:
        world.systemctl.set_state(manager_env={"SSH_AUTH_SOCK": str(sock)})
        assert world.check("push-auth").detail.endswith(f"the service uses the SSH agent at {sock}")
        world.systemctl.set_state(manager_env={"SSH_AUTH_SOCK": str(tmp_path / "gone")})
        assert world.check("push-auth").status == "fail"
    finally:
        agent.close()
    git(world.root, "config", "core.sshCommand", "ssh -i ~/.ssh/memoryd")
    assert world.check("push-auth").status == "ok"


def test_push_auth_over_https_needs_a_credential_helper(world: World) -> None:
    git(world.root, "remote", "set-url", "--push", "origin", "https://example.invalid/me/mem.git")
    check = world.check("push-auth")
    assert check.status == "fail"
    assert check.detail.endswith("no credential helper; a service cannot type a password")
    git(world.root, "config", "credential.helper", "cache --timeout 900")
    assert world.check("push-auth").status == "warn"
    git(world.root, "config", "credential.helper", "store")
    assert world.check("push-auth").status == "ok"


def test_root_missing_unwritable_or_not_a_repo(world: World, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (world.ctx.paths.config_file).write_text(f"roots:\n  - path: {plain}\n")
    config = load_config(world.ctx.paths)
    check = world.check("root", config=config)
    assert (check.status, check.detail) == (
        "fail", f"{plain} syncs but is not inside a git repository",
    )  # fmt: skip
    assert check.fix == f"git -C {plain} init && git -C {plain} remote add origin <url>"
    assert "identity" not in world.statuses(config=config)
    plain.rmdir()
    check = world.check("root", config=config)
    assert (check.status, check.detail) == ("fail", f"{plain} does not exist")


def test_damaged_index(world: World) -> None:
    db = world.ctx.paths.index_db
    db.parent.mkdir(parents=True, exist_ok=True)
    db.write_bytes(b"this is not sqlite" * 100)
    check = world.check("index")
    assert check.status == "fail"
    assert check.fix == f"delete {db}; memoryd rebuilds it from the files (they are the truth)"


def test_a_real_index_is_healthy(world: World) -> None:
    from memoryd.index import open_index, reconcile

    with open_index(world.ctx.paths) as db:
        reconcile(db, world.ctx.config)
    check = world.check("index")
    assert check.status == "ok"
    assert check.detail == (
        f"{world.ctx.paths.index_db}: 1 memory files indexed, passes quick_check"
    )


def test_service_installed_but_stopped(world: World) -> None:
    world.systemctl.set_state(active=False)
    check = world.check("service")
    assert check.status == "fail"
    assert check.detail.endswith("installed but not running (inactive (dead))")
    assert check.fix.startswith("journalctl --user -u memoryd")


def test_a_unit_whose_python_is_gone_fails_with_the_reinstall(world: World) -> None:
    """The virtualenv was recreated (or moved): the unit still names its old python, so the
    next start fails; the doctor said 'running' while the old process lasted."""
    from memoryd.daemon.manager import unit_path

    unit = unit_path("systemd", world.ctx.env)
    text = unit.read_text()
    assert f'ExecStart="{sys.executable}" "-m" "memoryd" "run"' in text
    unit.write_text(text.replace(f'"{sys.executable}"', '"/home/me/old-venv/bin/python"'))
    check = world.check("service")
    assert (check.status, check.detail, check.fix) == (
        "fail",
        f"systemd unit {unit} runs /home/me/old-venv/bin/python, which is gone (a moved or "
        "recreated virtualenv?)",
        "memoryd service install (writes the unit for the memoryd run now)",
    )
    assert run_cli("service", "install").returncode == 0
    assert world.check("service").status == "ok"


def test_no_service_manager(world: World, tmp_path: Path) -> None:
    empty = tmp_path / "no-systemd"
    empty.mkdir()
    check = world.check("service", env={**world.ctx.env, "PATH": str(empty)})
    assert check.status == "fail"
    assert check.detail.endswith("installed; systemctl not found on PATH")
    assert check.fix.startswith("this machine has no systemd; run 'memoryd run' under your own")


def test_cli_exit_code_and_json(world: World) -> None:
    done = run_cli("doctor", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads(done.stdout)
    assert data["ok"] is True
    assert {c["name"]: c["status"] for c in data["checks"]}["remote"] == "ok"
    git(world.root, "remote", "remove", "origin")
    done = run_cli("doctor")
    assert done.returncode == 1
    assert f"FAIL  remote    {world.root}: no remote 'origin'\n" in done.stdout
    assert f"fix: git -C {world.root} remote add origin" in done.stdout


def test_a_broken_config_is_a_check_and_the_others_still_run(world: World) -> None:
    """The doctor is where a user with a broken config.yaml turns: the file is one failed
    check with its fix; git, the index, the service and the daemon are still checked, and
    the roots (unknown until the file loads) are not guessed at."""
    config = world.ctx.paths.config_file
    config.write_text(f"roots:\n  - path: {world.root}\n    scope: globl\n")
    done = run_cli("doctor")
    assert (done.returncode, done.stderr) == (1, "")
    lines = done.stdout.splitlines()
    assert lines[:4] == [
        "ok    git       " + lines[0].split("git       ", 1)[1],
        f"FAIL  config    {config}: roots[0].scope: must be one of global, team, project, got 'globl' (did you mean 'global'?)",
        f"                fix: edit {config} (see docs/config.md)",
        "SKIP  inotify   no roots known until config.yaml loads",
    ]
    data = json.loads(run_cli("doctor", "--json").stdout)
    assert {c["name"]: c["status"] for c in data["checks"]} == {
        "git": "ok", "config": "fail", "inotify": "skip", "disk": "ok", "private": "ok",
        "index": "ok", "service": "ok", "daemon": "ok",
    }  # fmt: skip
    config.write_text(f"roots:\n  - path: {world.root}\n")
    assert run_cli("doctor").returncode == 0


def test_doctor_follows_a_real_daemon_until_it_is_killed(world: World, tmp_path: Path) -> None:
    from memoryd.app import App
    from tests.daemon.harness import DaemonProcess

    world.lock.release()
    world.ctx.paths.status_file.unlink()
    daemon = DaemonProcess(tmp_path)
    try:
        daemon.wait_ready(App())
        check = world.check("daemon")
        assert (check.status, check.detail.split(",")[0]) == (
            "ok", f"daemon pid {daemon.proc.pid} running",
        )  # fmt: skip
    finally:
        daemon.kill()  # SIGKILL: no stopped_at written
    check = world.check("daemon")
    assert check.status == "fail"
    assert check.detail.startswith(f"the daemon status is stale: pid {daemon.proc.pid} is gone")


def test_a_root_git_will_not_work_in_is_named_not_a_missing_remote(world: World) -> None:
    """A root another user owns (git's "dubious ownership"): every git command in it fails,
    and doctor said "no remote 'origin'" of a root whose remote was there. (git's own switch
    stands in for a folder of another owner, which needs root to make.)"""
    env = {**world.ctx.env, "GIT_TEST_ASSUME_DIFFERENT_OWNER": "1"}
    check = world.check("root", env=env)
    assert (check.status, check.detail) == (
        "fail",
        f"{world.root}: git will not work in it: fatal: detected dubious ownership in "
        f"repository at '{world.root}'",
    )
    assert check.fix == (
        f"if the folder is yours: git config --global --add safe.directory {world.root} (or "
        f"give it back to your user: chown -R $(id -un) {world.root})"
    )
    assert "remote" not in world.statuses(env=env)
