"""Private by default: every folder memoryd makes is 0700 and every file 0600, whatever
the umask it was started with (its search database holds every memory's text)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memoryd.app import App
from memoryd.fsutil import atomic_write, private_dirs
from tests.daemon.harness import DaemonProcess
from tests.helpers import git


@pytest.fixture(params=[0o022, 0o077], ids=["umask022", "umask077"])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    before = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(before)


def memoryd(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The real CLI in a process of its own, which inherits the test's umask."""
    done = subprocess.run(
        [sys.executable, "-m", "memoryd", *argv],
        cwd=cwd, capture_output=True, text=True, env=dict(os.environ), timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done


def modes(top: Path) -> dict[str, int]:
    """Every folder and file under ``top`` (git's own .git left out) with its mode bits."""
    found = {str(top): stat.S_IMODE(top.stat().st_mode)}
    for dirpath, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in [*dirs, *files]:
            path = Path(dirpath, name)
            found[str(path)] = stat.S_IMODE(path.lstat().st_mode)
    return found


def wider(top: Path) -> dict[str, str]:
    bad: dict[str, str] = {}
    for path, found in modes(top).items():
        # git writes a kept sync index with the umask's mode; its folder is 0700
        by_git = path.endswith(".index") and Path(path).parent.name == "kept"
        mode = found & 0o700 if by_git else found
        want = 0o700 if Path(path).is_dir() else 0o600
        if mode != want:
            bad[path] = oct(mode)
    return bad


def test_everything_memoryd_creates_is_private(tmp_path: Path, umask: int) -> None:
    app = App()
    home = app.paths.home
    assert home is not None and not home.exists()
    memoryd("init")
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    memoryd("init", "--project", str(project))
    memoryd("remember", "--kind", "fact", "--summary", "deploys go through the staging gate",
            "the body", cwd=project)  # fmt: skip
    memoryd("recall", "staging gate", cwd=project)
    memoryd("sync")
    daemon = DaemonProcess(tmp_path)
    try:
        daemon.wait_ready(App())
        db = App().paths.index_db
        # the daemon holds the database open: its -wal and -shm files exist now
        assert db.with_name(db.name + "-wal").exists() and db.with_name(db.name + "-shm").exists()
        seen, running = modes(home), wider(home)
    finally:
        daemon.terminate()
        daemon.kill()
    for part in ("cache", "state", "logs", "memory", "cache/index.sqlite3", "config.yaml",
                 "logs/memoryd.log", "state/status.json", "state/daemon.lock",
                 "state/recall.sock", "cache/index.sqlite3-wal", "cache/index.sqlite3-shm"):  # fmt: skip
        assert str(home / part) in seen, part
    assert running == {}
    assert wider(home) == {}
    assert wider(project / ".memory") == {}


def test_a_wider_folder_is_kept_and_new_files_follow_it(tmp_path: Path, umask: int) -> None:
    shared = tmp_path / "shared"
    private_dirs(shared)
    assert stat.S_IMODE(shared.stat().st_mode) == 0o700
    os.chmod(shared, 0o755)  # the user opened it on purpose
    private_dirs(shared)  # and nothing closes it again
    assert stat.S_IMODE(shared.stat().st_mode) == 0o755
    atomic_write(shared / "note.md", b"x")
    assert stat.S_IMODE((shared / "note.md").stat().st_mode) == 0o644
    atomic_write(shared / "deep" / "note.md", b"x")
    assert stat.S_IMODE((shared / "deep").stat().st_mode) == 0o700


def test_a_database_rebuilt_after_a_bad_one_is_private(umask: int) -> None:
    db = App().paths.index_db
    memoryd("init")
    memoryd("reindex")
    for extra in ("-wal", "-shm", ".checked"):
        db.with_name(db.name + extra).unlink(missing_ok=True)
    db.write_bytes(b"not a database at all" * 100)
    db.chmod(0o644)  # left by an older memoryd
    memoryd("reindex")
    assert list(db.parent.glob("index.sqlite3.bad-*"))  # the bad one is kept aside
    assert stat.S_IMODE(db.stat().st_mode) == 0o600
