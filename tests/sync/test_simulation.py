"""A seeded simulation of three devices sharing one bare remote (issue 16).

Random creates, edits (different lines, the same line), deletes, renames (also
onto a path another device creates), ``.state.json`` writes, ``sync: false``
memories, non-UTF-8 and binary ``.md`` files (and non-UTF-8 file names), files over the size cap,
quarantined files (conflict markers, a secret), syncs in random order, an
unreachable remote and SIGKILLed syncs (the real CLI in a subprocess); and the wider
world of issue 38: a name differing only in case from a memory, a ``git gc --prune=now``
run by hand while a sync runs, the remote's history squashed with an edit and
force-pushed, and the tablet on a case-insensitive disk (a FUSE file system, see
tests/sync/cifs.py; where none can be mounted the run says so and the tablet stays on
an ordinary disk).

The oracle, after every step:

- every version the test wrote is in a working-tree file on some device, unless
  the user later overwrote or deleted it. Every line the test writes carries a
  unique token; a version is found when one file holds it byte for byte, or holds
  every one of its tokens that no user edit or delete has removed since (a clean
  line merge of two versions is neither of them byte for byte, but holds both);
- no repository is mid-operation or holds a lock;
- nothing of ``.state.json``, of a ``sync: false`` memory or of a held-back file
  (quarantined, over the cap) is in any object of the remote.

At the end, with the remote reachable, a quiet round (each device syncs twice):
every device's HEAD is the remote's and its tracked files are clean, but for the
user's own held-back text (a tracked memory with conflict markers pasted in).

The short profile runs in the normal test command; ``MEMORYD_SIM_SEEDS`` (how
many seeds, or a comma list) and ``MEMORYD_SIM_STEPS`` run a long one, e.g.
``MEMORYD_SIM_SEEDS=20 MEMORYD_SIM_STEPS=300``. Every run prints its seeds and
steps and what it met; a failure names the seed and step and the actions up to it.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from memoryd.config.sections import Config, RootConfig, SearchConfig
from memoryd.paths import Paths, resolve_paths
from memoryd.roots import init_root
from memoryd.sync.derived import recompile
from memoryd.sync.engine import sync_root
from tests.helpers import git
from tests.sync.cifs import mounted
from tests.sync.world import all_objects, killed_sync, sim_profile, wait_sync_gone

CAP = 4096  # search.max_file_bytes on every device: oversize files stay cheap
FOLDERS = ("facts", "pitfalls")
SECRET = "postgres://admin:S3cr3tPassw0rdXYZ@db.internal:5432/app"
LOCKS = ("index.lock", "HEAD.lock", "packed-refs.lock")
BUSY = ("rebase-merge", "rebase-apply", "MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD")

SEEDS, STEPS = sim_profile("MEMORYD_SIM", 16, 45)  # MEMORYD_..._SEEDS / _STEPS: a long run


@dataclass
class Version:
    device: str
    path: str
    data: bytes
    tokens: frozenset[bytes]


@dataclass
class Dev:
    name: str
    root: Path
    paths: Paths

    @property
    def root_config(self) -> RootConfig:
        return RootConfig(path=self.root, scope="global")

    @property
    def config(self) -> Config:
        return Config(
            device=self.name, roots=(self.root_config,), search=SearchConfig(max_file_bytes=CAP)
        )

    def memories(self) -> list[str]:
        """Root-relative memory files the user may touch (no copies, no compiled files)."""
        found = []
        for folder in FOLDERS:
            for path in sorted((self.root / folder).glob("*.md")):
                if ".conflict-" not in path.name and path.name != "index.md":
                    found.append(f"{folder}/{path.name}")
        return found


@dataclass
class Sim:
    rng: random.Random
    remote: Path
    devices: list[Dev]
    seed: int
    versions: list[Version] = field(default_factory=list)
    retired: set[bytes] = field(default_factory=set)
    private: set[bytes] = field(default_factory=set)  # tokens that must never reach the remote
    counter: int = 0
    log: list[str] = field(default_factory=list)
    offline: bool = False
    met: set[str] = field(default_factory=set)  # the wider worlds this run reached
    mac: bool = False  # the tablet is on a case-insensitive disk

    # -- writing, as a user would (the daemon compiles after each change)
    def token(self) -> bytes:
        self.counter += 1
        return b"tok%05d%s" % (self.counter, self.rng.choice([b"a", b"b", b"c"]))

    def body(self, lines: int = 6) -> list[bytes]:
        return [b"L%d %s" % (n, self.token()) for n in range(lines)]

    def text(self, name: str, body: list[bytes], *, local_only: bool = False) -> bytes:
        head = [b"---", b"id: " + name.encode(), b"kind: fact", b"summary: s " + self.token()]
        if local_only:
            head.append(b"sync: false")
        return b"\n".join([*head, b"---", *body]) + b"\n"

    def write(
        self, dev: Dev, rel: str, data: bytes, *, private: bool = False,
        secret: frozenset[bytes] = frozenset(),
    ) -> None:  # fmt: skip
        """Write ``data`` (``private``: all of it stays here; ``secret``: these tokens do)."""
        full = dev.root / rel
        old = full.read_bytes() if full.exists() else None
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_bytes(data)
        tokens = frozenset(_tokens(data))
        if old is not None:
            self.retired |= set(_tokens(old)) - tokens
        self.private |= tokens if private else secret
        if not private:
            self.versions.append(Version(dev.name, rel, data, tokens))
        self.compiled(dev)

    def delete(self, dev: Dev, rel: str) -> None:
        full = dev.root / rel
        self.retired |= set(_tokens(full.read_bytes()))
        full.unlink()
        self.compiled(dev)

    def compiled(self, dev: Dev) -> None:
        recompile(dev.root_config, dev.config)

    # -- the actions
    def step(self, number: int) -> None:
        dev = self.rng.choice(self.devices)
        action = self.rng.choices(
            ["create", "edit", "same-line", "delete", "rename", "rename-onto", "state",
             "local-only", "latin1", "binary", "oversize", "markers", "secret", "sync",
             "sync", "sync", "kill", "offline", "case", "gc", "rewrite"],
            weights=[6, 6, 4, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 6, 6, 6, 1, 1, 1, 1, 0.3],
        )[0]  # fmt: skip
        self.log.append(f"step {number}: {dev.name} {action}")
        getattr(self, "do_" + action.replace("-", "_"))(dev)

    def pick(self, dev: Dev) -> str | None:
        choices = [m for m in dev.memories() if not _held(dev.root / m)]
        return self.rng.choice(choices) if choices else None

    def do_create(self, dev: Dev) -> None:
        rel = f"{self.rng.choice(FOLDERS)}/m{self.rng.randrange(30)}.md"
        if (dev.root / rel).exists():
            return self.do_edit(dev)
        self.write(dev, rel, self.text(rel[:-3], self.body()))

    def _edit(self, dev: Dev, line: int | None) -> None:
        rel = self.pick(dev)
        if rel is None:
            return self.do_create(dev)
        lines = (dev.root / rel).read_bytes().split(b"\n")
        body = [n for n, text in enumerate(lines) if text.startswith(b"L")]
        if not body:
            return None
        at = body[0] if line == 0 else self.rng.choice(body)
        lines[at] = lines[at].split(b" ")[0] + b" " + self.token()
        self.write(dev, rel, b"\n".join(lines))
        return None

    def do_edit(self, dev: Dev) -> None:
        self._edit(dev, None)

    def do_same_line(self, dev: Dev) -> None:
        self._edit(dev, 0)

    def do_delete(self, dev: Dev) -> None:
        rel = self.rng.choice(dev.memories() or [""])
        if rel:
            self.delete(dev, rel)

    def _rename(self, dev: Dev, new: str) -> None:
        rel = self.pick(dev)
        if rel is None or (dev.root / new).exists():
            return
        (dev.root / new).parent.mkdir(parents=True, exist_ok=True)
        os.rename(dev.root / rel, dev.root / new)
        self.log.append(f"  {rel} -> {new}")
        self.compiled(dev)

    def do_rename(self, dev: Dev) -> None:
        self._rename(dev, f"{self.rng.choice(FOLDERS)}/r{self.rng.randrange(30)}.md")

    def do_rename_onto(self, dev: Dev) -> None:
        """Onto a path another device has (and this one does not, yet)."""
        others = {m for d in self.devices if d is not dev for m in d.memories()}
        free = sorted(m for m in others if not (dev.root / m).exists())
        if free:
            self._rename(dev, self.rng.choice(free))

    def do_state(self, dev: Dev) -> None:
        self.write(dev, ".state.json", b'{"hits": {"%s": 1}}\n' % self.token(), private=True)

    def do_local_only(self, dev: Dev) -> None:
        rel = f"facts/here{self.rng.randrange(5)}.md"
        if not (dev.root / rel).exists():
            self.write(dev, rel, self.text(rel[:-3], self.body(), local_only=True), private=True)

    def do_latin1(self, dev: Dev) -> None:
        """Invalid UTF-8 in the text, and sometimes in the file name too."""
        # \udce9: the byte 0xe9 of a name, which a Mac's disk refuses (APFS names are UTF-8)
        stem = self.rng.choice(["latin"] if self.mac else ["latin", "caf\udce9-"])
        rel = f"facts/{stem}{self.rng.randrange(10)}.md"
        body = [b"L0 caf\xe9 " + self.token(), b"L1 \xff\xfe " + self.token()]
        self.write(dev, rel, b"\n".join(body) + b"\n")

    def do_binary(self, dev: Dev) -> None:
        rel = f"pitfalls/bin{self.rng.randrange(10)}.md"
        self.write(dev, rel, bytes(self.rng.randrange(256) for _ in range(200)) + self.token())

    def do_oversize(self, dev: Dev) -> None:
        rel = f"facts/big{self.rng.randrange(5)}.md"
        self.write(dev, rel, self.text(rel[:-3], [b"x" * CAP, self.token()]), private=True)

    def do_markers(self, dev: Dev) -> None:
        rel = self.pick(dev)
        if rel is None:
            return
        mine, theirs = self.token(), self.token()
        data = b"\n<<<<<<< mine\n%s\n=======\n%s\n>>>>>>> theirs\n" % (mine, theirs)
        old = (dev.root / rel).read_bytes()
        self.write(dev, rel, old + data, secret=frozenset((mine, theirs)))

    def do_secret(self, dev: Dev) -> None:
        rel = f"facts/db{self.rng.randrange(5)}.md"
        if not (dev.root / rel).exists():
            body = [b"L0 " + self.token(), b"url " + SECRET.encode()]
            self.write(dev, rel, self.text(rel[:-3], body), private=True)

    def do_sync(self, dev: Dev) -> None:
        outcome = sync_root(dev.config, dev.paths, dev.root_config, force=True)
        self.log.append(f"  {outcome.status}: {outcome.message}")
        assert outcome.status in ("ok", "offline", "busy"), (self.where(), outcome)
        assert self.offline or outcome.status != "offline", (self.where(), outcome)

    def do_kill(self, dev: Dev) -> None:
        env = dict(os.environ, MEMORYD_HOME=str(dev.paths.home))
        delay = self.rng.uniform(0.15, 0.9)
        if killed_sync(env, dev.root, delay):
            self.log.append(f"  killed after {delay:.2f} s")

    def do_case(self, dev: Dev) -> None:
        """A new memory whose name differs only in case from one this device has."""
        rel = self.pick(dev)
        if rel is None:
            return
        folder, name = rel.split("/")
        twin = f"{folder}/{name[:-3].swapcase()}.md"
        if not os.path.lexists(dev.root / twin):
            self.write(dev, twin, self.text(twin[:-3], self.body()))
            self.met.add("case twin")

    def do_gc(self, dev: Dev) -> None:
        """A ``git gc --prune=now`` of the user's while memoryd syncs."""
        env = dict(os.environ, MEMORYD_HOME=str(dev.paths.home))
        proc = subprocess.Popen(
            [sys.executable, "-m", "memoryd", "sync"], env=env, start_new_session=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        time.sleep(self.rng.uniform(0.0, 0.6))
        subprocess.run(
            ["git", "gc", "-q", "--prune=now"],
            cwd=dev.root, capture_output=True, timeout=120, check=False,
        )  # fmt: skip  # its own failures (a lock the sync holds) are git's to report
        proc.wait(timeout=300)
        wait_sync_gone(proc.pid, dev.root)
        self.met.add("gc")

    def do_rewrite(self, dev: Dev) -> None:
        """The remote's whole history squashed into one commit with one line changed (a purge
        by filter-repo, a squash with an edit), force-pushed by someone."""
        if self.offline:
            return
        work = self.remote.with_name(f"rewrite{self.counter}")
        subprocess.run(["git", "clone", "-q", str(self.remote), str(work)], check=True)
        try:
            memories = sorted(
                f"{f}/{p.name}" for f in FOLDERS for p in (work / f).glob("*.md")
                if ".conflict-" not in p.name and p.name != "index.md" and not _held(p)
            )  # fmt: skip
            if not memories:
                return
            rel = self.rng.choice(memories)
            lines = (work / rel).read_bytes().split(b"\n")
            body = [n for n, text in enumerate(lines) if text.startswith(b"L")]
            if not body:
                return
            at = self.rng.choice(body)
            self.retired |= set(_tokens(lines[at]))
            lines[at] = lines[at].split(b" ")[0] + b" " + self.token()
            data = b"\n".join(lines)
            (work / rel).write_bytes(data)
            self.versions.append(Version("rewrite", rel, data, frozenset(_tokens(data))))
            git(work, "add", "-A")
            tree = git(work, "write-tree").strip()
            squashed = git(work, "commit-tree", tree, "-m", "squashed, one line purged").strip()
            git(work, "push", "-q", "--force", "origin", f"{squashed}:refs/heads/main")
            self.log.append(f"  rewrote the remote: {rel}")
            self.met.add("rewrite")
        finally:
            subprocess.run(["rm", "-rf", str(work)], check=True)
        self.do_sync(dev)  # the oracle looks in work trees: the rewritten text lands in one

    def do_offline(self, dev: Dev) -> None:
        away = self.remote.with_name("away.git")
        if self.offline:
            away.rename(self.remote)
        else:
            self.remote.rename(away)
        self.offline = not self.offline

    # -- the oracle
    def where(self) -> str:
        return f"seed {self.seed}, " + "\n".join(self.log[-25:])

    def check(self) -> None:
        files = [_files(d.root) for d in self.devices]
        everything = [data for found in files for data in found.values()]
        for v in self.versions:
            alive = v.tokens - self.retired
            if not alive:
                continue
            if any(data == v.data or all(t in data for t in alive) for data in everything):
                continue
            raise AssertionError(f"lost {v.device}:{v.path} {v.data[:80]!r}\n{self.where()}")
        for dev in self.devices:
            git_dir = dev.root / ".git"
            for name in (*BUSY, *LOCKS):
                assert not (git_dir / name).exists(), (dev.name, name, self.where())
            stray = [p for p in (git_dir / "refs").rglob("*.lock")]
            assert not stray, (dev.name, stray, self.where())
        if not self.offline:
            objects = all_objects(self.remote)
            leaked = sorted(t for t in self.private if t in objects)
            assert not leaked, (leaked, self.where())
            assert SECRET.encode() not in objects, self.where()

    def quiet_round(self) -> None:
        if self.offline:
            self.do_offline(self.devices[0])
        for _ in range(2):
            for dev in self.devices:
                self.do_sync(dev)
        head = git(self.remote, "rev-parse", "main").strip()
        for dev in self.devices:
            assert git(dev.root, "rev-parse", "HEAD").strip() == head, (dev.name, self.where())
            dirty = _dirty(dev.root)
            kept = [rel for rel in dirty if not _held_back(dev.root / rel)]
            assert kept == [], (dev.name, kept, self.where())  # only the user's held-back text
        self.check()


def _tokens(data: bytes) -> list[bytes]:
    found, start = [], data.find(b"tok")
    while start >= 0:
        found.append(data[start : start + 9])
        start = data.find(b"tok", start + 9)
    return [t for t in found if len(t) == 9]


def _held(path: Path) -> bool:
    data = path.read_bytes()
    return b"<<<<<<<" in data or b"sync: false" in data or len(data) > CAP


def _dirty(root: Path) -> list[str]:
    """Tracked files that differ from HEAD (names as the file system has them)."""
    done = subprocess.run(
        ["git", "status", "--porcelain", "-z", "--untracked-files=no"],
        cwd=root, capture_output=True, check=True, timeout=60,
    )  # fmt: skip
    return [os.fsdecode(r[3:]) for r in done.stdout.split(b"\0") if len(r) > 3]


def _held_back(path: Path) -> bool:
    """A file memoryd rightly keeps out of commits (so it may differ from the remote)."""
    return path.is_file() and (_held(path) or SECRET.encode() in path.read_bytes())


def _files(root: Path) -> dict[str, bytes]:
    found = {}
    for dirpath, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in names:
            path = Path(dirpath, name)
            if not path.is_symlink():
                found[str(path)] = path.read_bytes()
    return found


def _world(tmp_path: Path, seed: int, mac: Path | None) -> Sim:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    devices = []
    for number, name in enumerate(("laptop", "desktop", "tablet")):
        paths = resolve_paths({"MEMORYD_HOME": str(tmp_path / f"home{number}")})
        paths.config_file.parent.mkdir(parents=True, exist_ok=True)
        paths.config_file.write_text(f"device: {name}\nsearch:\n  max_file_bytes: {CAP}\n")
        dev = Dev(name, paths.default_global_root, paths)
        if name == "tablet" and mac is not None:  # a Mac's disk: the root is a link into it
            paths.default_global_root.parent.mkdir(parents=True, exist_ok=True)
            (mac / "memory").mkdir()
            paths.default_global_root.symlink_to(mac / "memory")
        if number == 0:
            init_root(dev.root)
            git(dev.root, "init", "-q", "-b", "main")
            git(dev.root, "remote", "add", "origin", str(remote))
            assert sync_root(dev.config, dev.paths, dev.root_config, force=True).pushed
        else:
            subprocess.run(["git", "clone", "-q", str(remote), str(dev.root)], check=True)
            dev = Dev(name, dev.root.resolve(), paths)
        devices.append(dev)
    return Sim(random.Random(seed), remote, devices, seed, mac=mac is not None)


@pytest.mark.parametrize("seed", SEEDS)
def test_three_devices_never_lose_a_version_and_settle(tmp_path: Path, seed: int) -> None:
    steps = STEPS
    with mounted(tmp_path / "backing", tmp_path / "mac") as disk:
        if isinstance(disk, str):
            print(f"NO CASE-INSENSITIVE DISK for the tablet in this run: {disk}")
        sim = _world(tmp_path, seed, disk if isinstance(disk, Path) else None)
        if isinstance(disk, Path):
            sim.met.add("case-insensitive tablet")
        started = time.monotonic()
        for number in range(steps):
            sim.step(number)
            sim.check()
        sim.quiet_round()
    met = ", ".join(sorted(sim.met)) or "none of the wider worlds"
    print(
        f"simulation seed {seed}: {steps} steps in {time.monotonic() - started:.1f} s, "
        f"0 lost, 0 hidden, 0 wedged; met: {met}"
    )
