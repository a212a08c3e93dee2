"""``memoryd recall`` answered by the running daemon, over a Unix socket.

Starting Python and importing sqlite3, the tokenizer and the index's light modules costs
a recall more than its query (``import _socket`` alone costs less than a tenth of it). The
daemon runs on every machine and has all of that warm, so the console script's entry point
(:mod:`memoryd.entry`) first asks it: this module sends the command line, the folder and
the environment to ``<state folder>/recall.sock`` and writes the bytes it gets back.
The daemon's side is :mod:`memoryd.daemon.recall_server`, and its answer is the lean
path's (:func:`memoryd.lean_recall.answer`, run with this process's argv, cwd and
environment), or "fall back" wherever the lean path would decline.

It imports only :mod:`memoryd.homedirs`, and ``_socket`` once a socket file is there (the
``socket`` module imports enum, selectors and more); ``os``, ``sys`` and ``time`` are loaded
before any script runs.
Any failure before the first byte is written (no socket, a dead daemon's socket, a daemon
that does not answer within :data:`TIMEOUT_S`, a short or garbled reply, "fall back")
returns None having written nothing, and the entry point goes on as without a daemon.

The wire format, version 1 (lengths are 4-byte big-endian):

    request: b"MRQ1" length, then NUL-separated fields: stdout's and stderr's error
             handlers, the cwd, the number of arguments, the arguments, then the
             environment as KEY=VALUE items (all as this process has them, as bytes)
    reply:   b"MRA1" length, then b"F" (fall back), or b"A", the exit code (one byte),
             stdout's length, stdout's bytes and stderr's bytes (encoded as this
             process's streams would have encoded the lean path's texts)
"""

import os
import sys
import time

from memoryd.homedirs import folders

TYPE_CHECKING = False
if TYPE_CHECKING:
    import _socket
    from collections.abc import Mapping, Sequence
    from typing import TextIO

SOCKET_NAME = "recall.sock"  # in the daemon's state folder, next to daemon.lock
# How long a daemon that is alive but stuck may keep a recall waiting before it is
# answered without it (the answer itself takes a few milliseconds).
TIMEOUT_S = 2.0
MAX_SOCKET_PATH = 107  # bytes: AF_UNIX's sun_path, less its NUL
REQUEST, REPLY = b"MRQ1", b"MRA1"
MAX_REQUEST = 1 << 20  # an environment larger than this is not sent
MAX_REPLY = 1 << 26
# The error handlers the daemon encodes with (a stream with another is not used).
ERRORS = ("strict", "surrogateescape", "backslashreplace")


def socket_path(env: "Mapping[str, str]") -> str | None:
    """The recall socket of the daemon of the folders ``env`` gives, or None when those
    are the full path's to find or the path is too long for AF_UNIX (then there is none)."""
    dirs = folders(env)
    if dirs is None:
        return None
    path = os.path.join(dirs[2], SOCKET_NAME)
    return path if len(os.fsencode(path)) <= MAX_SOCKET_PATH else None


def ask(argv: "Sequence[str]") -> int | None:
    """Answer ``memoryd recall ARGV...`` through the daemon: the exit code, or None
    having written nothing."""
    out, err = sys.stdout, sys.stderr
    try:
        out_errors, err_errors = _errors(out, sys.__stdout__), _errors(err, sys.__stderr__)
        path = socket_path(os.environ)
        if path is None or out_errors is None or err_errors is None:
            return None
        if sys.getfilesystemencoding() != "utf-8":
            return None  # the daemon reads the fields as UTF-8
        if os.stat(path).st_mode & 0o170000 != 0o140000:  # S_ISSOCK
            return None
        fields = [out_errors, err_errors, os.getcwd(), str(len(argv)), *argv]
        request = b"\0".join([*(os.fsencode(f) for f in fields), *_environment()])
        if len(request) > MAX_REQUEST:
            return None
        reply = _exchange(path, REQUEST + len(request).to_bytes(4, "big") + request)
    except KeyboardInterrupt:
        return _interrupted(argv, out, err)
    except Exception:  # no daemon, a stuck or garbling one: answered without it
        return None
    if reply[:1] != b"A" or len(reply) < 6:
        return None
    size = int.from_bytes(reply[2:6], "big")
    if len(reply) < 6 + size:
        return None
    stdout, stderr = reply[6 : 6 + size], reply[6 + size :]
    if stdout:
        out.buffer.write(stdout)
        out.flush()
    if stderr:
        err.buffer.write(stderr)
        err.flush()
    return reply[1]


def _errors(stream: "TextIO | None", own: "TextIO | None") -> str | None:
    """The stream's error handler, when it is the interpreter's own UTF-8 stream with one
    the daemon can encode with (so the bytes it sends are the ones printing would give)."""
    if stream is None or stream is not own:
        return None
    encoding = stream.encoding.lower().replace("_", "-")
    errors = stream.errors
    return errors if encoding in ("utf-8", "utf8") and errors in ERRORS else None


def _environment() -> list[bytes]:
    return [key + b"=" + value for key, value in os.environb.items()]


def _exchange(path: str, request: bytes) -> bytes:
    """The reply's body, after its tag and length."""
    import _socket  # only once a socket is there: no daemon, no import

    deadline = time.monotonic() + TIMEOUT_S
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(TIMEOUT_S)
        sock.connect(path)
        sock.sendall(request)
        head = receive(sock, 8, deadline)
        size = int.from_bytes(head[4:], "big")
        if head[:4] != REPLY or size > MAX_REPLY:
            raise ValueError("not a recall reply")
        return receive(sock, size, deadline)
    finally:
        sock.close()


def receive(sock: "_socket.socket", size: int, deadline: float) -> bytes:
    """Exactly ``size`` bytes from ``sock`` by ``deadline`` (``time.monotonic``), or an
    OSError (the daemon's side reads requests with it too)."""
    chunks, got = [], 0
    while got < size:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("nothing came in time")
        sock.settimeout(left)
        chunk = sock.recv(min(size - got, 1 << 20))
        if not chunk:
            raise ConnectionError("the other side closed the connection")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _interrupted(argv: "Sequence[str]", out: "TextIO", err: "TextIO") -> int:
    """Ctrl-C while the daemon answers: what memoryd.cli (and the lean path) print."""
    err.write("memoryd: interrupted\n")
    if "--json" in argv:
        out.write('{"error": "interrupted", "hint": null, "exit": 130}\n')
    return 130
