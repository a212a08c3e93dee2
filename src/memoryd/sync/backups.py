"""Replay backups, made and expired: ``refs/memoryd/backup/<device>/<UTC time>[-N]``.

A replay keeps the local head it replaced at a backup ref (see
:func:`backup`); like git's reflog expiry, backups older
than the root's ``sync.backup_keep_days`` go after a sync that completed. Only
this device's refs are considered, the newest one always stays, and a ref whose
name is not a memoryd stamp is never touched.

A stamp later than now was written by a clock that ran ahead (a device set years into
the future, then corrected): measured against the right clock it never grew old, and
the backup outlived ``backup_keep_days`` for years. Such a backup is stamped again with
now, so it expires ``backup_keep_days`` after the clock came back.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from memoryd.conflicts import utc_stamp
from memoryd.gitcli import GitError
from memoryd.sync.repo import Repo

log = logging.getLogger(__name__)

PREFIX = "refs/memoryd/backup/"
_STAMP_RE = re.compile(r"^(?P<time>\d{8}T\d{6}Z)(?:-(?P<n>\d+))?$")


@dataclass(frozen=True)
class Backup:
    ref: str
    commit: str
    time: datetime
    number: int  # 1, or N of a ``-N`` suffix (two backups in the same second)


def parse(ref: str, commit: str, device: str) -> Backup | None:
    """The backup ``ref`` names, when it is one of ``device``'s with a memoryd stamp."""
    folder = f"{PREFIX}{device}/"
    if not ref.startswith(folder):
        return None
    found = _STAMP_RE.match(ref[len(folder) :])
    if found is None:
        return None
    try:
        time = datetime.strptime(found["time"], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    except ValueError:  # 20261399T...: not a stamp memoryd wrote
        return None
    return Backup(ref, commit, time, int(found["n"] or 1))


def expired(backups: list[Backup], now: datetime, keep_days: float) -> list[Backup]:
    """The backups older than ``keep_days`` (0 keeps all), never the newest one."""
    if keep_days <= 0 or not backups:
        return []
    newest = max(backups, key=lambda b: (b.time, b.number))
    cutoff = now - timedelta(days=keep_days)
    return sorted((b for b in backups if b is not newest and b.time < cutoff), key=lambda b: b.ref)


def listed(repo: Repo, device: str) -> list[Backup]:
    """``device``'s backups in ``repo``."""
    raw = repo.git.out("for-each-ref", "--format=%(refname) %(objectname)", f"{PREFIX}{device}/")
    pairs = (line.partition(" ") for line in raw.splitlines())
    found = (parse(ref, commit, device) for ref, _, commit in pairs)
    return [b for b in found if b is not None]


AHEAD = timedelta(days=1)  # a stamp this far past now came from a clock that ran ahead


def restamp(repo: Repo, device: str, now: datetime) -> list[Backup]:
    """``device``'s backups, those stamped in the future stamped again with ``now``."""
    found = listed(repo, device)
    if not any(b.time > now + AHEAD for b in found):
        return found
    for ahead in sorted(found, key=lambda b: (b.time, b.number)):
        if ahead.time <= now + AHEAD:
            continue
        new = backup(repo, device, utc_stamp(now), ahead.commit)
        repo.git.run("update-ref", "-d", ahead.ref, ahead.commit, check=False)
        log.info("backup %s was stamped by a clock that ran ahead: now %s", ahead.ref, new)
    return listed(repo, device)


def prune(repo: Repo, device: str, now: datetime, keep_days: float) -> list[str]:
    """Delete ``device``'s expired backups; the refs deleted (a failure is logged, not raised)."""
    gone = []
    for backup in expired(restamp(repo, device, now), now, keep_days):
        try:  # compare-and-delete: a ref moved meanwhile stays
            repo.git.run(
                "update-ref", "-m", "memoryd: backup expired", "-d", backup.ref, backup.commit
            )
        except GitError as exc:
            log.warning("could not delete the expired backup %s: %s", backup.ref, exc)
            continue
        gone.append(backup.ref)
    if gone:
        log.info(
            "pruned %d backup ref(s) older than %g days in %s: %s",
            len(gone), keep_days, repo.top, ", ".join(gone),
        )  # fmt: skip
    return gone


def backup(repo: Repo, device: str, stamp: str, commit: str) -> str:
    """Keep ``commit`` reachable under ``refs/memoryd/backup/<device>/<stamp>``."""
    ref = f"refs/memoryd/backup/{device}/{stamp}"
    number = 2
    while repo.git.rev(ref) is not None:
        ref = f"refs/memoryd/backup/{device}/{stamp}-{number}"
        number += 1
    repo.git.update_ref(ref, commit, None, "memoryd: backup before replay")
    return ref
