"""The daemon's side of the recall socket: ``memoryd recall`` answered with everything warm.

A ``memoryd recall`` process spends most of its time starting Python and importing what
the query needs; the daemon has the imports loaded already. So it listens on
``<state folder>/recall.sock`` (mode 0600, and on Linux only for its own user, checked
with ``SO_PEERCRED``) and answers each request with :func:`memoryd.lean_recall.answer`,
run with the *client's* command line, folder and environment: exactly the lean path's
answer, hits counted here, or "fall back" wherever the lean path would decline (the
client then answers as without a daemon). The wire format is
:mod:`memoryd.recall_client`'s.

One thread serves one client at a time (an answer takes a few milliseconds) and keeps its
index connection open between answers (:class:`memoryd.lean_recall.Kept`: at 100k memories a
new connection's schema read and empty page cache cost more than the query); a client
that sends garbage, vanishes or dawdles costs it at most :data:`CONNECTION_TIMEOUT_S`,
never the daemon. The daemon holds the single-instance lock, so a socket file found at
start is a dead daemon's and is replaced; a state folder whose socket path is longer than
AF_UNIX allows has no socket (recall answers without the daemon then).
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import socket
import struct
import tempfile
import threading
import time
from pathlib import Path

from memoryd import fingerprint, lean_recall
from memoryd.fsutil import private_dirs
from memoryd.recall_client import (
    ERRORS,
    MAX_REQUEST,
    MAX_SOCKET_PATH,
    REPLY,
    REQUEST,
    SOCKET_NAME,
    receive,
)

log = logging.getLogger(__name__)

CONNECTION_TIMEOUT_S = 2.0  # for a client to send its request and take its reply
BACKLOG = 16
FALL_BACK = b"F"
_PEERCRED = struct.Struct("3i")  # struct ucred: pid, uid, gid


class BadRequest(ValueError):
    """Not a request of this format: the connection is dropped without a reply."""


class RecallServer:
    """``start()`` listens and serves on a thread of its own, ``stop()`` ends both."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / SOCKET_NAME
        self.counts = {"answered": 0, "fell back": 0, "refused": 0, "dropped": 0}
        self._listener: socket.socket | None = None
        self._wake: tuple[int, int] | None = None
        self._thread: threading.Thread | None = None
        self._kept = lean_recall.Kept()  # index connections, open between answers
        self._bound: tuple[int, int] | None = None  # the socket file this server bound

    def start(self) -> bool:
        """Listen on the socket (True), or log why there is none (False).

        The socket is bound in a private folder of its own (0700), made 0600 and renamed
        into place, so it is never reachable with a wider mode, and no umask (the
        process's, for every thread) is changed: the daemon binds it again from a timer
        thread when its state folder was deleted.
        """
        if len(os.fsencode(self.path)) > MAX_SOCKET_PATH:
            log.info(
                "no recall socket: %s is longer than a Unix socket's %d bytes; "
                "recall answers without the daemon", self.path, MAX_SOCKET_PATH,
            )  # fmt: skip
            return False
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            private_dirs(self.path.parent)
            self._bind(listener)  # over a dead daemon's socket: this one holds the lock
            listener.listen(BACKLOG)
        except OSError as exc:
            listener.close()
            log.warning("no recall socket at %s: %s; recall answers without the daemon",
                        self.path, exc)  # fmt: skip
            return False
        self._listener, self._wake = listener, os.pipe()
        self._thread = threading.Thread(target=self._serve, name="memoryd-recall", daemon=True)
        self._thread.start()
        log.info("answering recall on %s", self.path)
        return True

    def _bind(self, listener: socket.socket) -> None:
        """Bind ``listener`` at :attr:`path`, mode 0600, replacing what is there."""
        folder = tempfile.mkdtemp(prefix="", dir=self.path.parent)  # 8 letters: no longer
        try:
            private = os.path.join(folder, "s")
            listener.bind(private)
            os.chmod(private, 0o600)
            os.replace(private, self.path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(folder, "s"))
            os.rmdir(folder)
        self._bound = fingerprint.identity(self.path)

    def stop(self, timeout: float = 30.0) -> None:
        """Stop serving (the client being answered is answered first), remove the socket
        (only while it is the one bound: another daemon's is left alone)."""
        if self._thread is None or self._wake is None or self._listener is None:
            return
        os.write(self._wake[1], b"x")
        self._thread.join(timeout)
        if self._bound is not None and fingerprint.identity(self.path) == self._bound:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
        self._bound = None
        self._listener.close()
        for fd in self._wake:
            os.close(fd)
        self._thread = self._wake = self._listener = None
        log.info("recall socket closed: %s", ", ".join(f"{n} {k}" for k, n in self.counts.items()))

    def _serve(self) -> None:
        assert self._listener is not None and self._wake is not None
        listener, wake = self._listener, self._wake[0]
        poll = select.poll()  # not select(): a daemon's descriptors may pass 1024
        poll.register(listener, select.POLLIN)
        poll.register(wake, select.POLLIN)
        try:
            self._loop(listener, wake, poll)
        finally:
            self._kept.close()  # the connections are this thread's to close

    def _loop(self, listener: socket.socket, wake: int, poll: select.poll) -> None:
        while True:
            if any(fd == wake for fd, _event in poll.poll()):
                return
            try:
                conn, _ = listener.accept()
            except OSError:  # the client gave up before it was accepted
                continue
            with conn:
                try:
                    self._handle(conn)
                except (OSError, ValueError) as exc:  # the client's doing: it falls back
                    self.counts["dropped"] += 1
                    log.debug("recall client dropped: %s", exc)
                except Exception:  # a bug here must not end the serving
                    self.counts["dropped"] += 1
                    log.exception("recall request failed")

    def _handle(self, conn: socket.socket) -> None:
        deadline = time.monotonic() + CONNECTION_TIMEOUT_S
        if not _same_user(conn):
            self.counts["refused"] += 1
            log.warning("recall socket: refused a client of another user")
            return
        head = receive(conn, 8, deadline)
        size = int.from_bytes(head[4:], "big")
        if head[:4] != REQUEST or size > MAX_REQUEST:
            raise BadRequest("not a recall request")
        argv, env, cwd, errors = parse_request(receive(conn, size, deadline))
        reply = _answer(argv, env, cwd, errors, self._kept)
        conn.settimeout(max(deadline - time.monotonic(), 0.01))
        conn.sendall(REPLY + len(reply).to_bytes(4, "big") + reply)
        self.counts["fell back" if reply == FALL_BACK else "answered"] += 1


