"""Daemon benchmark: save-to-recall latency, idle CPU, RSS, and a burst of new files.

Runs the real ``memoryd run`` as a subprocess against a throwaway MEMORYD_HOME
holding N memories, then prints a table. Linux only (reads /proc).

    .venv/bin/python bench/daemon_bench.py                 # 10k memories, 100 edits, 60 s idle
    .venv/bin/python bench/daemon_bench.py --memories 2000 --idle 10 --burst 1000   # quick run
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGETS = {"p95": "< 300 ms", "cpu": "< 0.5 %", "rss": "< 80 MB"}


def generate(root: Path, count: int, start: int = 0, folder: str | None = None) -> list[Path]:
    """Memories with frontmatter, mixed English and Chinese (bench/corpus.py when present)."""
    try:
        from bench.corpus import write_corpus  # type: ignore[attr-defined]
    except ImportError:
        write_corpus = None
    if write_corpus is not None and folder is None and start == 0:
        return list(write_corpus(root, count))
    files = []
    kinds = ["fact", "pitfall", "decision", "rule", "preference"]
    for n in range(start, start + count):
        kind = kinds[n % len(kinds)]
        sub = root / (folder or f"{kind}s") / f"topic{n % 40:02d}"
        sub.mkdir(parents=True, exist_ok=True)
        path = sub / f"memory-{n:06d}.md"
        body = f"Memory {n} about sqlite fts5 tokenizer 分词 缓存 number{n} and watchdog events.\n"
        text = f"---\nid: m{n}\nkind: {kind}\nsummary: memory number {n} 记忆 {n}\n---\n{body}"
        path.write_text(text, encoding="utf-8")
        files.append(path)
    return files


def proc_stat(pid: int) -> tuple[float, int, int]:
    """(cpu seconds used, rss kB, peak rss kB) of ``pid``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks
    status = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    return cpu, int(status["VmRSS"].split()[0]), int(status["VmHWM"].split()[0])


def wait_for(cond: object, timeout: float, step: float = 0.005) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():  # type: ignore[operator]
            return True
        time.sleep(step)
    return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--edits", type=int, default=100)
    parser.add_argument("--idle", type=float, default=60.0)
    parser.add_argument("--burst", type=int, default=5_000)
    args = parser.parse_args()

    home = Path(tempfile.mkdtemp(prefix="memoryd-bench-"))
    os.environ["MEMORYD_HOME"] = str(home)
    from memoryd.app import App
    from memoryd.daemon.status import read_status
    from memoryd.index import open_index, reconcile, recall
    from memoryd.setup import init_global

    root = init_global(App()).root
    files = generate(root, args.memories)
    app = App()
    log = (home / "daemon.out").open("w")
    daemon = subprocess.Popen([sys.executable, "-m", "memoryd", "run"], stdout=log, stderr=log)
    rows: list[tuple[str, str, str]] = []
    try:
        started = time.monotonic()

        def ready() -> bool:
            status = read_status(app.paths).status
            return status is not None and status.last_reconcile is not None

        assert wait_for(ready, 300, 0.05), "daemon did not come up"
        rows.append(("startup: serve + index everything", f"{time.monotonic() - started:.1f} s", ""))
        time.sleep(2)
        db = open_index(app.paths)
        roots = list(app.config.roots)
        latencies = []
        for i in range(args.edits):
            path = files[(i * 97) % len(files)]
            token = f"benchtoken{i:04d}zz"
            text = path.read_text(encoding="utf-8") + f"\nedited {token}\n"
            t0 = time.perf_counter()
            path.write_text(text, encoding="utf-8")
            found = wait_for(
                lambda token=token: bool(recall(db, app.config, token, roots, bump=False)), 10
            )
            latencies.append((time.perf_counter() - t0) * 1000 if found else float("inf"))
            time.sleep(0.05)
        latencies.sort()
        p50 = statistics.median(latencies)
        p95 = latencies[max(0, int(len(latencies) * 0.95) - 1)]
        rows.append((f"save -> recall p50 ({args.edits} edits)", f"{p50:.0f} ms", ""))
        rows.append((f"save -> recall p95 ({args.edits} edits)", f"{p95:.0f} ms", TARGETS["p95"]))

        time.sleep(3)
        cpu0, _, _ = proc_stat(daemon.pid)
        time.sleep(args.idle)
        cpu1, rss, _ = proc_stat(daemon.pid)
        share = (cpu1 - cpu0) / args.idle * 100
        rows.append((f"idle CPU over {args.idle:.0f} s", f"{share:.2f} %", TARGETS["cpu"]))
        rows.append((f"RSS at {args.memories} memories", f"{rss / 1024:.1f} MB", TARGETS["rss"]))

        t0 = time.perf_counter()
        generate(root, args.burst, start=10_000_000, folder="burst")
        written = time.perf_counter() - t0

        def caught_up() -> bool:
            return len(db.rows(root)) >= args.memories + args.burst

        assert wait_for(caught_up, 600, 0.1), "burst never indexed"
        # then until the index equals a full scan (compiled files included)
        scratch = App(env={**os.environ, "MEMORYD_HOME": str(home / "scan")})
        with open_index(scratch.paths) as fresh:
            time.sleep(0.5)
            reconcile(fresh, app.config)
            want = {(str(r.path), r.hash) for r in fresh.rows()}
        assert wait_for(lambda: {(str(r.path), r.hash) for r in db.rows()} == want, 60, 0.2)
        took = time.perf_counter() - t0
        _, _, peak = proc_stat(daemon.pid)
        rows.append((f"{args.burst}-file burst: index = full scan", f"{took:.1f} s", ""))
        rows.append(("  (of which writing the files)", f"{written:.1f} s", ""))
        rows.append(("peak RSS (whole run)", f"{peak / 1024:.1f} MB", ""))
        db.close()
    finally:
        daemon.send_signal(signal.SIGTERM)
        code = daemon.wait(timeout=60)
        log.close()
    rows.append(("exit code after SIGTERM", str(code), "0"))
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'value':>10}  target")
    for name, value, target in rows:
        print(f"{name:<{width}}  {value:>10}  {target}")
    print(f"(home: {home})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
