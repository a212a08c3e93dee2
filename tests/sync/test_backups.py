"""Replay backups expire like git's reflog: this device's, older than sync.backup_keep_days,
after a completed sync, never the newest. Only the clock is mocked (no test sleeps)."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memoryd.config.sections import SyncPolicy
from memoryd.conflicts import utc_stamp
from memoryd.errors import ConfigError
from memoryd.paths import resolve_paths
from memoryd.sync import engine
from memoryd.sync.backups import Backup, expired, parse
from tests.helpers import git, run_cli
from tests.sync.world import World, memory

DAY0 = datetime(2026, 1, 1, tzinfo=UTC)
BACKUPS = "refs/memoryd/backup/"


@dataclass
class Clock:
    now: datetime = DAY0

    def day(self, n: float) -> None:
        self.now = DAY0 + timedelta(days=n)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(engine, "utc_now", lambda: fake.now)
    return fake


def diverge(world: World, n: int) -> str:
    """Both devices write; laptop (a) replays onto desktop's push: a's new backup ref."""
    world.b.write(f"facts/b{n}.md", memory(f"facts/b{n}", f"from b {n}", "beta\n"))
    assert world.b.sync().pushed
    world.a.write(f"facts/a{n}.md", memory(f"facts/a{n}", f"from a {n}", "alpha\n"))
    outcome = world.a.sync()
    assert outcome.pushed and outcome.action.startswith("rebased"), outcome
    assert outcome.backup_ref is not None
    return outcome.backup_ref


def refs(root: Path) -> set[str]:
    return set(git(root, "for-each-ref", "--format=%(refname)", BACKUPS).split())


def test_old_backups_of_this_device_expire_after_a_sync_but_never_the_newest(
    world: World, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    first = diverge(world, 1)
    assert first == f"{BACKUPS}laptop/20260101T000000Z"
    clock.day(50)
    second = diverge(world, 2)  # this sync expires nothing: the first is 50 days old
    assert refs(world.a.root) == {first, second}
    head = world.a.head()
    others = [
        f"{BACKUPS}desktop/20250101T000000Z",  # another device's
        f"{BACKUPS}laptop2/20250101T000000Z",  # a device whose name starts like ours
        f"{BACKUPS}laptop/before-the-move",  # not a memoryd stamp
    ]
    for ref in others:
        git(world.a.root, "update-ref", ref, head)
    clock.day(120)
    with caplog.at_level(logging.INFO, logger="memoryd.sync.backups"):
        outcome = world.a.sync()
    assert outcome.ok and outcome.action == "up to date"
    assert refs(world.a.root) == {second, *others}
    pruned = f"pruned 1 backup ref(s) older than 90 days in {world.a.root}: {first}"
    assert [r.getMessage() for r in caplog.records if r.name.endswith(".backups")] == [pruned]
    clock.day(400)
    assert world.a.sync().ok
    assert refs(world.a.root) == {second, *others}  # the newest stays, however old


def test_no_backup_expires_when_the_sync_does_not_complete(
    world: World, clock: Clock, tmp_path: Path
) -> None:
    first = diverge(world, 1)
    second = diverge(world, 2)  # the same second: a -2 suffix, and it is the newer one
    assert second == f"{first}-2"
    clock.day(200)
    git(world.a.root, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    assert world.a.sync().status == "offline"
    git(world.a.root, "remote", "set-url", "origin", str(world.remote))
    for n in (1, 2):
        world.a.delete(f"facts/a{n}.md")
        world.a.delete(f"facts/b{n}.md")
    assert world.a.sync().status == "paused"  # a mass delete: nothing committed
    assert refs(world.a.root) == {first, second}
    git(world.a.root, "checkout", "--", "facts")
    assert world.a.sync().ok
    assert refs(world.a.root) == {second}


def test_keep_days_zero_keeps_every_backup(world: World, clock: Clock) -> None:
    world.a.policy = SyncPolicy(backup_keep_days=0)
    first = diverge(world, 1)
    clock.day(1)
    second = diverge(world, 2)
    clock.day(3650)
    assert world.a.sync().ok
    assert refs(world.a.root) == {first, second}


def test_the_setting_comes_from_config_yaml_through_the_cli(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = world.a
    monkeypatch.setenv("MEMORYD_HOME", str(a.paths.home))
    a.paths.config_file.write_text(
        f"device: laptop\nroots:\n  - path: {a.root}\n    sync:\n      backup_keep_days: 30\n"
    )
    now = datetime.now(UTC)
    head = a.head()
    aged = {days: f"{BACKUPS}laptop/{utc_stamp(now - timedelta(days=days))}" for days in (60, 1)}
    for ref in aged.values():
        git(a.root, "update-ref", ref, head)
    done = run_cli("sync", "--json")
    assert done.returncode == 0, done.stderr
    assert [o["status"] for o in json.loads(done.stdout)] == ["ok"]
    assert refs(a.root) == {aged[1]}  # 60 days is past 30; the default 90 would have kept it


def test_backup_keep_days_must_not_be_negative(tmp_path: Path) -> None:
    from memoryd.config.loader import parse_config

    file = tmp_path / "config.yaml"
    text = f"roots:\n  - path: {tmp_path}\n    sync:\n      backup_keep_days: -1\n"
    with pytest.raises(ConfigError, match=r"sync\.backup_keep_days: must not be negative"):
        parse_config(text, file, resolve_paths())


def test_expired_keeps_the_newest_by_time_then_suffix() -> None:
    device = "laptop"
    names = ["20250101T000000Z", "20250101T000000Z-3", "20250101T000000Z-2", "20250101T000000Z-x"]
    found = [parse(f"{BACKUPS}{device}/{name}", "c0ffee", device) for name in names]
    backups = [b for b in found if isinstance(b, Backup)]
    assert len(backups) == 3  # -x is not a memoryd suffix
    gone = {b.ref.rsplit("/", 1)[1] for b in expired(backups, DAY0, 90)}
    assert gone == {"20250101T000000Z", "20250101T000000Z-2"}
    assert parse(f"{BACKUPS}{device}/20251399T000000Z", "c0ffee", device) is None
    assert parse(f"{BACKUPS}other/20250101T000000Z", "c0ffee", device) is None


def test_a_backup_stamped_by_a_clock_years_ahead_expires_once_the_clock_is_back(
    world: World, clock: Clock
) -> None:
    """A device whose clock ran five years ahead stamped its backup 2031: against the right
    clock it never grew old and, being the newest, outlived every later one."""
    clock.day(5 * 365)
    ahead = diverge(world, 1)
    assert ahead.endswith("/20301231T000000Z")
    clock.day(0)  # the clock is right again
    diverge(world, 2)
    clock.day(100)
    newest = diverge(world, 3)
    assert refs(world.a.root) == {newest}
