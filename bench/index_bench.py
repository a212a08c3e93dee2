"""Search index benchmark: prints one table row per corpus size.

    .venv/bin/python bench/index_bench.py                   # 1k, 10k, 100k
    .venv/bin/python bench/index_bench.py --sizes 1000,10000 --corpus-dir /tmp/corpora

Each size runs in a fresh child process (so peak RSS is that size's own) with
a fresh MEMORYD_HOME and the corpus of bench/corpus.py as its one global root.
Columns: cold index (reconcile into an empty database), a full reconcile with
nothing changed and with one file changed, the watcher path (``only=`` one
changed file), in-process ``recall`` latency p50/p95 over a fixed set of mixed
English/Chinese queries (without the hit-count write) with the AND-then-OR
strategy and with OR only, the share of queries whose results are identical
under both, ``memoryd recall`` end to
end p50/p95 in a subprocess with no daemon (so it reconciles first) and with a
daemon holding the lock (so it does not), peak RSS and the database size.
Targets (2 cores): cold 10k < 2 s, 100k < 25 s; query p50 < 5 ms, p95 < 20 ms at
100k; CLI < 150 ms at 10k; no-change reconcile of 10k < 100 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.corpus import EN, ZH, generate  # noqa: E402


def queries(count: int, seed: int = 1) -> list[str]:
    """Mixed queries: English words, Chinese words and phrases, one character, both."""
    rng = random.Random(seed)
    makers: list[Callable[[], str]] = [
        lambda: rng.choice(EN),
        lambda: f"{rng.choice(EN)} {rng.choice(EN)}",
        lambda: rng.choice(ZH),
        lambda: rng.choice(ZH) + rng.choice(ZH),
        lambda: rng.choice(ZH)[0],
        lambda: f"{rng.choice(ZH)} {rng.choice(EN)}",
        lambda: f"{rng.choice(EN)} {rng.choice(EN)} {rng.choice(EN)} {rng.choice(ZH)}",
    ]
    return [makers[i % len(makers)]() for i in range(count)]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def corpus(size: int, corpus_dir: Path | None, scratch: Path) -> Path:
    if corpus_dir is None:
        root = scratch / "corpus"
        generate(root, size)
        return root
    root = corpus_dir / f"n{size}-seed0"
    if not (root / ".complete").exists():
        shutil.rmtree(root, ignore_errors=True)
        generate(root, size)
        (root / ".complete").write_text("done\n")
    return root


def measure(size: int, corpus_dir: Path | None, n_queries: int, cli_runs: int) -> dict[str, Any]:
    scratch = Path(tempfile.mkdtemp(prefix="memoryd-bench-"))
    try:
        return _measure(size, corpus(size, corpus_dir, scratch), scratch, n_queries, cli_runs)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _measure(size: int, root: Path, scratch: Path, n_queries: int, cli_runs: int) -> dict[str, Any]:
    home = scratch / "home"
    home.mkdir()
    (home / "config.yaml").write_text(f"roots:\n  - path: {root}\n    scope: global\n")
    env = {**os.environ, "MEMORYD_HOME": str(home)}
    os.environ["MEMORYD_HOME"] = str(home)
    from memoryd.config import load_config
    from memoryd.index import open_index, recall, reconcile
    from memoryd.paths import resolve_paths

    paths = resolve_paths(env)
    config = load_config(paths)
    out: dict[str, Any] = {"size": size}
    with open_index(paths) as db:
        started = time.perf_counter()
        report = reconcile(db, config)
        out["cold_s"] = time.perf_counter() - started
        out["indexed"] = len(report.added)
        out["nochange_ms"] = 1000 * min(_timed(lambda: reconcile(db, config)) for _ in range(5))
        victim = sorted(root.rglob("*.md"))[size // 2]
        _touch(victim, "one more line\n")
        out["onechange_ms"] = 1000 * _timed(lambda: reconcile(db, config))
        _touch(victim, "and another\n")
        out["only_ms"] = 1000 * _timed(lambda: reconcile(db, config, only=[victim]))
        qs = queries(n_queries)
        for strategy in ("or", "and-or"):
            lat, tops = [], []
            for q in qs:
                started = time.perf_counter()
                hits = recall(db, config, q, config.roots, bump=False, strategy=strategy)
                lat.append(time.perf_counter() - started)
                tops.append([h.id for h in hits])
            out[f"{strategy}_p50_ms"] = 1000 * percentile(lat, 0.5)
            out[f"{strategy}_p95_ms"] = 1000 * percentile(lat, 0.95)
            out[f"{strategy}_tops"] = tops
        pairs = list(zip(out.pop("or_tops"), out.pop("and-or_tops"), strict=True))
        out["same_top_pct"] = 100 * sum(a == b for a, b in pairs) / len(pairs)
        db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["db_mb"] = sum(f.stat().st_size for f in paths.cache_dir.iterdir()) / 2**20
    cli = _cli_latency(env, scratch, queries(cli_runs, seed=2))
    out["cli_p50_ms"], out["cli_p95_ms"] = cli
    out["cli_daemon_p50_ms"], out["cli_daemon_p95_ms"] = _with_lock(
        paths.lock_file, lambda: _cli_latency(env, scratch, queries(cli_runs, seed=3))
    )
    return out


def _timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def _touch(path: Path, extra: str) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(extra)
    past = time.time() - 10  # settled, as an edit made a moment ago by an editor would be
    os.utime(path, (past, past))


def _cli_latency(env: dict[str, str], cwd: Path, qs: list[str]) -> tuple[float, float]:
    exe = Path(sys.executable).with_name("memoryd")
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "memoryd"]
    times = []
    for q in qs:
        started = time.perf_counter()
        subprocess.run([*command, "recall", q], env=env, cwd=cwd, capture_output=True, check=True)
        times.append(time.perf_counter() - started)
    return 1000 * percentile(times, 0.5), 1000 * percentile(times, 0.95)


def _with_lock(lock_file: Path, action: Callable[[], tuple[float, float]]) -> tuple[float, float]:
    from memoryd.daemon.lock import DaemonLock

    with DaemonLock(lock_file):
        return action()


COLUMNS = [
    ("size", "memories", "{:>8}"),
    ("cold_s", "cold s", "{:>7.2f}"),
    ("nochange_ms", "no-change ms", "{:>12.1f}"),
    ("onechange_ms", "1-change ms", "{:>11.1f}"),
    ("only_ms", "only= ms", "{:>8.1f}"),
    ("and-or_p50_ms", "query p50", "{:>9.2f}"),
    ("and-or_p95_ms", "query p95", "{:>9.2f}"),
    ("or_p50_ms", "OR-only p50", "{:>11.2f}"),
    ("or_p95_ms", "OR-only p95", "{:>11.2f}"),
    ("same_top_pct", "same top %", "{:>10.0f}"),
    ("cli_p50_ms", "cli p50", "{:>7.0f}"),
    ("cli_p95_ms", "cli p95", "{:>7.0f}"),
    ("cli_daemon_p50_ms", "cli+d p50", "{:>9.0f}"),
    ("cli_daemon_p95_ms", "cli+d p95", "{:>9.0f}"),
    ("rss_mb", "RSS MB", "{:>6.0f}"),
    ("db_mb", "db MB", "{:>6.1f}"),
]


def table(rows: list[dict[str, Any]]) -> str:
    header = " | ".join(title for _key, title, _fmt in COLUMNS)
    lines = [header, "-" * len(header)]
    for row in rows:
        cells = []
        for key, title, fmt in COLUMNS:
            cells.append(fmt.format(row[key]).rjust(len(title)))
        lines.append(" | ".join(cells))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description="memoryd search index benchmark")
    parser.add_argument("--sizes", default="1000,10000,100000", help="comma-separated sizes")
    parser.add_argument("--queries", type=int, default=300, help="in-process queries per size")
    parser.add_argument("--cli-runs", type=int, default=20, help="memoryd recall runs per mode")
    parser.add_argument("--corpus-dir", type=Path, default=None, help="keep and reuse corpora here")
    parser.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one is not None:
        print(json.dumps(measure(args.one, args.corpus_dir, args.queries, args.cli_runs)))
        return
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        command = [sys.executable, __file__, "--one", str(size), "--queries", str(args.queries),
                   "--cli-runs", str(args.cli_runs)]  # fmt: skip
        if args.corpus_dir:
            command += ["--corpus-dir", str(args.corpus_dir)]
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(f"measured {size}", file=sys.stderr)
    print(table(rows))


if __name__ == "__main__":
    main()
