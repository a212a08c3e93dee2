"""Two devices syncing one memory root through a local bare remote, and an oracle.

Each device has its own MEMORYD_HOME (its own state folder) and device name.
The oracle records every version a test writes and, at the end, checks that
each one is in the git objects of the remote or either clone, or in a file on
disk (a conflict copy).
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from memoryd.config.sections import Config, RootConfig, SyncPolicy
from memoryd.paths import Paths, resolve_paths
from memoryd.roots import init_root
from memoryd.sync.engine import SyncOutcome, sync_root
from memoryd.sync.repo import git_running_in
from tests.daemon.harness import SETTLE_S
from tests.helpers import git, run_cli


def blob_sha(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def has_object(repo: Path, sha: str) -> bool:
    done = subprocess.run(
        ["git", "cat-file", "-e", sha], cwd=repo, capture_output=True, check=False
    )
    return done.returncode == 0


@dataclass
class Oracle:
    versions: list[tuple[str, bytes]] = field(default_factory=list)

    def record(self, rel: str, data: bytes) -> None:
        self.versions.append((rel, data))

    def lost(self, repos: list[Path], roots: list[Path]) -> list[str]:
        """Every recorded version found nowhere (empty when nothing was lost)."""
        on_disk = [
            p.read_bytes()
            for root in roots
            for p in root.rglob("*")
            if p.is_file() and ".git" not in p.relative_to(root).parts
        ]
        missing = []
        for rel, data in self.versions:
            if any(has_object(r, blob_sha(data)) for r in repos):
                continue
            body = data.split(b"\n---\n", 1)[-1]
            if any(body in text for text in on_disk):
                continue
            missing.append(f"{rel}: {data[:60]!r}")
        return missing


@dataclass
class Device:
    name: str
    root: Path
    paths: Paths
    oracle: Oracle
    policy: SyncPolicy = field(default_factory=SyncPolicy)
    scope: str = "global"

    @property
    def home(self) -> Path:
        """The MEMORYD_HOME this device's memoryd runs with: its config, index and state."""
        assert self.paths.home is not None  # _device resolves its paths from MEMORYD_HOME
        return self.paths.home

    @property
    def root_config(self) -> RootConfig:
        return RootConfig(path=self.root, scope=self.scope, sync=self.policy)

    @property
    def config(self) -> Config:
        return Config(device=self.name, roots=(self.root_config,))

    def write(self, rel: str, text: str) -> None:
        data = text.encode("utf-8")
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self.oracle.record(rel, data)

    def read(self, rel: str) -> str:
        return (self.root / rel).read_text(encoding="utf-8")

    def delete(self, rel: str) -> None:
        (self.root / rel).unlink()

    def sync(self, **kw: bool) -> SyncOutcome:
        return sync_root(self.config, self.paths, self.root_config, force=True, **kw)

    def head(self) -> str:
        return git(self.root, "rev-parse", "HEAD").strip()

    def files(self) -> set[str]:
        return set(git(self.root, "ls-files").split())


def memory(mid: str, summary: str, body: str) -> str:
    return f"---\nid: {mid}\nkind: fact\nsummary: {summary}\n---\n{body}"


@dataclass
class World:
    remote: Path
    a: Device
    b: Device
    oracle: Oracle

    @property
    def devices(self) -> tuple[Device, Device]:
        return self.a, self.b

    def remote_head(self) -> str:
        return git(self.remote, "rev-parse", "main").strip()

    def settle(self) -> None:
        """Sync until both devices equal the remote; then check nothing was lost."""
        for device in (self.a, self.b, self.a):
            outcome = device.sync()
            assert outcome.ok, (device.name, outcome)
        self.check()
        for device in self.devices:  # settled means settled: no device has more to say
            outcome = device.sync()
            assert outcome.commits == [] and outcome.action == "up to date", outcome

    def check(self) -> None:
        for device in self.devices:
            git_dir = device.root / ".git"
            for name in ("rebase-merge", "rebase-apply", "MERGE_HEAD", "CHERRY_PICK_HEAD"):
                assert not (git_dir / name).exists(), (device.name, name)
            assert device.head() == self.remote_head(), device.name
            assert git(device.root, "status", "--porcelain", "--untracked-files=no") == ""
        lost = self.oracle.lost([self.remote, self.a.root, self.b.root], [self.a.root, self.b.root])
        assert not lost, lost


