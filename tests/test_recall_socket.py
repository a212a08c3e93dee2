"""``memoryd recall`` answered by a real ``memoryd run`` over its socket, or without it.

The daemon's answer must be the full CLI's bytes (tests/test_lean_recall.py's harness:
both paths as real processes on the same state, hit counts compared), found from the
client's folder and environment, never the daemon's; and a daemon that is missing, dead,
stuck or garbling must cost a recall nothing but the wait, with nothing written before
the answer that follows.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memoryd.app import App
from memoryd.daemon.recall_server import CONNECTION_TIMEOUT_S, parse_request
from memoryd.paths import resolve_paths
from memoryd.recall_client import (
    MAX_SOCKET_PATH,
    REPLY,
    REQUEST,
    SOCKET_NAME,
    TIMEOUT_S,
    _exchange,
    socket_path,
)
from memoryd.runlock import DaemonLock
from tests.daemon.harness import DaemonProcess
from tests.helpers import git
from tests.index.conftest import write_memory
from tests.test_lean_recall import ENTRY, LEAN_CASES, OLD, Home, Result, _world


def by_socket(result: Result) -> bool:
    """Answered by the daemon: the client loaded neither the lean path nor sqlite3."""
    never = {"memoryd.lean_recall", "memoryd.cli", "sqlite3"}
    return "memoryd.recall_client" in result.modules and not never & result.modules


class Served:
    def __init__(self, daemon: DaemonProcess) -> None:
        self.daemon = daemon

    def stop(self) -> str:
        """Stop the daemon; its last word on the socket (the counts)."""
        assert self.daemon.terminate() == 0, self.daemon.output()
        lines = [line for line in self.daemon.output().splitlines() if "recall socket" in line]
        return lines[-1].split("INFO: ", 1)[1]


def start_daemon(tmp_path: Path) -> DaemonProcess:
    daemon = DaemonProcess(tmp_path)
    daemon.wait_serving(App(), tmp_path / "scratch")
    return daemon


@pytest.fixture
def home(isolated_home: Path, tmp_path: Path) -> Home:
    return _world(Home(isolated_home, tmp_path))


@pytest.fixture
def served(home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Served]:
    """A real daemon, run from a folder of another project whose root also holds pnpm:
    an answer that looked for the project from the daemon's folder would show it."""
    decoy = tmp_path / "decoy"
    decoy.mkdir()
    git(decoy, "init", "-q")
    write_memory(decoy / ".memory", "pitfalls/decoy.md", "pnpm in the daemon's folder",
                 summary="decoy pnpm", updated=OLD)  # fmt: skip
    monkeypatch.chdir(decoy)
    daemon = start_daemon(tmp_path)
    try:
        yield Served(daemon)
    finally:
        daemon.kill()


def test_the_daemon_answers_with_the_full_paths_bytes(home: Home, served: Served) -> None:
    for args in LEAN_CASES:
        through, full = home.both(args)
        assert by_socket(through), f"{args}: not answered by the daemon\n{through.err}"
        through.same_as(full)  # exit code, stdout, stderr, and the hit counts written
        assert "decoy" not in through.out
    answered = len(LEAN_CASES)
    assert served.stop() == f"recall socket closed: {answered} answered, 0 fell back, 0 refused, 0 dropped"  # fmt: skip


def test_the_project_is_found_from_the_clients_folder(
    home: Home, served: Served, tmp_path: Path
) -> None:
    through, full = home.both(["recall", "pnpm"], cwd=home.repo)
    assert by_socket(through)
    through.same_as(full)
    assert "pitfalls/ci" in through.out and "decoy" not in through.out
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    through, full = home.both(["recall", "--json", "pnpm"], cwd=elsewhere)
    assert by_socket(through)
    through.same_as(full)
    assert '"id": "pitfalls/deploy"' in through.out and "pitfalls/ci" not in through.out


def test_no_hit_is_the_lean_paths_note(home: Home, served: Served) -> None:
    through, full = home.both(["recall", "nosuchwordanywhere"])
    assert by_socket(through)
    through.same_as(full)
    where = ", ".join(os.path.realpath(r) for r in (home.global_root, home.project_root))
    assert (through.code, through.out) == (0, "")
    assert through.err == (
        f"no memory matches 'nosuchwordanywhere' (searched {where}); "
        "try fewer or rarer words, or another language\n"
    )


def test_hits_are_counted_once(home: Home, served: Served) -> None:
    state = home.global_root / ".state.json"  # JSON, then a line per hit since

    def count() -> int:
        from memoryd.index.hits import read_hits

        return read_hits(state.parent)["pitfalls/deploy"]

    before = count()
    done = home.run(ENTRY, ["recall", "--scope", "global", "pnpm"], home.repo)
    assert done.returncode == 0 and "pitfalls/deploy" in done.stdout
    assert by_socket(Result(done, {}, set(home.probe.read_text().split())))
    assert count() == before + 1


