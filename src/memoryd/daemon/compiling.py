"""Recompiling off the index's critical path.

A changed memory is searchable as soon as the worker has reindexed it; the
compile of ROOT.md and index.md (which reads the whole root) runs here, on its
own thread, with requests for the same root merged while it is busy. What a
compile wrote goes back to the worker to be indexed.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection
from pathlib import Path

log = logging.getLogger(__name__)

CompileFn = Callable[[Path, list[Path] | None], list[Path]]  # (root, changed) -> written
WrittenFn = Callable[[Path, list[Path]], None]


def merged(old: set[Path] | None, new: Collection[Path] | None, known: bool) -> set[Path] | None:
    """Changed paths of two requests for one root (None: compile everything)."""
    if (known and old is None) or new is None:
        return None
    return (old or set()) | set(new)


class Compiler(threading.Thread):
    def __init__(self, compile_root: CompileFn, on_written: WrittenFn) -> None:
        super().__init__(name="memoryd-compile", daemon=True)
        self.compile_root, self.on_written = compile_root, on_written
        self._pending: dict[Path, set[Path] | None] = {}
        self._busy = False
        self._stopping = False
        self._cond = threading.Condition()

    def request(self, root: Path, changed: Collection[Path] | None) -> None:
        with self._cond:
            known = root in self._pending
            self._pending[root] = merged(self._pending.get(root), changed, known)
            self._cond.notify_all()

    def wait_idle(self, timeout: float = 60) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: not self._pending and not self._busy, timeout)

    def stop(self) -> None:
        """Finish every pending compile, then end."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self.is_alive():
            self.join()

    def run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._pending or self._stopping)
                if not self._pending:
                    return
                work, self._pending, self._busy = self._pending, {}, True
            try:
                for root, changed in work.items():
                    self._compile(root, None if changed is None else sorted(changed))
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()

    def _compile(self, root: Path, changed: list[Path] | None) -> None:
        try:
            written = self.compile_root(root, changed)
        except Exception:
            log.exception("compiling %s failed; the next change or reconcile retries", root)
            return
        if written:
            self.on_written(root, written)
