"""Reaching the remote: the user's own ssh setup is used, and a failure says why in one line.

Through the real CLI, real git and a local bare remote; "ssh" is a script that runs the
remote command on this machine (the host is ignored), as a stand-in for a real server.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from memoryd.sync.state import load_state
from tests.helpers import git, run_cli
from tests.sync.world import World, memory

FAKE_SSH = """#!/bin/sh
for last; do :; done
echo "$0 $*" >> "{log}"
exec sh -c "$last"
"""


def _sync_a(world: World) -> subprocess.CompletedProcess[str]:
    saved = os.environ["MEMORYD_HOME"]
    os.environ["MEMORYD_HOME"] = str(world.a.paths.home)
    try:
        return run_cli("sync")
    finally:
        os.environ["MEMORYD_HOME"] = saved


def _script(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o755)
    return path


def test_a_remote_path_that_vanished_names_git_s_reason_not_its_boilerplate(
    world: World,
) -> None:
    """git's stderr ends with "Please make sure you have the correct access rights / and the
    repository exists."; its last line alone told nothing."""
    world.remote.rename(world.remote.with_name("moved.git"))
    world.a.write("facts/x.md", memory("facts/x", "x", "written while the remote moved\n"))
    done = _sync_a(world)
    assert done.returncode == 1
    assert done.stdout.splitlines()[1] == (
        f"  error: git fetch origin: fatal: '{world.remote}' does not appear to be a git repository"
    )