def test_what_the_lean_path_declines_the_daemon_declines(home: Home, served: Served) -> None:
    """A changed config.yaml: no snapshot, so the daemon says "fall back" and the full
    CLI answers (and writes the snapshot); the next recall is the daemon's again."""
    config = resolve_paths().config_file
    config.write_text(config.read_text(encoding="utf-8") + "search:\n  limit: 1\n")
    past = time.time() - 60
    os.utime(config, (past, past))
    through, full = home.both(["recall", "pnpm"])
    assert "memoryd.cli" in through.modules  # the daemon declined; so did the lean path
    through.same_as(full)
    assert through.out.count("\n   matched: ") == 1
    home.settled_index()
    through, full = home.both(["recall", "pnpm"])
    assert by_socket(through)
    through.same_as(full)
    assert through.out.count("\n   matched: ") == 1


def hostile(path: Path, sends: bytes, then_close: bool = True) -> socket.socket:
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.connect(str(path))
    client.sendall(sends)
    if then_close:
        client.close()
    return client


def test_the_daemon_survives_hostile_clients(home: Home, served: Served) -> None:
    path = resolve_paths().state_dir / SOCKET_NAME
    hostile(path, b"GET / HTTP/1.1\r\nHost: memoryd\r\n\r\n")
    hostile(path, REQUEST[:2])  # gone inside the header
    hostile(path, REQUEST + (1000).to_bytes(4, "big") + b"strict\0")  # gone inside the body
    hostile(path, REQUEST + (1 << 30).to_bytes(4, "big"))  # a request no client sends
    body = b"strict\0strict\0/\0many\0recall"
    hostile(path, REQUEST + len(body).to_bytes(4, "big") + body)  # not a count of arguments
    slow = hostile(path, REQUEST, then_close=False)  # and then nothing
    slow.settimeout(CONNECTION_TIMEOUT_S + 30)
    assert slow.recv(1) == b""  # the daemon dropped it: it does not wait for ever
    slow.close()
    through, full = home.both(["recall", "部署"])
    assert by_socket(through), through.err
    through.same_as(full)
    assert served.stop() == "recall socket closed: 1 answered, 0 fell back, 0 refused, 6 dropped"


class FakeDaemon:
    """A listening socket where the daemon's would be, answering each request as told
    (``None``: never), and keeping what it was sent."""

    def __init__(self, path: Path, reply: bytes | None) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(path))
        self.listener.listen(4)
        self.reply = reply
        self.requests: list[bytes] = []
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.done.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            with conn:
                head = conn.recv(8, socket.MSG_WAITALL)
                body = b""
                while len(body) < int.from_bytes(head[4:], "big"):
                    body += conn.recv(1 << 16)
                self.requests.append(head + body)
                if self.reply is None:
                    self.done.wait(60)
                else:
                    conn.sendall(self.reply)

    def close(self) -> None:
        self.done.set()
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accept() (close would not)
        self.listener.close()
        self.thread.join(10)


@pytest.fixture
def fake(home: Home, request: pytest.FixtureRequest) -> Iterator[FakeDaemon]:
    daemon = FakeDaemon(resolve_paths().state_dir / SOCKET_NAME, request.param)
    yield daemon
    daemon.close()


def assert_request(sent: bytes, cwd: Path, argv: list[str]) -> None:
    assert sent[:4] == REQUEST and int.from_bytes(sent[4:8], "big") == len(sent) - 8
    got_argv, env, got_cwd, errors = parse_request(sent[8:])
    assert (got_argv, got_cwd) == (argv, str(cwd))
    assert env["MEMORYD_HOME"] == os.environ["MEMORYD_HOME"]
    assert errors[1] == "backslashreplace"  # stderr's, as Python sets it


GARBLED = [
    b"HTTP/1.1 400 Bad Request\r\n\r\n",  # another server
    REPLY + (50).to_bytes(4, "big") + b"A\0\0\0",  # cut short
    REPLY + (6).to_bytes(4, "big") + b"A\0\0\0\0\x09",  # stdout longer than the reply
    REPLY + (1 << 31).to_bytes(4, "big"),  # a reply no daemon sends
    REPLY + (1).to_bytes(4, "big") + b"F",  # "fall back"
    b"",  # closed without a word
]


@pytest.mark.parametrize("fake", GARBLED, indirect=True, ids=repr)
def test_a_garbled_reply_is_answered_without_the_daemon(home: Home, fake: FakeDaemon) -> None:
    lean, full = home.both(["recall", "--json", "pnpm"])
    assert lean.lean, "the lean path did not answer"
    lean.same_as(full)  # nothing of the reply written first
    assert '"id": "pitfalls/deploy"' in lean.out
    assert len(fake.requests) == 1  # the client asked (the full CLI never does)
    assert_request(fake.requests[0], home.repo, ["--json", "pnpm"])


