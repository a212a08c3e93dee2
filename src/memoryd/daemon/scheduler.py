"""The daemon's timers: APScheduler 3's background scheduler, jobs coalesced, one at a time.

Periodic jobs (reconcile, sync, the roots check) run every N seconds; a
debounced job (sync after a batch) is one date job per key whose run time moves
on every ``after`` call, and it runs even while the key's last one still does.
Every job is wrapped so an exception is logged and the daemon carries on.
"""

from __future__ import annotations

import contextlib
import datetime
import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

Job = Callable[[], object]
JOB_DEFAULTS = {"coalesce": True, "max_instances": 1, "misfire_grace_time": None}
AFTER_INSTANCES = 3  # a debounced job: the one running, one waiting its turn, one to spare


def guarded(name: str, func: Job) -> Callable[[], None]:
    """Run ``func``; a failure is logged with its traceback, never raised."""

    def run() -> None:
        try:
            func()
        except Exception:
            log.exception("job %s failed; it will run again on schedule", name)

    run.__name__ = name
    return run


def _not_a_skipped_period(record: logging.LogRecord) -> bool:
    """False for APScheduler's warning that a periodic job was skipped because its last run
    still runs: that is what coalescing means (the sync still running is the one the period
    asked for), and a slow remote made it a cryptic line ('Execution of job
    "guarded.<locals>.run (trigger: interval[0:05:00] ...' skipped) every period."""
    message = record.getMessage()
    skipped = "skipped: maximum number of running instances" in message
    return not (skipped and "interval[" in message)


class Scheduler:
    def __init__(self) -> None:
        from apscheduler.schedulers.background import BackgroundScheduler

        said = logging.getLogger("apscheduler.scheduler")
        if _not_a_skipped_period not in said.filters:
            said.addFilter(_not_a_skipped_period)

        self._s: Any = BackgroundScheduler(timezone=datetime.UTC, job_defaults=JOB_DEFAULTS)
        self.running = False

    def start(self) -> None:
        self._s.start()
        self.running = True

    def every(self, key: str, seconds: float, func: Job) -> None:
        """Run ``func`` every ``seconds`` (replacing a job with the same key); 0 disables it."""
        if seconds <= 0:
            self.cancel(key)
            return
        self._s.add_job(
            guarded(key, func), "interval", seconds=seconds, id=key, replace_existing=True
        )

    def after(self, key: str, seconds: float, func: Job) -> None:
        """Run ``func`` once, ``seconds`` from now; calling again with the key moves it later.

        One may start while the key's last one still runs (a change saved during its sync):
        ``func`` waits its turn itself (the sync's lock). With the periodic jobs' limit of one
        the scheduler skipped it, and a date job skipped is gone: the change waited for the
        periodic sync, five minutes."""
        when = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=seconds)
        self._s.add_job(
            guarded(key, func), "date", run_date=when, id=key, replace_existing=True,
            max_instances=AFTER_INSTANCES,
        )  # fmt: skip

    def now(self, key: str, func: Job) -> None:
        self.after(key, 0, func)

    def cancel(self, key: str) -> None:
        from apscheduler.jobstores.base import JobLookupError

        with contextlib.suppress(JobLookupError):  # a date job removes itself once run
            self._s.remove_job(key)

    def has(self, key: str) -> bool:
        return self._s.get_job(key) is not None

    def shutdown(self) -> None:
        """Stop taking jobs and wait for the running ones to finish."""
        if self.running:
            self.running = False
            self._s.shutdown(wait=True)
