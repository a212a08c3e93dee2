"""A sync killed with SIGKILL at many points, then restarted: consistent, fsck clean, nothing lost."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers import git
from tests.sync.world import World, make_world, memory, wait_sync_gone

LINES = "".join(f"line {n}\n" for n in range(1, 6))


def _consistent(world: World) -> None:
    for device in world.devices:
        fsck = subprocess.run(
            ["git", "fsck", "--no-dangling"],
            cwd=device.root,
            capture_output=True,
            text=True,
            check=False,
        )
        assert fsck.returncode == 0, fsck.stderr
        git_dir = device.root / ".git"
        for name in ("rebase-merge", "rebase-apply", "MERGE_HEAD", "index.lock"):
            assert not (git_dir / name).exists(), name


def _killed_sync(world: World, delay: float) -> int:
    env = dict(os.environ, MEMORYD_HOME=str(world.a.paths.home))
    proc = subprocess.Popen(
        [sys.executable, "-m", "memoryd", "sync"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        code = proc.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)  # only the sync process, as a crash would
        code = proc.wait()
    wait_sync_gone(proc.pid, *(device.root for device in world.devices))
    said = proc.stdout.read().decode() if proc.stdout else ""
    if proc.stdout:
        proc.stdout.close()
    if code not in (0, -signal.SIGKILL):
        print(f"sync exited {code}: {said}")
    return code


def test_sigkill_mid_sync_then_restart(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    (world.a.paths.config_file).write_text("device: laptop\n")
    world.a.write("facts/shared.md", memory("facts/shared", "shared", LINES))
    world.settle()
    for n in range(20):
        world.b.write(f"facts/b{n}.md", memory(f"facts/b{n}", f"b{n}", f"from B {n}\n"))
    world.b.write(
        "facts/shared.md", memory("facts/shared", "shared", LINES.replace("line 3", "B3"))
    )
    assert world.b.sync().pushed
    for n in range(60):
        world.a.write(f"pitfalls/a{n}.md", memory(f"pitfalls/a{n}", f"a{n}", f"from A {n}\n"))
    world.a.write(
        "facts/shared.md", memory("facts/shared", "shared", LINES.replace("line 3", "A3"))
    )
    kills, codes = 0, []
    delay = 0.1  # python and memoryd start in ~0.1 s; a whole sync here takes ~0.3 s
    while delay < 6.0:
        code = _killed_sync(world, delay)
        _consistent(world)
        codes.append(code)
        if code == 0:
            break
        kills += code == -signal.SIGKILL
        delay += 0.02  # each kill leaves less to do: small steps land several kills mid-way
    assert kills >= 3, f"the sync finished before it could be killed mid-way: {codes}"
    deadline = time.monotonic() + 30
    while not world.a.sync().ok:  # restarted: retries until the repo is quiet again
        assert time.monotonic() < deadline
        time.sleep(0.05)
    world.settle()
    _consistent(world)
    assert "B3" in world.a.read("facts/shared.md")
    copies = list((world.a.root / "facts").glob("shared.conflict-laptop-*.md"))
    assert copies and "A3" in copies[0].read_text()
    assert len(git(world.b.root, "ls-files", "pitfalls/a*.md").split()) == 60
