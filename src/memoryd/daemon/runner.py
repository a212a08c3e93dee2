"""``memoryd run``: the daemon's lifecycle, tying watcher, worker, scheduler and sync together.

Threads: watchdog's observers (queue only), the batch worker (all index and
compile work, owns the database), APScheduler (periodic reconcile, sync, the
roots check), the recall socket's server (reads only). The main thread only waits
for signals.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Collection
from pathlib import Path
from types import FrameType

from memoryd import fingerprint, gitcli
from memoryd.app import App
from memoryd.config.sections import Config, RootConfig
from memoryd.daemon.batch_worker import Cmd, Command, Worker
from memoryd.daemon.batching import Batch, root_of
from memoryd.daemon.compiling import Compiler
from memoryd.daemon.extracting import Extraction
from memoryd.daemon.gitops import GitOps
from memoryd.daemon.indexing import Engine
from memoryd.daemon.logs import OverflowTrap, daemon_logging
from memoryd.daemon.recall_server import RecallServer
from memoryd.daemon.rootguard import RootGuard
from memoryd.daemon.scheduler import Scheduler
from memoryd.daemon.status import StatusBoard, now_iso
from memoryd.daemon.syncing import Syncer
from memoryd.daemon.trim import Trimmer, one_arena
from memoryd.daemon.wake import SetBackDetector, WakeDetector
from memoryd.daemon.watch import ObserverFactory, Watcher, native_observer
from memoryd.errors import AlreadyRunning
from memoryd.runlock import DaemonLock

log = logging.getLogger(__name__)

INDEX_FAILED = "the index was not updated"
CLOCK_CHECK_S = 1.0  # how often the main thread compares the wall and monotonic clocks
RETRY_S = 30.0  # after a failed batch, a full reconcile this often until one succeeds
RETRY = f"recall misses those changes until a retry succeeds (every {RETRY_S:.0f} s)"
# The most of the daemon's time the inspect for the page may take: it parses every file
# (22 s of CPU at 100k memories, 164 s at 300k), and an agent saving a memory a minute
# kept a core a third busy at 100k with one after every burst.
INSPECT_SHARE = 0.05


def inspect_delay(after_s: float, last_cost_s: float, since_end_s: float) -> float:
    """How long from now the page's next inspect waits: ``after_s`` (a burst of saves is
    one run), and until the last run (``last_cost_s`` long, over ``since_end_s`` ago) is
    no more than :data:`INSPECT_SHARE` of the time from its start to the next one's."""
    return max(after_s, last_cost_s / INSPECT_SHARE - last_cost_s - since_end_s)


