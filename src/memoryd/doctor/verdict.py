"""What ``memoryd doctor`` says about one thing, and the machine it examines.

A :class:`Verdict` is ok / warn / fail / skip with a one-line detail and, when not ok,
the fix. The checks (:mod:`memoryd.doctor.checks`, :mod:`memoryd.doctor.git`) are
functions of a :class:`Machine` returning verdicts; both import this module and never
each other's callers, so the git checks need not import the runner of all checks.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from memoryd.config.sections import Config
from memoryd.diskspace import free_space
from memoryd.paths import Paths

INOTIFY_WATCHES = Path("/proc/sys/fs/inotify/max_user_watches")
STATUSES = ("ok", "warn", "fail", "skip")


@dataclass(frozen=True)
class Verdict:
    name: str  # git, root, identity, remote, push-auth, inotify, disk, index, service, daemon,
    # client (one per agent client memoryd connect set up)
    status: str  # ok | warn | fail | skip
    detail: str
    fix: str = ""
    subject: str = ""  # the root a check is about ("" for machine-wide checks)


@dataclass
class Machine:
    """Everything the checks read; tests swap what they cannot own."""

    env: Mapping[str, str]
    paths: Paths
    config: Config
    manager: str = field(
        default_factory=lambda: "launchd" if sys.platform == "darwin" else "systemd"
    )
    inotify_file: Path = INOTIFY_WATCHES
    remote_timeout_s: float = 10.0
    free_bytes: Callable[[Path], int] = free_space


def ok(name: str, detail: str, subject: str = "") -> Verdict:
    return Verdict(name, "ok", detail, subject=subject)


def fail(name: str, detail: str, fix: str, subject: str = "") -> Verdict:
    return Verdict(name, "fail", detail, fix=fix, subject=subject)


def warn(name: str, detail: str, fix: str = "", subject: str = "") -> Verdict:
    return Verdict(name, "warn", detail, fix=fix, subject=subject)