def _answer(
    argv: list[str], env: dict[str, str], cwd: str, errors: tuple[str, str],
    kept: lean_recall.Kept,
) -> bytes:  # fmt: skip
    """The reply's body: the lean path's answer encoded as the client's streams would."""

    def encodable(out: str, note: str) -> bool:
        try:
            out.encode("utf-8", errors[0])
            note.encode("utf-8", errors[1])
        except UnicodeEncodeError:
            return False
        return True

    answered = lean_recall.answer(argv, env, cwd, encodable, kept)
    if answered is None:
        return FALL_BACK
    code, out, err = answered
    stdout = out.encode("utf-8", errors[0])
    try:
        stderr = err.encode("utf-8", errors[1])
    except UnicodeEncodeError:  # a warning naming a root: the hits are counted already
        stderr = err.encode("utf-8", "backslashreplace")
    return b"A" + bytes([code & 0xFF]) + len(stdout).to_bytes(4, "big") + stdout + stderr


def parse_request(body: bytes) -> tuple[list[str], dict[str, str], str, tuple[str, str]]:
    """(argv, environment, cwd, stdout's and stderr's error handlers) of a request body."""
    fields = [f.decode("utf-8", "surrogateescape") for f in body.split(b"\0")]
    if len(fields) < 4 or not fields[3].isdigit():
        raise BadRequest("a recall request needs its streams, folder and arguments")
    out_errors, err_errors, cwd, count = fields[:4]
    argc = int(count)
    if out_errors not in ERRORS or err_errors not in ERRORS or not os.path.isabs(cwd):
        raise BadRequest("a recall request's streams or folder are not usable")
    if len(fields) < 4 + argc:
        raise BadRequest("a recall request's arguments are cut short")
    env = {}
    for item in fields[4 + argc :]:
        split = item.find("=", 1)
        if split < 0:
            raise BadRequest("a recall request's environment is not KEY=VALUE")
        env[item[:split]] = item[split + 1 :]
    return fields[4 : 4 + argc], env, cwd, (out_errors, err_errors)


def _same_user(conn: socket.socket) -> bool:
    """On Linux, whether the peer runs as this user (elsewhere the socket's mode decides)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return True
    _pid, uid, _gid = _PEERCRED.unpack(conn.getsockopt(socket.SOL_SOCKET, option, _PEERCRED.size))
    return bool(uid == os.getuid())