def make_world(tmp_path: Path) -> World:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    oracle = Oracle()
    a = _device("laptop", tmp_path / "a", oracle)
    init_root(a.root)
    git(a.root, "init", "-q", "-b", "main")
    git(a.root, "remote", "add", "origin", str(remote))
    assert a.sync().pushed
    b = _device("desktop", tmp_path / "b", oracle)
    subprocess.run(["git", "clone", "-q", str(remote), str(b.root)], check=True)
    for device in (a, b):  # a CLI run in a test sees the same name as sync_root
        device.paths.config_file.parent.mkdir(parents=True, exist_ok=True)
        device.paths.config_file.write_text(f"device: {device.name}\n")
    return World(remote, a, b, oracle)


def make_conflict(
    tmp_path: Path, rel: str, base: str, a_text: str, b_text: str
) -> tuple[World, str]:
    """A real conflict on ``rel``: both devices changed it, desktop (b) synced second.

    Returns the world (settled) and the conflict copy's root-relative path.
    """
    world = make_world(tmp_path)
    world.a.write(rel, base)
    world.settle()
    world.a.write(rel, a_text)
    world.b.write(rel, b_text)
    world.a.sync()
    [conflict] = world.b.sync().conflicts
    world.settle()
    return world, conflict["copy"]


def three_of_four_deleted(root: Path) -> None:
    """Four memories synced, then three of them deleted in one go: the next ``memoryd
    sync`` pauses the root as a mass delete (``run_cli("init")`` made ``root``)."""
    for n in range(4):
        (root / f"facts/m{n}.md").write_text(memory(f"facts/m{n}", "m", f"{n}\n"))
    assert run_cli("sync").returncode == 0
    for n in range(3):
        (root / f"facts/m{n}.md").unlink()


def two_conflicts(world: World, lines: str) -> list[str]:
    """Two real conflicts (``facts/x.md`` and ``facts/y.md``): both devices changed the same
    line of each, desktop (b) synced second. Returns the copies' root-relative paths, sorted."""
    for name in ("x", "y"):
        world.a.write(f"facts/{name}.md", memory(f"facts/{name}", name, lines))
    world.settle()
    for name in ("x", "y"):
        world.a.write(f"facts/{name}.md", memory(f"facts/{name}", name, lines.replace("2", "A")))
        world.b.write(f"facts/{name}.md", memory(f"facts/{name}", name, lines.replace("2", "B")))
    world.a.sync()
    copies = [c["copy"] for c in world.b.sync().conflicts]
    world.settle()
    return sorted(copies)


def _device(name: str, home: Path, oracle: Oracle) -> Device:
    paths = resolve_paths({"MEMORYD_HOME": str(home)})
    return Device(name, paths.default_global_root, paths, oracle)


def wait_sync_gone(pid: int, *roots: Path, timeout: float = SETTLE_S) -> None:
    """Wait until a killed sync's process group and every git working in ``roots`` are gone.

    memoryd starts each git in a session of its own (memoryd.gitcli), so the killed
    sync's group does not hold them: a git still finishing would be seen as a stale
    ``index.lock`` a moment later, the more often the more loaded the machine is.
    """
    wait_group_gone(pid)
    deadline = time.monotonic() + timeout
    while any(git_running_in(root) for root in roots):
        assert time.monotonic() < deadline, f"a git in {roots} did not finish in {timeout} s"
        time.sleep(0.02)


def wait_group_gone(pgid: int, timeout: float = 20.0) -> None:
    """Wait until the killed process's own process group has finished."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.02)
    os.killpg(pgid, signal.SIGKILL)
    raise AssertionError("git children of the killed sync did not finish")


def sim_profile(prefix: str, seed: int, steps: int) -> tuple[list[int], int]:
    """A seeded simulation's seeds and steps: ``<prefix>_SEEDS`` (how many, or a comma list)
    and ``<prefix>_STEPS`` run a long one; else ``seed`` for ``steps`` steps."""
    raw = os.environ.get(f"{prefix}_SEEDS", "")
    steps = int(os.environ.get(f"{prefix}_STEPS", str(steps)))
    if not raw:
        return [seed], steps
    if "," in raw:
        return [int(s) for s in raw.split(",") if s.strip()], steps
    return list(range(1, int(raw) + 1)), steps


def all_objects(bare: Path) -> bytes:
    """Every object of a repository, as ``git cat-file --batch`` prints them."""
    done = subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"],
        cwd=bare, capture_output=True, check=True, timeout=60,
    )  # fmt: skip
    return done.stdout


def killed_sync(env: dict[str, str], root: Path, delay: float) -> bool:
    """``memoryd sync`` (the real CLI, in a subprocess) SIGKILLed after ``delay`` seconds
    unless it finished first: True when it was killed. Returns once its gits are gone."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "memoryd", "sync"], env=env, start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    killed = False
    try:
        proc.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        killed = True
    wait_sync_gone(proc.pid, root)
    return killed
