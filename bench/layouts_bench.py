"""Guard latency (pure and through the CLI a hook runs) and reconcile of a layered tree.

Run: .venv/bin/python bench/layouts_bench.py [N ...]   (default: 1000 10000 files)
Prints a table. Everything happens under a temporary folder (MEMORYD_HOME, HOME and
MIMOCODE_HOME included), so the real home is never touched.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KEYS = ("MEMORY", "memory-arch", "checkpoint", "notes", "tasks/T1/progress", "tasks/T2/notes")


def build(root: Path, n: int) -> None:
    for i in range(n):
        scope = ("projects", "sessions")[i % 2]
        key = KEYS[i % len(KEYS)]
        path = root / scope / f"id{i // len(KEYS):05d}" / f"{key}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"## Notes\nDeploy step {i} uses pnpm and lockfile {i % 97}.\n" * 8)
    past = time.time() - 3600
    for path in root.rglob("*.md"):
        os.utime(path, (past, past))


def guard_pure(calls: int) -> float:
    from memoryd.layouts.guard import WriteRequest, check_write

    requests = [
        WriteRequest(target=f"/d/memory/sessions/s1/tasks/T{i % 5}/p.md", memory_root="/d/memory",
                     agent="explore", task="T1")
        for i in range(calls)
    ]  # fmt: skip
    start = time.perf_counter()
    for request in requests:
        check_write(request)
    return (time.perf_counter() - start) / calls * 1e6


def guard_cli(root: Path, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "memoryd", "guard", str(root / "projects/p/MEMORY.md")],
            check=True,
        )
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def reconcile_row(tmp: Path, n: int) -> str:
    from memoryd.config.sections import Config, RootConfig
    from memoryd.index import open_index, reconcile
    from memoryd.paths import resolve_paths

    root = tmp / f"tree{n}"
    build(root, n)
    config = Config(roots=(RootConfig(path=root, layout="layered"),))
    with open_index(resolve_paths()) as db:
        start = time.perf_counter()
        reconcile(db, config)
        cold = (time.perf_counter() - start) * 1000
        start = time.perf_counter()
        reconcile(db, config)
        warm = (time.perf_counter() - start) * 1000
    return f"| reconcile layered tree, {n} files | {cold:9.1f} ms cold | {warm:9.1f} ms no change |"


def main(sizes: list[int]) -> None:
    with tempfile.TemporaryDirectory() as raw:
        tmp = Path(raw)
        os.environ.update(
            MEMORYD_HOME=str(tmp / "mh"), HOME=str(tmp / "home"), MIMOCODE_HOME=str(tmp / "mimo")
        )
        print("| what | time | |")
        print("|---|---|---|")
        print(f"| check_write, pure | {guard_pure(100_000):9.2f} µs/call | |")
        root = tmp / "mimo" / "data" / "memory"
        root.mkdir(parents=True)
        print(f"| memoryd guard, CLI process | {guard_cli(root, 15):9.1f} ms median | |")
        for n in sizes:
            print(reconcile_row(tmp, n))


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [1000, 10000])
