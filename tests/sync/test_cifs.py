"""The case-insensitive disk's FUSE server (tests/sync/cifs.py) never outlives its test.

Test runs left orphaned ``python -m tests.sync.cifs`` servers and mounts behind: a run
stopped by SIGTERM or SIGKILL runs no ``finally``, and a server that died left a dead
mount ("Transport endpoint is not connected") that ``os.path.ismount`` calls no mount,
so the clean-up never unmounted it. Each test here ends a disk one way and then looks
at /proc for any process naming its mount point and at the mount table.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.sync.cifs import is_mounted, mounted

ROOT = Path(__file__).resolve().parents[2]


def _left(mountpoint: Path) -> list[str]:
    """The processes (server, fusermount) whose command line names ``mountpoint``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if os.fsencode(mountpoint) in argv:
            found.append(f"{entry.name} {b' '.join(argv).decode(errors='replace')}")
    return found


def _nothing_left(mountpoint: Path) -> None:
    """Wait (up to 15 s) for no process and no mount to be left at ``mountpoint``."""
    deadline = time.monotonic() + 15
    while (_left(mountpoint) or is_mounted(mountpoint)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _left(mountpoint) == []
    assert not is_mounted(mountpoint)


def _clean_up(mountpoint: Path) -> None:
    """What a failing test here leaves is ended, so the run leaves nothing either way."""
    for line in _left(mountpoint):
        os.kill(int(line.split()[0]), signal.SIGKILL)
    if is_mounted(mountpoint):
        subprocess.run(["umount", "-l", str(mountpoint)], check=False, capture_output=True)


def _busy(disk: Path) -> None:
    """Leave the disk as a test does: a file held open, a directory made."""
    (disk / "memory").mkdir()
    (disk / "memory/Open.md").write_text("held open")
    assert (disk / "memory/OPEN.md").read_text() == "held open"  # it is case-insensitive


def _end_normally(disk: Path) -> None:
    return None


def _kill_the_server(disk: Path) -> None:
    """The server dies mid-test (SIGKILL): the mount is dead, not gone."""
    pid = _server(disk)
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while _server(disk) is not None and time.monotonic() < deadline:
        time.sleep(0.05)


def _server(mountpoint: Path) -> int | None:
    found = [int(line.split()[0]) for line in _left(mountpoint) if "tests.sync.cifs" in line]
    return found[0] if found else None


@pytest.mark.parametrize("end", [_end_normally, _kill_the_server], ids=["normally", "server-dies"])
def test_a_disk_leaves_no_server_and_no_mount_when_its_block_ends(
    tmp_path: Path, end: Callable[[Path], None]
) -> None:
    mountpoint = tmp_path / "mac disk"  # a space: the mount table writes it as \040
    held = None
    try:
        with mounted(tmp_path / "backing", mountpoint) as disk:
            if isinstance(disk, str):
                pytest.skip(f"NO CASE-INSENSITIVE FUSE DISK: {disk}")
            assert is_mounted(mountpoint)
            _busy(disk)
            held = os.open(disk / "memory/open.md", os.O_RDONLY)  # open as the block ends
            end(disk)
        _nothing_left(mountpoint)
    finally:
        if held is not None:
            with contextlib.suppress(OSError):  # a dead disk's file says ENOTCONN
                os.close(held)
        _clean_up(mountpoint)


@pytest.mark.parametrize(
    "how", ["SIGTERM", "SIGKILL", "SIGKILL to its group"],
)
def test_the_disk_server_ends_and_unmounts_when_its_test_run_is_killed(
    tmp_path: Path, how: str
) -> None:
    """The test run (a child python here) dies with the disk mounted and busy."""
    mountpoint = tmp_path / "mac"
    kill = {
        "SIGTERM": "os.kill(os.getpid(), signal.SIGTERM)",
        "SIGKILL": "os.kill(os.getpid(), signal.SIGKILL)",
        "SIGKILL to its group": "os.killpg(0, signal.SIGKILL)",  # the server too
    }[how]
    run = (
        "import os, signal\nfrom pathlib import Path\nfrom tests.sync.cifs import mounted\n"
        f"with mounted(Path({str(tmp_path / 'backing')!r}), Path({str(mountpoint)!r})) as d:\n"
        "    print(d if isinstance(d, Path) else 'NO ' + d, flush=True)\n"
        "    (Path(d) / 'Open.md').write_text('held open')\n"
        "    held = open(Path(d) / 'open.md')\n"
        f"    {kill}\n"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", run], cwd=ROOT, capture_output=True, text=True, timeout=60,
            check=False, start_new_session=True,  # its own group, for the group kill
        )  # fmt: skip
        said = done.stdout.strip()
        if said.startswith("NO "):
            pytest.skip(said)
        assert done.returncode == (-signal.SIGTERM if how == "SIGTERM" else -signal.SIGKILL), done
        _nothing_left(mountpoint)
    finally:
        _clean_up(mountpoint)
