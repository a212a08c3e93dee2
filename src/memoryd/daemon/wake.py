"""Noticing that the machine woke up from sleep, so the daemon can pull at once.

The monotonic clock stops while the machine sleeps (``CLOCK_MONOTONIC`` on Linux,
``mach_absolute_time`` on macOS); the wall clock does not. So the gap
``wall - monotonic`` stays constant while the machine runs and jumps ahead by
the length of the sleep on resume. :class:`WakeDetector` watches that gap; it is
pure (fed clock readings, no I/O, no dependencies) so tests drive it with a fake
clock.

Use in the daemon loop (issue 5)::

    import time
    from memoryd.daemon.wake import WakeDetector

    wake = WakeDetector(threshold_s=60)
    while running:
        if wake.check(time.monotonic(), time.time()):
            log.info("resumed after %.0f s asleep: syncing now", wake.last_gap_s)
            schedule_sync_now()
        sleep_a_little()          # the check costs nothing; every tick or so is fine

A wall clock set forward by hand (or by NTP) by more than the threshold also
reads as a wake; the cost is one extra sync. A wall clock set backwards never
does; it only moves the baseline (:class:`SetBackDetector` reports that one).
"""

from __future__ import annotations

DEFAULT_THRESHOLD_S = 60.0


class WakeDetector:
    """Reports a resume from sleep when wall time outruns monotonic time.

    ``check(mono, wall) -> bool`` takes one reading of ``time.monotonic()`` and
    ``time.time()`` (seconds); it returns True once per jump of the gap by more
    than ``threshold_s``. The first reading only sets the baseline.
    """

    def __init__(self, threshold_s: float = DEFAULT_THRESHOLD_S) -> None:
        if threshold_s <= 0:
            raise ValueError(f"threshold_s must be positive, got {threshold_s!r}")
        self.threshold_s = threshold_s
        self._offset: float | None = None
        self.last_gap_s = 0.0  # how far the wall clock ran ahead at the last reported wake
        self.wakes = 0

    def check(self, mono: float, wall: float) -> bool:
        """Feed one (monotonic, wall) reading; True when the machine slept since the last."""
        offset = wall - mono
        previous, self._offset = self._offset, offset
        if previous is None:
            return False
        jump = offset - previous
        if jump <= self.threshold_s:
            return False
        self.last_gap_s = jump
        self.wakes += 1
        return True

    def reset(self) -> None:
        """Forget the baseline (the next reading starts afresh)."""
        self._offset = None


class SetBackDetector:
    """Reports the wall clock set back: NTP correcting a clock that ran ahead, a dual-boot
    machine whose hardware clock holds local time. The scheduler keeps its timers as
    wall-clock times (APScheduler 3 does), so after a set-back of an hour every periodic
    job (the roots check, the reconcile, the pull) would wait that hour out.

    ``check(mono, wall) -> bool`` as :meth:`WakeDetector.check`, for the other direction;
    ``last_s`` is how far the clock went back at the last report.
    """

    def __init__(self, threshold_s: float = DEFAULT_THRESHOLD_S) -> None:
        if threshold_s <= 0:
            raise ValueError(f"threshold_s must be positive, got {threshold_s!r}")
        self.threshold_s = threshold_s
        self._offset: float | None = None
        self.last_s = 0.0

    def check(self, mono: float, wall: float) -> bool:
        offset = wall - mono
        previous, self._offset = self._offset, offset
        if previous is None or previous - offset <= self.threshold_s:
            return False
        self.last_s = previous - offset
        return True
