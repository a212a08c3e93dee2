"""Agent tool timings on a generated global root: context (per prompt), remember, forget.

Run: .venv/bin/python bench/tools_bench.py [N ...]   (default: 1000 10000)
Prints a table. Everything happens under a temporary folder (MEMORYD_HOME included); no daemon
runs, so every call keeps the index and compiled files fresh by itself, as the CLI does alone.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: bench/ importable

from bench.compile_bench import build

QUERIES = ("分词 FTS5", "pnpm lockfile", "watchdog 依赖", "topic42")


def ms(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def cli(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "memoryd", *args], check=True, capture_output=True)


def row(tmp: Path, n: int) -> list[str]:
    from memoryd.agent.context import gather
    from memoryd.agent.forget import forget
    from memoryd.agent.remember import Request, remember
    from memoryd.app import App

    os.environ["MEMORYD_HOME"] = str(tmp / f"home{n}")
    root = tmp / f"home{n}" / "memory"
    build(root, n)
    app = App(cwd=tmp)
    cold = ms(lambda: cli("context", QUERIES[0]))
    warm_cli = [ms(lambda q=q: cli("context", q)) for q in QUERIES]  # type: ignore[misc]
    warm = [ms(lambda q=q: gather(app, q)) for q in QUERIES * 3]  # type: ignore[misc]
    wrote: list[str] = []
    save = [
        ms(lambda i=i: wrote.append(  # type: ignore[misc]
            remember(app, Request(kind="fact", summary=f"bench fact {i} 基准 zebra{i}")).id
        ))
        for i in range(5)
    ]  # fmt: skip
    drop = [ms(lambda memory_id=m: forget(app, memory_id)) for m in wrote]  # type: ignore[misc]
    return [
        f"{n:>6}", f"{cold:>8.0f}", f"{statistics.median(warm_cli):>8.0f}",
        f"{statistics.median(warm):>8.1f}", f"{statistics.median(save):>8.1f}",
        f"{statistics.median(drop):>8.1f}",
    ]  # fmt: skip


def cites_cost(tmp: Path, cited: int = 5, file_lines: int = 2000) -> list[str]:
    """What checking citations adds to one in-process ``context``: ``cited`` memories, each
    citing 20 lines of a ``file_lines``-line file, injected for one prompt; the same call
    with the check switched off is the baseline. Fresh: the text is where it was cited;
    moved: lines were added above, so each citation is searched for; stale: it changed."""
    from memoryd.agent.context import gather
    from memoryd.agent.remember import Request, remember
    from memoryd.app import App
    from memoryd.cites import check
    from memoryd.init.plugin import init_global, init_project

    repo = tmp / "cites-project"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    source = repo / "src" / "big.py"
    source.parent.mkdir()
    lines = [f"value_{i} = compute({i})  # line {i}" for i in range(file_lines)]
    source.write_text("\n".join(lines) + "\n")
    os.environ["MEMORYD_HOME"] = str(tmp / "cites-home")
    app = App(cwd=repo)
    init_global(app)
    init_project(app, repo)
    for i in range(cited):
        first = 100 + 300 * i
        remember(app, Request(kind="fact", summary=f"citebench value {i} 引用", body=f"v{i}",
                              cites=(f"src/big.py:{first}-{first + 19}",)))  # fmt: skip
    query = "citebench value"

    def median(runs: int = 15) -> float:
        gather(app, query)
        return statistics.median(ms(lambda: gather(app, query)) for _ in range(runs))

    real = check.Checker.of_file
    check.Checker.of_file = lambda self, path: []  # type: ignore[method-assign]
    base = median()
    check.Checker.of_file = real  # type: ignore[method-assign]
    fresh = median()
    source.write_text("\n".join(["# a header", "import os", *lines]) + "\n")
    moved = median()
    source.write_text("\n".join(f"{line} changed" for line in lines) + "\n")
    stale = median()
    return [f"{cited:>6}", f"{base:>8.1f}", f"{fresh - base:>+8.2f}", f"{moved - base:>+8.2f}",
            f"{stale - base:>+8.2f}"]  # fmt: skip


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [1000, 10000]
    head = ["memories", "ctx cold", "ctx cli", "ctx lib", "remember", "forget"]
    print("times in ms; ctx cold = first `memoryd context` (builds the index); ctx cli = later")
    print("`memoryd context` runs (median); ctx lib / remember / forget: in-process medians")
    print(" | ".join(f"{h:>8}" for h in head))
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            print(" | ".join(row(Path(tmp), n)), flush=True)
        print("\ncitation checks in one in-process context (ms; the check's cost beside the call):")
        print(" | ".join(f"{h:>8}" for h in ["cited", "ctx lib", "fresh", "moved", "stale"]))
        print(" | ".join(cites_cost(Path(tmp))), flush=True)


if __name__ == "__main__":
    main()