def test_an_ssh_host_that_does_not_resolve_is_named(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    failing = _script(
        tmp_path / "ssh-fails",
        "#!/bin/sh\necho 'ssh: Could not resolve hostname memhost: Name or service not known'"
        " >&2\nexit 255\n",
    )
    monkeypatch.setenv("GIT_SSH_COMMAND", str(failing))
    git(world.a.root, "remote", "set-url", "origin", f"memhost:{world.remote}")
    world.a.write("facts/x.md", memory("facts/x", "x", "written on a train\n"))
    done = _sync_a(world)
    assert done.returncode == 1
    assert done.stdout.splitlines()[1] == (
        "  error: git fetch origin: ssh: Could not resolve hostname memhost: "
        "Name or service not known"
    )


@pytest.mark.parametrize("how", ["core.sshCommand", "GIT_SSH"])
def test_the_users_own_ssh_command_reaches_the_remote(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """docs/service.md's key only for memory sync (git config core.sshCommand 'ssh -i <key>'),
    or GIT_SSH (plink): the fetch and push by hand use it, and memoryd's batch-mode ssh, set as
    GIT_SSH_COMMAND, beat both, so every sync was offline while git by hand worked."""
    log = tmp_path / "ssh.log"
    ssh = _script(tmp_path / "my-ssh", FAKE_SSH.format(log=log))
    if how == "core.sshCommand":
        git(world.a.root, "config", "core.sshCommand", f"{ssh} -i ~/.ssh/memoryd_key")
    else:
        monkeypatch.setenv("GIT_SSH", str(ssh))
    git(world.a.root, "remote", "set-url", "origin", f"memhost:{world.remote}")
    world.a.write("facts/x.md", memory("facts/x", "x", "pushed with my own key\n"))
    done = _sync_a(world)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith(f"{world.a.root}: ok: pushed")
    assert "facts/x" in git(world.remote, "log", "-1", "--format=%s", "main")
    said = log.read_text()
    assert "git-upload-pack" in said and "git-receive-pack" in said
    assert ("-i " in said) == (how == "core.sshCommand")


def test_plain_ssh_runs_in_batch_mode_and_a_chosen_one_without_askpass(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from memoryd import gitcli

    for key in ("GIT_SSH_COMMAND", "GIT_SSH", "SSH_ASKPASS_REQUIRE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("GIT_ASKPASS", "my-token-printer")
    assert gitcli.net_env(None) == {"GIT_SSH_COMMAND": "ssh -o BatchMode=yes"}
    assert gitcli.net_env("ssh -i key") == {"SSH_ASKPASS_REQUIRE": "never"}
    monkeypatch.setenv("GIT_SSH_COMMAND", "ssh -p 2222")
    assert gitcli.net_env(None) == {"SSH_ASKPASS_REQUIRE": "never"}
    monkeypatch.setenv("SSH_ASKPASS_REQUIRE", "force")
    assert gitcli.net_env(None) == {}


def test_a_sync_waiting_on_a_silent_remote_is_named_by_the_one_it_blocks(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A memoryd sync stuck on an ssh that never answers holds the repository's lock: the other
    sync said "(the daemon syncs this repository now)" though no daemon ran. Now it names
    the holder's pid and command, and how long such a wait lasts."""
    import signal
    import sys
    import time

    from memoryd.sync.engine import sync_root

    hang = _script(tmp_path / "ssh-hangs", "#!/bin/sh\nexec sleep 600\n")
    git(world.a.root, "remote", "set-url", "origin", f"memhost:{world.remote}")
    env = {**os.environ, "MEMORYD_HOME": str(world.a.paths.home), "GIT_SSH_COMMAND": str(hang)}
    stuck = subprocess.Popen(
        [sys.executable, "-m", "memoryd", "sync"], env=env, start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        locks = world.a.paths.state_dir / "sync"
        deadline = time.monotonic() + 30
        while not any(f"pid {stuck.pid}," in p.read_text() for p in locks.glob("*.lock")):
            assert time.monotonic() < deadline, "the stuck sync never took the lock"
            time.sleep(0.1)
        outcome = sync_root(
            world.a.config, world.a.paths, world.a.root_config, force=True, lock_wait_s=0.2
        )
    finally:  # Ctrl-C: the CLI kills its git and the ssh with it (gitcli.run)
        stuck.send_signal(signal.SIGINT)
        stuck.wait(timeout=30)
    assert (outcome.status, outcome.error, outcome.hint) == (
        "busy",
        f"another memoryd sync (pid {stuck.pid}, memoryd sync) is running on {world.a.root}",
        "wait for it to finish and try again (a fetch or push waits up to 120 s for a remote "
        "that does not answer)",
    )


def test_a_remote_that_never_answers_is_told_after_one_timeout_not_two(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A listener that accepts and never answers: the default-branch probe (ls-remote) timed
    out, then the fetch waited its own whole timeout for the same silence ('memoryd sync' took
    4 minutes to say "git fetch origin timed out"), and every cycle backing off asked again."""
    import socket
    import time

    from memoryd.sync import remote
    from memoryd.sync.engine import sync_root

    silent = socket.create_server(("127.0.0.1", 0))  # the kernel accepts; nobody answers
    port = silent.getsockname()[1]
    try:
        git(world.a.root, "remote", "set-url", "origin", f"http://127.0.0.1:{port}/memory.git")
        subprocess.run(
            ["git", "update-ref", "-d", "refs/remotes/origin/HEAD"], cwd=world.a.root, check=False
        )
        monkeypatch.setattr(remote, "NET_TIMEOUT_S", 2.0)
        world.a.write("facts/x.md", memory("facts/x", "x", "written while the remote hangs\n"))
        started = time.monotonic()
        outcome = world.a.sync()
        took = time.monotonic() - started
        assert (outcome.status, outcome.error) == (
            "offline",
            "git ls-remote origin timed out: origin did not answer in 2 s",
        )
        assert outcome.commits and outcome.not_pushed == 1
        assert took < 3.5, f"waited {took:.1f} s for two timeouts of 2 s"
        started = time.monotonic()
        daemon = sync_root(world.a.config, world.a.paths, world.a.root_config)  # backing off
        assert time.monotonic() - started < 1.5
        assert (daemon.status, daemon.error) == ("offline", outcome.error)
    finally:
        silent.close()


ASKS_FOR_A_PASSWORD = """
import http.server, sys
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="memory"')
        self.send_header("Content-Length", "0")
        self.end_headers()
    do_POST = do_GET
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


@pytest.mark.parametrize("own", [False, True])
def test_an_https_remote_that_wants_a_password_opens_no_window(
    world: World, tmp_path: Path, own: bool
) -> None:
    """A desktop session's SSH_ASKPASS (ksshaskpass) is git's last resort for an https
    password, and GIT_TERMINAL_PROMPT=0 does not stop it: every daemon cycle opened a password
    window (twice: the branch probe and the fetch), and the hint said to wait for the remote
    to come back. The user's own GIT_ASKPASS (one that prints a token) still runs."""
    import sys

    asked = tmp_path / "asked.log"
    dialog = _script(tmp_path / "askpass", f'#!/bin/sh\necho "$1" >> "{asked}"\necho hunter2\n')
    server = subprocess.Popen(
        [sys.executable, "-c", ASKS_FOR_A_PASSWORD], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        port = server.stdout.readline().strip()
        git(world.a.root, "remote", "set-url", "origin", f"http://127.0.0.1:{port}/memory.git")
        world.a.write("facts/x.md", memory("facts/x", "x", "written behind a login\n"))
        env = {**os.environ, "MEMORYD_HOME": str(world.a.paths.home), "DISPLAY": ":0"}
        env.pop("GIT_ASKPASS", None)
        env["GIT_ASKPASS" if own else "SSH_ASKPASS"] = str(dialog)
        done = subprocess.run(
            [sys.executable, "-m", "memoryd", "sync"], env=env, capture_output=True, text=True,
            stdin=subprocess.DEVNULL, timeout=60, check=False,
        )  # fmt: skip
    finally:
        server.kill()
        server.wait()
    assert done.returncode == 1, done.stdout + done.stderr
    if own:
        assert asked.read_text().splitlines()[0] == f"Username for 'http://127.0.0.1:{port}': "
        return
    assert not asked.exists(), asked.read_text()
    assert done.stdout.splitlines()[1:3] == [
        f"  error: git fetch origin: fatal: could not read Username for "
        f"'http://127.0.0.1:{port}': terminal prompts disabled",
        f"  hint: origin wants credentials and memoryd never asks for them: run "
        f"'git -C {world.a.root} fetch origin' in a terminal and set up a credential helper or "
        "an ssh key so it works without a prompt; memoryd keeps committing locally meanwhile",
    ]


def test_status_says_what_to_do_about_the_last_failed_sync(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The daemon's sync failed on credentials: 'memoryd status' showed git's line and no next
    step, and its JSON's fix said memoryd retries on its own, which never helps there."""
    import json
    import sys

    from memoryd.daemon.status import StatusBoard
    from memoryd.runlock import DaemonLock

    server = subprocess.Popen(
        [sys.executable, "-c", ASKS_FOR_A_PASSWORD], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        port = server.stdout.readline().strip()
        git(world.a.root, "remote", "set-url", "origin", f"http://127.0.0.1:{port}/memory.git")
        world.a.write("facts/x.md", memory("facts/x", "x", "written behind a login\n"))
        monkeypatch.delenv("GIT_ASKPASS", raising=False)
        # its own state: waiting for the network never fixes a login, so no back-off either
        assert world.a.sync().status == "auth"
        assert load_state(world.a.paths, world.a.root).retry_after_ms == 0
    finally:
        server.kill()
        server.wait()
    monkeypatch.setenv("MEMORYD_HOME", str(world.a.paths.home))
    StatusBoard(world.a.paths.status_file).root(world.a.root, mode="events", state="watching")
    with DaemonLock(world.a.paths.lock_file):
        done = run_cli("status")
        data = json.loads(run_cli("status", "--json").stdout)
    assert done.returncode == 0, done.stderr
    fix = (
        f"origin wants credentials and memoryd never asks for them: run 'git -C {world.a.root} "
        "fetch origin' in a terminal and set up a credential helper or an ssh key so it works "
        "without a prompt; memoryd keeps committing locally meanwhile"
    )
    lines = done.stdout.splitlines()
    said = lines.index(
        f"  sync: {world.a.root}: last sync: git fetch origin: fatal: could not read Username "
        f"for 'http://127.0.0.1:{port}': terminal prompts disabled"
    )
    assert lines[said + 1] == f"    fix: {fix}"
    assert [p["fix"] for p in data["sync"] if p["code"] == "sync.error"] == [fix]


CHANGED_HOST_KEY = """@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@
@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @
@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@
IT IS POSSIBLE THAT SOMEONE IS DOING SOMETHING NASTY!
Someone could be eavesdropping on you right now (man-in-the-middle attack)!
Host key for memhost has changed and you have requested strict checking.
Host key verification failed."""


@pytest.mark.parametrize(
    ("said", "error"),
    [
        (
            "No ED25519 host key is known for memhost and you have requested strict checking.\n"
            "Host key verification failed.",
            "No ED25519 host key is known for memhost and you have requested strict checking.",
        ),
        (CHANGED_HOST_KEY, "WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!"),
    ],
)
def test_a_host_key_ssh_cannot_check_says_what_to_do(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, said: str, error: str
) -> None:
    """ssh in batch mode (memoryd's) never asks to trust a host key: the error was a line of
    @ signs for a changed key, and the hint said to wait for the remote to come back."""
    text = tmp_path / "ssh-said.txt"
    text.write_text(said + "\n")
    refusing = _script(tmp_path / "ssh-refuses", f"#!/bin/sh\ncat '{text}' >&2\nexit 255\n")
    monkeypatch.setenv("GIT_SSH_COMMAND", str(refusing))
    git(world.a.root, "remote", "set-url", "origin", f"memhost:{world.remote}")
    world.a.write("facts/x.md", memory("facts/x", "x", "written on a new laptop\n"))
    done = _sync_a(world)
    assert done.returncode == 1
    assert done.stdout.splitlines()[1:3] == [
        f"  error: git fetch origin: {error}",
        f"  hint: ssh could not check the host key of origin's host, and memoryd never asks to "
        f"trust one: run 'git -C {world.a.root} fetch origin' in a terminal, check the key it "
        "shows and accept it (ssh adds it to ~/.ssh/known_hosts); memoryd keeps committing "
        "locally meanwhile",
    ]


def test_a_remote_that_is_another_devices_memory_folder_says_to_use_a_bare_one(
    world: World,
) -> None:
    """Two laptops synced directly (the remote is the other one's memory folder): git never
    updates a branch a work tree has checked out, and the hint said to fix a protected branch,
    a hook or permissions on the remote."""
    git(world.a.root, "remote", "set-url", "origin", str(world.b.root))
    world.a.write("facts/x.md", memory("facts/x", "x", "for the other laptop\n"))
    done = _sync_a(world)
    assert done.returncode == 1
    assert done.stdout.splitlines()[1:3] == [
        "  error: origin refused the push (branch is currently checked out): error: refusing "
        "to update checked out branch: refs/heads/main",
        f"  hint: {world.b.root} is a repository with a work tree (another device's memory "
        "folder?), and git never pushes into its checked-out branch: make a bare repository "
        f"every device pushes to (git clone --bare {world.b.root} <new place>), then point "
        f"origin at it (git -C {world.a.root} remote set-url origin <new place>); memoryd "
        "keeps committing locally and pushes after that",
    ]


def test_a_local_git_failure_in_a_fetch_is_an_error_not_offline(world: World) -> None:
    """A repack racing the fetch ("unable to create temporary file"): the remote answered, the
    failure was this repository's, yet it was classed offline with the network back-off."""
    world.a.write("facts/x.md", memory("facts/x", "x", "to fetch\n"))
    assert world.a.sync().pushed
    pack = world.b.root / ".git/objects/pack"
    git(world.b.root, "config", "fetch.unpackLimit", "1")  # the fetch writes a pack
    done = subprocess.run(
        ["mount", "--bind", "-o", "ro", str(pack), str(pack)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"cannot bind-mount a read-only folder here: {done.stderr.strip()}")
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(pack)], check=True)
        outcome = world.b.sync()
    finally:
        subprocess.run(["umount", "-l", str(pack)], check=False)
    assert outcome.status == "error", outcome
    assert outcome.error is not None
    assert outcome.error.startswith("git fetch origin exited 128: fatal: Unable to create temp")
    assert load_state(world.b.paths, world.b.root).retry_after_ms == 0
    assert world.b.sync().ok and "to fetch" in world.b.read("facts/x.md")


def test_a_root_ahead_of_its_remote_too_long_is_a_problem_everywhere(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writes that stayed local for hours said only "1 commit(s) not pushed" in status, and
    nothing at all to the agent, whose user took them for synced."""
    import json

    from memoryd.app import App
    from memoryd.sync.report import sync_problems
    from memoryd.sync.state import save_state
    from memoryd.ui.views import sync_status

    world.remote.rename(world.remote.with_name("gone.git"))
    world.a.write("facts/x.md", memory("facts/x", "x", "written while the remote was gone\n"))
    assert world.a.sync().status == "offline"
    monkeypatch.setenv("MEMORYD_HOME", str(world.a.paths.home))
    app = App(env=dict(os.environ), cwd=world.a.root)
    counted = ("sync.not-pushed", "sync.ahead")
    [fresh] = [p for p in sync_problems(app.config, app.paths) if p.code in counted]
    assert (fresh.code, fresh.message) == ("sync.not-pushed", "1 commit(s) not pushed")
    state = load_state(world.a.paths, world.a.root)
    state.ahead_since_ms -= 3600 * 1000  # an hour ago (the default warns after 15 minutes)
    save_state(world.a.paths, state)
    [late] = [p for p in sync_problems(app.config, app.paths) if p.code in counted]
    said = (
        f"1 commit(s) of {world.a.root} not pushed for 60 min (git fetch origin: fatal: "
        f"'{world.remote}' does not appear to be a git repository): what is written there stays "
        "on this device until a sync reaches the remote"
    )
    assert (late.code, late.message) == ("sync.ahead", said)
    [row] = [r for r in sync_status(app) if r["root"] == str(world.a.root)]
    assert row["ahead"] == said
    done = run_cli("context", "--json", "anything")
    assert done.returncode == 0, done.stderr
    assert f"(memoryd: {said}; the user can run 'memoryd status')" in done.stdout
    codes = [p["code"] for p in json.loads(run_cli("status", "--json").stdout)["sync"]]
    assert "sync.ahead" in codes and "sync.not-pushed" not in codes
