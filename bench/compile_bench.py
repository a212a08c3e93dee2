"""Compile and inspect timings on a generated root: cold, no change, one change.

Run: .venv/bin/python bench/compile_bench.py [N ...]   (default: 1000 10000)
Prints a table. Everything happens under a temporary folder (MEMORYD_HOME included).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

FOLDERS = ("rules", "preferences", "decisions", "pitfalls", "facts", "pitfalls/sqlite")
WORDS = ("部署", "SQLite", "pnpm", "接口", "FTS5", "git", "分词", "watchdog", "依赖", "CI")


def build(root: Path, n: int) -> None:
    for i in range(n):
        folder = FOLDERS[i % len(FOLDERS)]
        kind = "rule" if folder == "rules" and i % 12 == 0 else "fact"
        triggers = ", ".join(WORDS[(i + k) % len(WORDS)] for k in range(2))
        text = (
            f"---\nkind: {kind}\nsummary: memory {i} about {WORDS[i % len(WORDS)]} 中文摘要\n"
            f"load_when: [{triggers}, topic{i % 97}]\ncreated: 1791512014824\n---\n"
            + f"Body of memory {i}. " * 20
            + "\n"
        )
        path = root / folder / f"m{i:06d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    past = time.time() - 3600  # older than the racy window, as on a real machine
    for path in root.rglob("*.md"):
        os.utime(path, (past, past))


def timed(fn: object) -> float:
    start = time.perf_counter()
    fn()  # type: ignore[operator]
    return (time.perf_counter() - start) * 1000


def row(tmp: Path, n: int) -> str:
    from memoryd.app import App
    from memoryd.compile.listing import ScanCache
    from memoryd.compile.writer import compile_root
    from memoryd.config.sections import Config, RootConfig
    from memoryd.inspection import inspect

    root = tmp / f"root{n}"
    build(root, n)
    cfg, rc, cache = Config(), RootConfig(root), ScanCache()
    cold = timed(lambda: compile_root(rc, cfg, cache=cache))
    noop = timed(lambda: compile_root(rc, cfg, cache=cache))
    one = root / "facts" / "m000004.md"
    one.write_text(one.read_text().replace("memory 4 ", "memory four "))
    full = timed(lambda: compile_root(rc, cfg, cache=cache))
    one.write_text(one.read_text().replace("memory four ", "memory 4 "))
    incr = timed(lambda: compile_root(rc, cfg, [one], cache=cache))
    home = tmp / f"home{n}"
    home.mkdir()
    (home / "config.yaml").write_text(f"roots:\n  - path: {root}\n")
    os.environ["MEMORYD_HOME"] = str(home)
    insp = timed(lambda: inspect(App()))  # builds the search index too
    again = timed(lambda: inspect(App()))
    return (
        f"{n:>9} {cold:>9.0f} {noop:>9.0f} {full:>12.0f} {incr:>13.0f} {insp:>11.0f} {again:>10.0f}"
    )


def main(sizes: list[int]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["MEMORYD_HOME"] = str(Path(tmp) / "home")
        print("compile_root / inspect, milliseconds (one change: a summary edited)")
        print(f"{'memories':>9} {'cold':>9} {'no-op':>9} {'one change':>12} "
              f"{'+ changed=':>13} {'inspect':>11} {'again':>10}")  # fmt: skip
        for n in sizes:
            print(row(Path(tmp), n))


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [1000, 10000])
