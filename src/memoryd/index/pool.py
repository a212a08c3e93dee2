"""Loading a large batch of files in worker processes, with this process helping.

Workers are fresh interpreters started with ``python -m memoryd.index.worker``,
not forks and not ``multiprocessing`` (which re-runs the caller's main script):
a daemon's threads and locks never leak into them, and a worker that fails to
start or dies only means the rest is loaded here.

Work goes out a small chunk at a time, at most :data:`AHEAD` chunks per worker,
and whenever no worker has an answer ready this process loads the next chunk
itself. So on two cores one worker and this process (which also writes SQLite)
share the work in whatever ratio their speeds give, with no tuning.

Requests are pickles on the worker's stdin, each under :data:`CHUNK_BYTES` so
it always fits in a pipe's buffer (a worker blocked on writing its answer never
blocks us writing the next request). Answers are length-prefixed pickles, so a
selector on the raw pipe says exactly when one is ready.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import selectors
import struct
import subprocess
import sys
from collections import deque
from collections.abc import Iterator, Sequence

from memoryd.config.sections import RootConfig
from memoryd.index.loader import Failed, Loaded, Spread, load_many

log = logging.getLogger(__name__)
CHUNK_BYTES = 8 * 1024  # encoded paths per request at most (pipes hold 16-64 KiB)
AHEAD = 2  # requests a worker may have queued
TIMEOUT = 60.0  # seconds without any answer before the workers are given up
HEADER = struct.Struct("<Q")
WORKER = [sys.executable, "-m", "memoryd.index.worker"]

Item = tuple[str, str | None]  # (path, old hash)
Result = Loaded | Failed


class WorkerError(Exception):
    """A worker answered out of step, went quiet or died."""


def chunks(items: Sequence[Item], most: int) -> list[list[Item]]:
    """``items`` cut into requests of at most ``most`` files and about :data:`CHUNK_BYTES`."""
    out: list[list[Item]] = []
    current: list[Item] = []
    size = 0
    for item in items:
        cost = len(item[0].encode("utf-8", "surrogateescape")) + 64
        if current and (len(current) >= most or size + cost > CHUNK_BYTES):
            out.append(current)
            current, size = [], 0
        current.append(item)
        size += cost
    return [*out, current] if current else out


def load_parallel(
    root: RootConfig, items: Sequence[Item], cap: int, workers: int, spread: Spread
) -> Iterator[tuple[str, Result]]:
    """``(path, load result)`` for every item, in the order they finish."""
    todo = deque(chunks(items, spread.chunk))
    pool = _Pool(root, cap, list(spread.worker) or WORKER)
    try:
        pool.start(workers)
        yield from pool.run(todo)
    except (OSError, EOFError, pickle.UnpicklingError, WorkerError) as exc:
        log.warning("index: worker processes failed (%s); loading the rest in this process", exc)
        for chunk in [*pool.lost(), *todo]:
            yield from _load_here(root, cap, chunk)
    finally:
        pool.stop()


def _load_here(root: RootConfig, cap: int, chunk: list[Item]) -> Iterator[tuple[str, Result]]:
    return zip((path for path, _old in chunk), load_many(root, chunk, cap), strict=True)


class _Pool:
    def __init__(self, root: RootConfig, cap: int, command: list[str]) -> None:
        self.root, self.cap, self.command = root, cap, command
        self.procs: list[subprocess.Popen[bytes]] = []
        self.queued: dict[int, deque[list[Item]]] = {}  # by pid: sent, not yet answered

    def start(self, count: int) -> None:
        pipe = subprocess.PIPE
        for _ in range(count):
            proc = subprocess.Popen(self.command, stdin=pipe, stdout=pipe, bufsize=0)
            self.procs.append(proc)
            self.queued[proc.pid] = deque()
            _send(proc, (self.root, self.cap))

    def run(self, todo: deque[list[Item]]) -> Iterator[tuple[str, Result]]:
        for proc in self.procs:
            self.refill(proc, todo)
        while any(self.queued.values()):
            ready = self.ready(0.0 if todo else TIMEOUT)
            if ready:
                for proc in ready:
                    yield from self.answer(proc)
                    self.refill(proc, todo)
            elif todo:  # every worker is busy: lend a hand
                yield from _load_here(self.root, self.cap, todo.popleft())
            else:
                raise WorkerError(f"no answer from a worker in {TIMEOUT:.0f} s")
        for chunk in todo:  # only when there are no workers at all
            yield from _load_here(self.root, self.cap, chunk)

    def refill(self, proc: subprocess.Popen[bytes], todo: deque[list[Item]]) -> None:
        queued = self.queued[proc.pid]
        while todo and len(queued) < AHEAD:
            chunk = todo.popleft()
            queued.append(chunk)
            _send(proc, chunk)

    def ready(self, timeout: float) -> list[subprocess.Popen[bytes]]:
        busy = {p.stdout.fileno(): p for p in self.procs if self.queued[p.pid] and p.stdout}
        return [busy[fd] for fd in _readable(list(busy), timeout)]

    def answer(self, proc: subprocess.Popen[bytes]) -> Iterator[tuple[str, Result]]:
        assert proc.stdout is not None
        chunk = self.queued[proc.pid][0]
        (length,) = HEADER.unpack(_read_exactly(proc.stdout.fileno(), HEADER.size))
        results = _decode(_read_exactly(proc.stdout.fileno(), length))
        if not isinstance(results, list) or len(results) != len(chunk):
            raise WorkerError("a worker answered out of step")
        self.queued[proc.pid].popleft()
        yield from zip((path for path, _ in chunk), results, strict=True)

    def lost(self) -> list[list[Item]]:
        """The requests that were sent but never answered."""
        return [chunk for queued in self.queued.values() for chunk in queued]

    def stop(self) -> None:
        for proc in self.procs:
            with contextlib.suppress(OSError):
                assert proc.stdin is not None
                proc.stdin.close()  # end of input: the worker exits
        for proc in self.procs:
            try:
                proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()


def _send(proc: subprocess.Popen[bytes], message: object) -> None:
    assert proc.stdin is not None
    data = memoryview(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))
    while data:
        data = data[os.write(proc.stdin.fileno(), data) :]


def _decode(data: bytes) -> object:
    """A worker's answer, or :class:`WorkerError` whatever way it fails to decode.

    ``pickle.loads`` of a torn or garbled answer raises far more than
    ``UnpicklingError`` (``UnicodeDecodeError``, ``ValueError``, ``IndexError``,
    ``AttributeError``...); each only means this process loads the chunk itself.
    """
    try:
        return pickle.loads(data)  # our own worker's answer
    except Exception as exc:
        raise WorkerError(f"a worker's answer could not be read: {exc!r}") from exc


def _readable(fds: list[int], timeout: float) -> list[int]:
    """The fds with data (or end of file) within ``timeout`` seconds.

    A selector (epoll, kqueue), not ``select.select``: a daemon may hold more than
    1024 file descriptors, and select() cannot wait on those.
    """
    with selectors.DefaultSelector() as selector:
        for fd in fds:
            selector.register(fd, selectors.EVENT_READ)
        return [key.fd for key, _ in selector.select(timeout)]


def _read_exactly(fd: int, size: int) -> bytes:
    parts: list[bytes] = []
    while size:
        if not _readable([fd], TIMEOUT):
            raise WorkerError(f"a worker stopped mid-answer for {TIMEOUT:.0f} s")
        part = os.read(fd, min(size, 1 << 20))
        if not part:
            raise EOFError("a worker exited")
        parts.append(part)
        size -= len(part)
    return b"".join(parts)