class Daemon:
    def __init__(self, app: App, *, native: ObserverFactory = native_observer) -> None:
        self.app, self.paths = app, app.paths
        self.config: Config = app.config
        settings = self.config.daemon
        self.lock = DaemonLock(self.paths.lock_file)
        self.status = StatusBoard(self.paths.status_file)
        self.recall = RecallServer(self.paths.state_dir)
        self.engine = Engine(self.paths)
        self.worker = Worker(
            self._settle, self._command, self._root_paths,
            quiet_s=settings.quiet_ms / 1000, max_wait_s=settings.max_wait_ms / 1000,
            burst_files=settings.burst_files, on_start=self.engine.open, on_stop=self.engine.close,
            on_failure=self._failed,
        )  # fmt: skip
        self.watcher = Watcher(self.worker.put, settings.poll_interval_s, native)
        self.compiler = Compiler(self._compile, self._compiled)
        self.gitops = GitOps()
        self.scheduler = Scheduler()
        self.guard = RootGuard(self.watcher, self.status, self._rescan, self._watch_setting)
        self.syncer = Syncer(
            self.scheduler, self.status, self.paths, lambda: self.config, self.guard.is_paused
        )
        self.overflow = OverflowTrap(lambda: self.worker.send(Cmd.RECONCILE))
        self.wake = WakeDetector()
        self._inspected = (0.0, 0.0)  # the last inspect's wall seconds, and its end (monotonic)
        self.set_back = SetBackDetector()  # read by the main thread, which waits for signals
        self.trimmer = Trimmer()
        self.extraction = Extraction(app, self.scheduler, self.config, native)
        self.stopping = threading.Event()
        self._config_stamp = fingerprint.of_path(self.paths.config_file)
        self._told_moved: dict[str, str] = {}  # a root's given path: where it led when told
        self._failed_at: float | None = None  # monotonic time of the last failed batch or retry
        self._reopen_due = 0.0  # monotonic time before which no new reopen is sent
        self._told_lock = ""  # why the lock could not be taken again, once told
        self._hooks: list[tuple[int, object]] = []

    # -- lifecycle
    def start(self) -> None:
        """Take the lock, serve at once, reconcile every root in the background."""
        began = time.time()  # before the status says we run: extraction counts changes since
        self.lock.acquire()
        self.status.update()
        self.recall.start()
        self.worker.start()
        self.compiler.start()
        self.watcher.start()
        self.overflow.install()
        for root in self.config.roots:
            self.guard.watch(root.path)
        self._schedule()
        self.scheduler.start()  # before the reconcile: a change it finds schedules a sync
        self.syncer.resume()  # a sync the last stop cut short
        self.worker.send(Cmd.RECONCILE)
        self._inspect_soon()
        self.extraction.start(since=began)
        log.info("memoryd %d serving %d roots", self.status.status.pid, len(self.config.roots))

    def stop(self) -> int:
        """Stop answering recall, flush the batch, finish the running job, stop scheduler,
        observer, compiler, database; the exit code (1: another daemon took over)."""
        self.recall.stop()  # from here on the lean path answers, and sees the lock held
        self.worker.send(Cmd.FLUSH, wait=True)
        self.extraction.stop()
        with gitcli.no_network():  # a sync waiting on a remote ends now, cut short
            self.scheduler.shutdown()
        self.overflow.remove()
        self.watcher.stop()
        self.worker.send(Cmd.RECONCILE, wait=True)  # whatever the observer had not reported
        self.compiler.stop()  # finishes pending compiles; their writes are queued for indexing
        self.worker.send(Cmd.STOP)
        self.worker.join()
        self.status.update(stopped_at=now_iso())
        self.lock.release()
        log.info("memoryd stopped")
        return 1 if self.status.detached else 0

    def serve(self, verbosity: int = 0, *, stderr: bool = True) -> int:
        """Run until SIGTERM or SIGINT (SIGHUP reloads config.yaml); exit code 0 (1 when
        another daemon took the lock after the state folder was deleted). ``stderr``:
        log to stderr too (not under launchd, whose stderr file nothing rotates)."""
        with daemon_logging(self.paths.log_file, verbosity, stderr=stderr):
            self._install_signals()
            try:
                one_arena()  # before start() runs the threads (see daemon/trim.py)
                self.start()
                while not self.stopping.wait(CLOCK_CHECK_S):
                    self.check_clock(time.monotonic(), time.time())
                log.info("stopping")
                code = self.stop()
            finally:
                self._restore_signals()
        return code

    # -- work on the batch worker thread
    def _settle(self, batch: Batch) -> None:
        started = time.perf_counter()
        for gone in batch.gone:
            self.guard.check(gone)
        dropped = self.engine.own.drop_own(batch.ops)
        if dropped:
            self.status.update(own_writes=self.status.snapshot().own_writes + dropped)
        roots = {r.path: r for r in self.config.roots}
        live = [p for p in roots if self.guard.live(p)]
        rescan = {r for r in (root_of(p, live) for p in batch.rescan) if r is not None}
        by_root: dict[Path, list[Path]] = {}
        for path in batch.ops:
            root = root_of(path, list(roots))
            if root in live and root not in rescan:
                by_root.setdefault(root, []).append(path)
        indexed = 0
        for path in sorted(rescan):
            indexed += self._refresh(roots[path], None)
        for path, changed in sorted(by_root.items()):
            indexed += self._refresh(roots[path], changed)
        for path in rescan | set(by_root):
            # a change another process wrote and indexed itself (memoryd remember, the MCP
            # server, the UI) leaves the index with nothing to change here, but git has a
            # change to commit and push: it waited for the next periodic sync (5 minutes)
            self.syncer.touch(roots[path])
        if by_root or rescan:
            self._inspect_soon()
            ms = round((time.perf_counter() - started) * 1000, 1)
            info = {"at": now_iso(), "files": indexed, "events": batch.events, "ms": ms}
            self.status.update(last_batch=info)
            log.info(
                "batch: %d events, %d files changed, %d rescans, %d own writes, %.1f ms",
                batch.events, indexed, len(rescan), dropped, ms,
            )  # fmt: skip

    def _command(self, command: Command) -> None:
        if command.cmd is Cmd.RELOAD:
            self._reload()
        elif command.cmd is Cmd.RECONCILE:
            self._reconcile(command.roots)
        elif command.cmd is Cmd.REINDEX:
            self._reindex(command)
        elif command.cmd is Cmd.REOPEN:
            self._reopen()

    def _failed(self, what: str, exc: Exception) -> None:  # batch worker thread
        """A batch or command raised (a full disk: 'database or disk is full'): its changes
        are not searchable, so say so in the status and retry soon, not in 10 minutes."""
        self._failed_at = time.monotonic()
        self.status.clear_problems(INDEX_FAILED)
        self.status.problem(f"{INDEX_FAILED}: {what}: {exc}; {RETRY}")

    def _reconcile(self, only_roots: tuple[Path, ...] | None) -> None:
        started = time.perf_counter()
        wanted = [r for r in self.config.roots if only_roots is None or r.path in only_roots]
        changed = 0
        for root in wanted:
            if self.guard.live(root.path):
                changed += self._refresh(root, None)
        if only_roots is None and self._failed_at is not None:  # every change is in again
            self._failed_at = None
            self.status.clear_problems(INDEX_FAILED)
            log.info("the index is up to date again")
        ms = round((time.perf_counter() - started) * 1000, 1)
        info = {"at": now_iso(), "ms": ms, "roots": len(wanted), "changed": changed}
        self.status.update(last_reconcile=info)
        log.info("reconcile: %d roots, %d changes, %.1f ms", len(wanted), changed, ms)

    def _reopen(self) -> None:
        """The index file is gone or another one (see Engine.replaced): open the file now at
        its path and index every root into it, since what it holds is unknown."""
        if not self.engine.replaced():
            return
        log.warning(
            "the index %s was deleted or replaced while memoryd ran: opening it again and "
            "indexing every root", self.paths.index_db,
        )  # fmt: skip
        self.engine.open()
        self._reopen_due = 0.0
        self._reconcile(None)

    def _refresh(self, root: RootConfig, only: Collection[Path] | None) -> int:
        """Reindex now (searchable at once), recompile on the compile thread. After a whole
        root (the start-up pass, a rescan, the periodic one) the index's big segments are
        merged if there are two, so no later save waits for it (memoryd.index.segments)."""
        changed = self.engine.refresh(self.config, root, only)
        if only is None:
            self.engine.tidy()
        self.trimmer.worked()
        if changed or only is None:
            self.compiler.request(root.path, None if only is None else changed)
        if changed:
            self.syncer.touch(root)
        return len(changed)

    def _compile(self, path: Path, changed: list[Path] | None) -> list[Path]:  # compile thread
        root = self._root(path)
        self.trimmer.worked()
        if root is None:
            return []
        hold = self.gitops.hold(path)
        if hold == "held":  # compiled whole once it ends (here, or on a tick)
            return []
        return self.engine.compile(self.config, root, None if hold == "ended" else changed)

    def _compiled(self, path: Path, written: list[Path]) -> None:  # compile thread
        self.worker.send(Cmd.REINDEX, (path,), paths=tuple(written))

    def _reindex(self, command: Command) -> None:
        root = self._root(command.roots[0]) if command.roots else None
        if root is not None and self.guard.live(root.path):
            self.engine.refresh(self.config, root, command.paths)
            self.trimmer.worked()  # a tick may have trimmed between the compile and this
            self.syncer.touch(root)

    def _root(self, path: Path) -> RootConfig | None:
        return next((r for r in self.config.roots if r.path == path), None)

    def _watch_setting(self, path: Path) -> str:
        root = self._root(path)
        return "auto" if root is None else root.watch

    def _reload(self) -> None:
        from memoryd.config.loader import load_config
        from memoryd.errors import MemorydError

        try:
            new = load_config(self.paths)
        except MemorydError as exc:
            log.error("config.yaml not reloaded: %s", exc)
            self.status.problem(f"config.yaml not reloaded: {exc.message}")
            return
        self.status.clear_problems("config.yaml")
        old, self.config = self.config, new
        before, after = {r.path for r in old.roots}, {r.path for r in new.roots}
        for path in before - after:
            self.guard.forget(path)
        for path in sorted(after - before):
            self.guard.watch(path)
            self._reconcile((path,))
        was = {r.path: r.watch for r in old.roots}
        for root in new.roots:
            if root.path in was and was[root.path] != root.watch:
                self.guard.rewatch(root.path)
        if new.daemon != old.daemon:
            self._schedule()
        self.extraction.reconfigure(new)
        added, removed = len(after - before), len(before - after)
        log.info("config reloaded: %d roots (%d added, %d removed)", len(after), added, removed)

    # -- timers (scheduler threads)
    def _schedule(self) -> None:
        settings = self.config.daemon
        self.scheduler.every("reconcile", settings.reconcile_interval_s, self._periodic_reconcile)
        self.scheduler.every("sync", settings.sync_interval_s, self.syncer.run_all)
        self.scheduler.every("tick", settings.root_check_s, self._tick)

    def _inspect_soon(self) -> None:
        cost, ended = self._inspected
        delay = inspect_delay(self.config.daemon.inspect_after_s, cost, time.monotonic() - ended)
        self.scheduler.after("inspect-cache", delay, self._inspect)

    def _inspect(self) -> None:
        """Inspect's findings stored for the page (memoryd.inspect_cache), a little after a
        batch of changes: one run for a burst of saves, not one per file. In a child process:
        its parse of every file must not stay in the daemon's memory (memoryd.inspect_cache)."""
        from memoryd.inspect_cache import refresh_apart

        began = time.monotonic()
        refresh_apart(self.app)  # config.yaml as it is now
        ended = time.monotonic()
        self._inspected = (ended - began, ended)

    def _periodic_reconcile(self) -> None:
        self.worker.send(Cmd.RECONCILE)

    def _rescan(self, root: Path) -> None:
        self.worker.send(Cmd.RECONCILE, (root,))

    def _tick(self) -> None:
        """Roots that vanished or came back; the index file deleted under the daemon;
        config.yaml changed; a resume from sleep; memory freed by work since the last tick
        handed back (see daemon/trim.py)."""
        if self.wake.check(time.monotonic(), time.time()):
            log.info("resumed after %.0f s asleep: syncing now", self.wake.last_gap_s)
            self.scheduler.now("sync-on-wake", self.syncer.run_all)
        if not self.lock.intact():
            self._retake_lock()
        self.status.restore()
        for root in self.config.roots:
            self.guard.check(root.path)
        for path in self.gitops.ended():
            self.compiler.request(path, None)
        if time.monotonic() >= self._reopen_due and self.engine.replaced():
            self._reopen_due = time.monotonic() + RETRY_S  # a reopen that fails: once each RETRY_S
            self.worker.send(Cmd.REOPEN)
        failed_at = self._failed_at
        if failed_at is not None and time.monotonic() - failed_at >= RETRY_S:
            self._failed_at = time.monotonic()  # one retry each RETRY_S, not one a tick
            self.worker.send(Cmd.RECONCILE)
        self.extraction.check()
        stamp = fingerprint.of_path(self.paths.config_file)
        if stamp != self._config_stamp:
            self._config_stamp = stamp
            log.info("config.yaml changed; reloading")
            self.worker.send(Cmd.RELOAD)
        elif self._moved_roots():
            self.worker.send(Cmd.RELOAD)
        if not self.worker.busy.is_set() and self.compiler.wait_idle(timeout=0):
            self.trimmer.idle()

    def _retake_lock(self) -> None:
        """The lock file is gone (the state folder deleted while the daemon ran): take the
        lock at its path again and write the status file and the recall socket anew, since
        a lock on a deleted file locks nothing: a second ``memoryd run`` started beside this
        one, and ``memoryd status`` and the doctor said that no daemon ran. When another
        daemon took the path's lock first, this one stops and leaves its files alone."""
        state = self.paths.state_dir
        try:
            self.lock.retake()
        except AlreadyRunning as exc:
            self.status.detach()
            log.error(
                "%s was deleted while memoryd ran, and another daemon (pid %s) took its "
                "lock: this one stops", state, exc.pid,
            )  # fmt: skip
            self.stopping.set()
            return
        except OSError as exc:  # a state folder that cannot be made again: told once
            if self._told_lock != str(exc):
                self._told_lock = str(exc)
                log.warning(
                    "%s was deleted while memoryd ran and cannot be made again: %s; "
                    "a second 'memoryd run' is not refused meanwhile", state, exc,
                )  # fmt: skip
            return
        self._told_lock = ""
        log.warning(
            "%s was deleted while memoryd ran: its lock, status file and recall socket "
            "are made again", state,
        )  # fmt: skip
        self.status.update()
        self.recall.stop()
        self.recall.start()

    def _moved_roots(self) -> bool:
        """Whether a root's configured path now leads elsewhere (its folder moved away and a
        symlink put in its place, or the reverse): the config resolved it once, so until a
        reload the daemon would index and sync the old path while every command reads the
        new one, and recall would find nothing there. Told once for each new place."""
        moved = False
        for root in self.config.roots:
            now = root.resolves_now()
            if now != str(root.path) and self._told_moved.get(root.given) != now:
                self._told_moved[root.given] = now
                log.info("root %s now leads to %s; reloading config.yaml", root.given, now)
                moved = True
        return moved

    def check_clock(self, mono: float, wall: float) -> None:
        """Main thread: a wall clock set back would hold every timer (they are wall-clock
        times, and the roots check that would notice is one of them): set them afresh
        from now, and sync at once for the debounced syncs that were waiting too."""
        if not self.set_back.check(mono, wall) or not self.scheduler.running:
            return
        log.info(
            "the clock was set back %.0f s: timers restarted, syncing now", self.set_back.last_s
        )
        self._schedule()
        self.scheduler.now("sync-after-set-back", self.syncer.run_all)

    def _root_paths(self) -> list[Path]:
        return [r.path for r in self.config.roots]

    # -- signals (main thread)
    def _install_signals(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for sig, handler in (
            (signal.SIGTERM, self._on_stop),
            (signal.SIGINT, self._on_stop),
            (signal.SIGHUP, self._on_hup),
        ):
            self._hooks.append((sig, signal.signal(sig, handler)))

    def _restore_signals(self) -> None:
        for sig, previous in self._hooks:
            signal.signal(sig, previous)  # type: ignore[arg-type]
        self._hooks.clear()

    def _on_stop(self, signum: int, frame: FrameType | None) -> None:
        self.stopping.set()

    def _on_hup(self, signum: int, frame: FrameType | None) -> None:
        self.worker.queue.put(Command(Cmd.RELOAD))  # SimpleQueue.put is safe in a handler
