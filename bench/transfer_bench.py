"""Importing a claude-mem database of N observations (default 10k) into an empty global root.

Run: .venv/bin/python bench/transfer_bench.py [N ...]   (default: 10000)

The database is claude-mem's own schema (tests/transfer/fixtures.py), filled with
deterministic mixed English/Chinese observations from bench/corpus.py's vocabularies
(Zipf-like words: titles, subtitles, narratives, JSON facts and concepts, files). Printed,
per N: reading the database alone, the plan (what --dry-run computes: every candidate
through remember's gate), the import (plan, writes, one compile and reconcile), a second
import of the same database (writes nothing), memories per second, and the floor measured
in the same run: writing the same number of memory files with fsutil.atomic_write alone,
which any import must do. Everything happens under a temporary MEMORYD_HOME; no daemon.
"""

from __future__ import annotations

import os
import random
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script

from tests.transfer.fixtures import Observation, claude_mem

from bench.corpus import vocabulary

T = TypeVar("T")
TYPES = ("decision", "bugfix", "feature", "refactor", "discovery", "change")
CONCEPTS = ("how-it-works", "gotcha", "pattern", "trade-off", "problem-solution", "why-it-exists")


def observations(n: int, seed: int = 0) -> Iterator[Observation]:
    en, zh = vocabulary()
    rng = random.Random(seed)
    weights = [1 / (rank + 1) for rank in range(len(en))]  # Zipf-like: few common, many rare

    def words(k: int) -> str:
        picked = rng.choices(en, weights, k=k)
        if rng.random() < 0.4:
            picked[rng.randrange(k)] = "".join(rng.choices(zh, k=rng.randint(2, 4)))
        return " ".join(picked)

    for _ in range(n):
        yield (
            "proj", rng.choice(TYPES), words(rng.randint(4, 8)).capitalize(), words(6),
            words(rng.randint(20, 50)) + ".", [words(8) for _ in range(rng.randint(0, 3))],
            rng.sample(CONCEPTS, 2), [f"src/{words(1)}/{words(1)}.py"],
        )  # fmt: skip


def timed(fn: Callable[[], T]) -> tuple[float, T]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def write_all(files: list[tuple[Path, bytes]], write: Callable[[Path, bytes], None]) -> int:
    for path, data in files:
        write(path, data)
    return len(files)


def row(tmp: Path, n: int) -> list[str]:
    from memoryd.app import App
    from memoryd.fsutil import atomic_write
    from memoryd.init.plugin import init_global
    from memoryd.memory import render
    from memoryd.transfer import importing, sources

    home = tmp / f"home{n}"
    os.environ["MEMORYD_HOME"] = str(home)
    work = tmp / f"work{n}"
    work.mkdir()
    db = claude_mem(tmp / f"claude-mem-{n}" / "claude-mem.db", observations(n))
    app = App(cwd=work)
    init_global(app)
    read_s, reading = timed(lambda: sources.read("claude-mem", db, app.env, work))
    plan_s, plan = timed(lambda: importing.plan(App(cwd=work), "claude-mem", db))
    run_s, report = timed(lambda: importing.run(App(cwd=work), "claude-mem", db))
    again_s, again = timed(lambda: importing.run(App(cwd=work), "claude-mem", db))
    assert again.written == [], "a second import wrote memories"
    files = [(tmp / f"floor{n}" / f"{i // 1000}" / f"{i}.md", render(item.memory))
             for i, item in enumerate(plan.writes()) if item.memory is not None]  # fmt: skip
    floor_s, _ = timed(lambda: write_all(files, atomic_write))
    counts = report.plan.counts()
    written = len(report.written)
    return [
        f"{n:,}", f"{len(reading.candidates):,}", f"{written:,}",
        f"{counts['duplicate']:,}", f"{counts['secret']:,}", f"{read_s:.2f}", f"{plan_s:.2f}",
        f"{run_s:.2f}", f"{written / run_s:,.0f}", f"{again_s:.2f}", f"{floor_s:.2f}",
        f"{run_s / floor_s:.1f}x",
    ]  # fmt: skip


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [10_000]
    head = ["observations", "read", "written", "duplicates", "secrets", "read s", "plan s",
            "import s", "memories/s", "again s", "floor s", "import/floor"]  # fmt: skip
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        os.environ["HOME"] = scratch
        for n in sizes:
            rows.append(row(Path(scratch), n))
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    for r in [head, *rows]:
        print("  ".join(cell.rjust(w) for cell, w in zip(r, widths, strict=True)))
    print("floor: the same files written with fsutil.atomic_write alone (fsync each)")


if __name__ == "__main__":
    main()
