from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memoryd.errors import AlreadyRunning
from memoryd.runlock import DaemonLock, running_pid


def test_lock_holds_pid_and_refuses_a_second_holder(tmp_path: Path) -> None:
    path = tmp_path / "state" / "daemon.lock"
    assert running_pid(path) is None
    with DaemonLock(path):
        assert running_pid(path) == os.getpid()
        with pytest.raises(AlreadyRunning) as info:
            DaemonLock(path).acquire()
        assert info.value.pid == os.getpid()
        assert f"memoryd is already running (pid {os.getpid()}" in str(info.value)
    assert running_pid(path) is None


def test_a_killed_holder_leaves_no_live_lock(tmp_path: Path) -> None:
    path = tmp_path / "daemon.lock"
    code = (
        "import sys, time; from pathlib import Path;"
        "from memoryd.runlock import DaemonLock;"
        f"DaemonLock(Path({str(path)!r})).acquire(); print('held', flush=True); time.sleep(60)"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "held"
        assert running_pid(path) == proc.pid
        proc.kill()
        proc.wait(timeout=10)
    finally:
        proc.stdout.close()  # type: ignore[union-attr]
    assert path.read_text().strip() == str(proc.pid)  # stale content stays...
    assert running_pid(path) is None  # ...but nobody holds the lock
    with DaemonLock(path):
        assert running_pid(path) == os.getpid()
