"""The batch worker: the one thread that turns queued changes into index work.

Changes wait for a quiet period (``quiet_ms``) but never longer than
``max_wait_ms`` from the first one; then the merged batch is handed to
``settle``. Commands (reconcile, reload, stop) go through the same queue, so
all index work happens on this thread, one thing at a time, in order.
"""

from __future__ import annotations

import enum
import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memoryd.daemon.batching import Batch, Change

log = logging.getLogger(__name__)


class Cmd(enum.Enum):
    RECONCILE = "reconcile"  # roots: the roots to rescan (None: all)
    REINDEX = "reindex"  # paths: files the compiler wrote, to index without recompiling
    RELOAD = "reload"
    REOPEN = "reopen"  # the index file was deleted or replaced: open it anew, reconcile all
    FLUSH = "flush"  # close the open batch now
    STOP = "stop"  # flush, finish what is queued, then end


@dataclass(frozen=True)
class Command:
    cmd: Cmd
    roots: tuple[Path, ...] | None = None
    done: threading.Event | None = None
    paths: tuple[Path, ...] = ()


Item = Change | Command


class Worker(threading.Thread):
    def __init__(
        self,
        settle: Callable[[Batch], None],
        command: Callable[[Command], None],
        roots: Callable[[], list[Path]],
        *,
        quiet_s: float,
        max_wait_s: float,
        burst_files: int,
        on_start: Callable[[], None] = lambda: None,
        on_stop: Callable[[], None] = lambda: None,
        on_failure: Callable[[str, Exception], None] = lambda what, exc: None,
    ) -> None:
        super().__init__(name="memoryd-batch", daemon=True)
        self.queue: queue.SimpleQueue[Item] = queue.SimpleQueue()
        self.settle, self.command, self.roots = settle, command, roots
        self.quiet_s, self.max_wait_s, self.burst_files = quiet_s, max_wait_s, burst_files
        self.on_start, self.on_stop, self.on_failure = on_start, on_stop, on_failure
        self.busy = threading.Event()  # set while a batch or command is being handled

    def put(self, change: Change) -> None:
        """Called from the observers' threads: queue and return at once."""
        self.queue.put(change)

    def send(
        self,
        cmd: Cmd,
        roots: tuple[Path, ...] | None = None,
        wait: bool = False,
        paths: tuple[Path, ...] = (),
    ) -> None:
        done = threading.Event() if wait else None
        self.queue.put(Command(cmd, roots, done, paths))
        if done is not None:
            done.wait()

    def run(self) -> None:
        self.on_start()
        try:
            self._loop()
        finally:
            self.on_stop()

    def _loop(self) -> None:
        while True:
            item = self.queue.get()
            later = self._collect(item) if isinstance(item, Change) else [item]
            for command in later:
                if not self._carry_out(command):
                    return

    def _collect(self, first: Change) -> list[Command]:
        """Gather changes until quiet or the maximum wait; settle them; return held commands."""
        batch = Batch()
        batch.add(first)
        held: list[Command] = []
        deadline = time.monotonic() + self.max_wait_s
        while True:
            timeout = min(self.quiet_s, deadline - time.monotonic())
            if timeout <= 0:
                break
            try:
                item = self.queue.get(timeout=timeout)
            except queue.Empty:
                break
            if isinstance(item, Command):
                held.append(item)
                if item.cmd in (Cmd.FLUSH, Cmd.STOP):
                    break
                continue
            batch.add(item)
            if len(batch.ops) > self.burst_files:
                batch.collapse(self.roots())
        self._run(lambda: self.settle(batch), "batch")
        return held

    def _carry_out(self, command: Command) -> bool:
        """Run one command; False when the worker must end."""
        try:
            if command.cmd is Cmd.STOP:
                self._drain()
                return False
            if command.cmd is not Cmd.FLUSH:
                self._run(lambda: self.command(command), command.cmd.value)
            return True
        finally:
            if command.done is not None:
                command.done.set()

    def _drain(self) -> None:
        """Settle every change and run every command still queued (nothing lost on the way out)."""
        batch = Batch()
        while True:
            try:
                item = self.queue.get_nowait()
            except queue.Empty:
                break
            if isinstance(item, Change):
                batch.add(item)
                continue
            self._settle_now(batch)
            batch = Batch()
            if item.cmd not in (Cmd.STOP, Cmd.FLUSH):
                self._run(lambda item=item: self.command(item), item.cmd.value)  # type: ignore[misc]
            if item.done is not None:
                item.done.set()
        self._settle_now(batch)

    def _settle_now(self, batch: Batch) -> None:
        if batch:
            if len(batch.ops) > self.burst_files:
                batch.collapse(self.roots())
            self._run(lambda: self.settle(batch), "final batch")

    def _run(self, func: Callable[[], None], what: str) -> None:
        self.busy.set()
        try:
            func()
        except Exception as exc:
            log.exception("%s failed; a reconcile will catch up", what)
            self.on_failure(what, exc)
        finally:
            self.busy.clear()