@pytest.mark.parametrize("fake", [None], indirect=True, ids=["silent"])
def test_a_daemon_that_never_answers_is_given_up_on(home: Home, fake: FakeDaemon) -> None:
    started = time.monotonic()
    lean, full = home.both(["recall", "pnpm"])
    assert time.monotonic() - started >= TIMEOUT_S  # it waited for the daemon first
    assert lean.lean
    lean.same_as(full)
    assert "pitfalls/deploy" in lean.out
    assert_request(fake.requests[0], home.repo, ["pnpm"])
    started = time.monotonic()
    with pytest.raises(TimeoutError, match=r"^timed out$"):  # the socket's own
        _exchange(str(resolve_paths().state_dir / SOCKET_NAME), REQUEST + bytes(4))
    assert TIMEOUT_S <= time.monotonic() - started < TIMEOUT_S + 5


def test_a_dead_daemons_socket_is_answered_without_it(home: Home) -> None:
    path = resolve_paths().state_dir / SOCKET_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(path))
    stale.close()  # the file stays, nobody listens: ECONNREFUSED
    assert path.is_socket()
    lean, full = home.both(["recall", "pnpm"])
    assert lean.lean
    lean.same_as(full)
    with DaemonLock(resolve_paths().lock_file):  # a lock held, its socket gone
        lean, full = home.both(["recall", "部署"])
    assert lean.lean
    lean.same_as(full)


def test_a_new_daemon_replaces_a_dead_ones_socket(home: Home, tmp_path: Path) -> None:
    path = resolve_paths().state_dir / SOCKET_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(path))
    stale.close()
    daemon = start_daemon(tmp_path)  # ready: its status is written after its socket is bound
    try:
        assert path.stat().st_mode & 0o777 == 0o600
        through, full = home.both(["recall", "pnpm"])
        assert by_socket(through)
        through.same_as(full)
        assert Served(daemon).stop().startswith("recall socket closed: 1 answered")
        assert not path.exists()  # removed on stop
    finally:
        daemon.kill()


def test_a_socket_path_too_long_for_af_unix_means_no_socket(
    isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = tmp_path / ("deep-" * 12) / "memoryd-home"
    monkeypatch.setenv("MEMORYD_HOME", str(base))
    path = base / "state" / SOCKET_NAME
    assert len(os.fsencode(path)) > MAX_SOCKET_PATH
    assert socket_path(dict(os.environ)) is None
    home = _world(Home(base, tmp_path))
    daemon = DaemonProcess(tmp_path)
    try:
        daemon.wait_ready(App())
        wanted = (
            f"memoryd: INFO: no recall socket: {path} is longer than a "
            "Unix socket's 107 bytes; recall answers without the daemon"
        )
        assert wanted in daemon.output()  # logged before the daemon said it was ready
        assert not path.exists()
        lean, full = home.both(["recall", "pnpm"])
        assert lean.lean  # the daemon holds the lock: the lean path answers
        lean.same_as(full)
        assert "pitfalls/deploy" in lean.out
        assert daemon.terminate() == 0
    finally:
        daemon.kill()


def connect_as_nobody(path: str) -> str:
    """What a client of uid 65534 meets at ``path``: a forked child (exec would need an
    interpreter that user may run) drops to that user, connects and waits for a word."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: system calls only, then _exit
        outcome = b"?"
        try:
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            client.settimeout(30)
            client.connect(path)
            outcome = b"closed" if client.recv(1) == b"" else b"answered"
        except OSError as exc:
            outcome = type(exc).__name__.encode()
        finally:
            os.write(write, outcome)
            os._exit(0)
    os.close(write)
    try:
        return os.read(read, 100).decode()
    finally:
        os.close(read)
        os.waitpid(pid, 0)


@pytest.mark.skipif(
    not hasattr(socket, "SO_PEERCRED") or os.geteuid() != 0,
    reason="connecting as another user takes root; SO_PEERCRED is Linux's",
)
def test_another_users_client_is_refused(home: Home) -> None:
    from memoryd.daemon.recall_server import RecallServer

    state = resolve_paths().state_dir
    server = RecallServer(state)
    assert server.start()
    folder = os.open(state, os.O_RDONLY | os.O_DIRECTORY)
    try:
        # Through /proc's link to the folder, so the folders above tmp_path need not be
        # opened to the other user; the state folder must be searchable by it.
        os.chmod(state, 0o711)
        path = f"/proc/self/fd/{folder}/{SOCKET_NAME}"

        assert connect_as_nobody(path) == "PermissionError"  # the socket's mode: 0600
        os.chmod(server.path, 0o666)  # and were it open to all, its peer check
        assert connect_as_nobody(path) == "closed"
    finally:
        os.close(folder)
        server.stop()
    assert server.counts == {"answered": 0, "fell back": 0, "refused": 1, "dropped": 0}
