"""Handing memory freed after a burst of work back to the system (glibc's malloc_trim).

Python frees a compile's or a reconcile's temporary objects, but glibc keeps the
freed pages of its arenas (one per thread that allocates) for reuse: after a few
edits at 10k memories that is ~15 MB of the daemon's RSS that nothing uses.
``malloc_trim(0)`` returns them. The daemon calls :meth:`Trimmer.idle` from its
periodic tick; it trims only when work was done since the last trim and nothing
is running now, so an idle daemon never trims and a busy one never stalls on it.
Where there is no glibc (macOS, musl) it does nothing.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable

log = logging.getLogger(__name__)

TrimFn = Callable[[], object]


class Trimmer:
    def __init__(self, trim: TrimFn | None = None) -> None:
        self._trim = trim
        self._loaded = trim is not None
        self._dirty = False
        self.trims = 0

    def worked(self) -> None:
        """Some work ran (any thread): trim at the next quiet moment."""
        self._dirty = True

    def idle(self) -> bool:
        """Nothing runs now: trim if work was done since the last time. True if it trimmed."""
        if not self._dirty:
            return False
        self._dirty = False
        if not self._loaded:
            self._trim, self._loaded = glibc_trim(), True
        if self._trim is None:
            return False
        self._trim()
        self.trims += 1
        return True


def glibc_trim() -> TrimFn | None:
    """``malloc_trim(0)`` of this process's C library, or None where there is none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        function = ctypes.CDLL(None).malloc_trim  # the C library the process already uses
    except (OSError, AttributeError):  # musl has no malloc_trim
        log.debug("no malloc_trim here: freed memory stays with the allocator")
        return None
    function.argtypes = [ctypes.c_size_t]
    function.restype = ctypes.c_int
    return lambda: function(0)
