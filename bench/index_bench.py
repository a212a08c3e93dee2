"""Search index benchmark: prints one table row per corpus size.

    .venv/bin/python bench/index_bench.py                   # 1k, 10k, 100k
    .venv/bin/python bench/index_bench.py --sizes 1000,10000 --corpus-dir /tmp/corpora

Each size runs in a fresh child process (so peak RSS is that size's own) with
a fresh MEMORYD_HOME and the corpus of bench/corpus.py as its one global root.
Columns: cold index (reconcile into an empty database), a full reconcile with
nothing changed and with one file changed, the watcher path (``only=`` one
changed file), in-process ``recall`` latency p50/p95 (without the hit-count
write) over two fixed sets of mixed English/Chinese queries, the share of
queries whose final list equals OR's, ``memoryd recall`` end to
end p50/p95 in a subprocess with no daemon (so it reconciles first) and with a
daemon holding the lock (so it does not), peak RSS and the database size.

The two query sets: the *common-word* set (``query``, ``OR-only``, ``levels``
columns: the default AND-then-OR strategy, plain OR and the level-by-level one)
builds every query from the corpus's few hundred most frequent words, each in 5
to 45% of the memories: the worst case, since FTS5 computes bm25 for every
matching row (about 0.7 µs each at 100k, most of it a per-row lookup of the row's
length) before it can sort. The *guided* set (``guided`` columns) is what
memoryd's tool description asks agents to send: one to three specific words
from the long tail of the vocabulary, at times beside a common one.

The CLI runs as an installed memoryd does: bytecode cached (in a scratch
PYTHONPYCACHEPREFIX, even when PYTHONDONTWRITEBYTECODE is set around the
bench) and config.yaml settled, after one warm-up run that is not counted.

Beside the latency table it prints recall quality per needle class of
bench/needles.py (recall@10, top-1, precision@10, default config); with
``--decay-floors 0,0.25,...`` also the top-1 rates at each ``search.decay_floor``
(the evidence for its default). The corpus holds the needles' memories, and its
``.state.json`` the hit counts of :func:`bench.corpus.hit_counts` plus the needles'.

Targets (2 cores): cold 10k < 2 s, 100k < 25 s; query p50 < 5 ms, p95 < 20 ms at
100k; CLI < 150 ms at 10k; no-change reconcile of 10k < 100 ms.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
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

from bench import needles  # noqa: E402
from bench.corpus import EN, ZH, generate, hit_counts, vocabulary  # noqa: E402

PER_CLASS = 10  # needle queries per class (each plants two or three memories)


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


def guided_queries(count: int, seed: int = 1) -> list[str]:
    """Queries as memoryd's tool description tells agents to write them: one to three
    specific words, each from the long tail of the corpus's vocabulary (rank 1,000 and
    below: each in well under 1% of the memories), at times beside one common word."""
    rng = random.Random(seed)
    en, zh = vocabulary()
    rare_en, rare_zh = en[1000:], zh[1000:]
    makers: list[Callable[[], str]] = [
        lambda: rng.choice(rare_en),
        lambda: rng.choice(rare_zh),
        lambda: f"{rng.choice(rare_en)} {rng.choice(rare_en)}",
        lambda: f"{rng.choice(rare_zh)} {rng.choice(EN)}",
        lambda: f"{rng.choice(rare_en)} {rng.choice(rare_zh)} {rng.choice(rare_en)}",
        lambda: f"{rng.choice(EN)} {rng.choice(rare_en)}",
    ]
    return [makers[i % len(makers)]() for i in range(count)]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def corpus(size: int, corpus_dir: Path) -> Path:
    """The corpus as a memoryd root holds it: memories plus its compiled ROOT.md and index.md
    (9 MB of ROOT.md at 100k memories, which the index holds too). Made once per folder."""
    root = corpus_dir / f"n{size}-seed0"
    marker = root / ".complete"
    if not marker.exists() or marker.read_text() != "compiled, needles\n":
        shutil.rmtree(root, ignore_errors=True)
        _prepare(root, size)
        marker.write_text("compiled, needles\n")
    return root


def _prepare(root: Path, size: int) -> None:
    from memoryd.compile.writer import compile_root
    from memoryd.config.sections import Config, RootConfig

    paths = generate(root, size - PER_CLASS * 23)  # the needles make up the rest
    needles.plant(root, PER_CLASS)
    _, planted = needles.load(root)
    counts = {**hit_counts(paths, root), **planted}
    (root / ".hits.json").write_text(json.dumps({"hits": counts}))
    compile_root(RootConfig(path=root), Config())


def measure(
    size: int, corpus_dir: Path, n_queries: int, cli_runs: int, floors: list[float]
) -> dict[str, Any]:
    scratch = Path(tempfile.mkdtemp(prefix="memoryd-bench-"))
    try:
        return _measure(size, corpus(size, corpus_dir), scratch, n_queries, cli_runs, floors)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _measure(  # noqa: PLR0917 - the measurement's settings, passed through
    size: int, root: Path, scratch: Path, n_queries: int, cli_runs: int, floors: list[float]
) -> dict[str, Any]:
    # the corpus's hit counts, not those an earlier run's CLI recalls added
    (root / ".state.json").write_bytes((root / ".hits.json").read_bytes())
    home = scratch / "home"
    home.mkdir()
    config_file = home / "config.yaml"
    config_file.write_text(f"roots:\n  - path: {root}\n    scope: global\n")
    os.utime(config_file, (time.time() - 60, time.time() - 60))  # written a while ago
    env = {**os.environ, "MEMORYD_HOME": str(home)}
    os.environ["MEMORYD_HOME"] = str(home)
    from memoryd.config.loader import load_config
    from memoryd.index import open_index, reconcile
    from memoryd.paths import resolve_paths

    paths = resolve_paths(env)
    config = load_config(paths)
    out: dict[str, Any] = {"size": size}
    with open_index(paths) as db:
        (out["cold_s"], out["cold_cpu_s"]), report = _clock(lambda: reconcile(db, config))
        out["indexed"] = len(report.added)
        runs = [_clock(lambda: reconcile(db, config))[0] for _ in range(5)]
        out["nochange_ms"], out["nochange_cpu_ms"] = (
            1000 * min(r[i] for r in runs) for i in (0, 1)
        )
        victim = sorted(root.rglob("*.md"))[size // 2]
        _touch(victim, "one more line\n")
        out["onechange_ms"] = 1000 * _clock(lambda: reconcile(db, config))[0][0]
        _touch(victim, "and another\n")
        out["only_ms"] = 1000 * _clock(lambda: reconcile(db, config, only=[victim]))[0][0]
        out["worker_rss_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        _queries(db, config, queries(n_queries), out)
        _guided(db, config, guided_queries(n_queries), out)
        cases = needles.load(root)[0] + needles.common_cases(60)
        out["quality"] = needles.evaluate(db, config, cases)
        out["floors"] = {str(f): _with_floor(db, config, cases, f) for f in floors}
        db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["db_mb"] = sum(f.stat().st_size for f in paths.cache_dir.iterdir()) / 2**20
    for key, seed, locked in (("cli", 2, False), ("cli_daemon", 3, True)) if cli_runs else ():
        qs = queries(cli_runs, seed=seed)
        run = functools.partial(_cli_latency, env, scratch, qs)
        wall, cpu = _with_lock(paths.lock_file, run) if locked else run()
        out[f"{key}_p50_ms"], out[f"{key}_p95_ms"] = wall
        out[f"{key}_cpu_p50_ms"], out[f"{key}_cpu_p95_ms"] = cpu
    return out


def _queries(db: Any, config: Any, qs: list[str], out: dict[str, Any]) -> None:
    """Latency of each strategy, and how often both return the very same list."""
    from memoryd.index import recall

    tops: dict[str, list[list[str]]] = {}
    for strategy in ("or", "and-or", "levels"):
        walls, cpus, tops[strategy] = [], [], []
        for q in qs:
            (wall, cpu), hits = _clock(
                lambda q=q, s=strategy: recall(db, config, q, config.roots, bump=False, strategy=s)  # type: ignore[misc]
            )
            walls.append(wall)
            cpus.append(cpu)
            tops[strategy].append([h.id for h in hits])
        for name, values in (("", walls), ("_cpu", cpus)):
            out[f"{strategy}{name}_p50_ms"] = 1000 * percentile(values, 0.5)
            out[f"{strategy}{name}_p95_ms"] = 1000 * percentile(values, 0.95)
    for strategy in ("and-or", "levels"):
        pairs = list(zip(tops["or"], tops[strategy], strict=True))
        out[f"{strategy}_same_pct"] = 100 * sum(a == b for a, b in pairs) / len(pairs)
        out[f"{strategy}_same3_pct"] = 100 * sum(a[:3] == b[:3] for a, b in pairs) / len(pairs)


def _guided(db: Any, config: Any, qs: list[str], out: dict[str, Any]) -> None:
    """Latency of the default strategy on the guided (long-tail words) mix."""
    from memoryd.index import recall

    walls, cpus = [], []
    for q in qs:
        (wall, cpu), _ = _clock(lambda q=q: recall(db, config, q, config.roots, bump=False))  # type: ignore[misc]
        walls.append(wall)
        cpus.append(cpu)
    for name, values in (("", walls), ("_cpu", cpus)):
        out[f"guided{name}_p50_ms"] = 1000 * percentile(values, 0.5)
        out[f"guided{name}_p95_ms"] = 1000 * percentile(values, 0.95)


def _with_floor(db: Any, config: Any, cases: list[Any], floor: float) -> dict[str, float]:
    """Top-1 rate per class with ``search.decay_floor`` set to ``floor``."""
    import dataclasses

    search = dataclasses.replace(config.search, decay_floor=floor)
    quality = needles.evaluate(db, dataclasses.replace(config, search=search), cases)
    return {cls: q["top1"] for cls, q in quality.items()}


def _clock(action: Callable[[], Any]) -> tuple[tuple[float, float], Any]:
    """((wall seconds, CPU seconds of this process and its finished children), result)."""
    wall, cpu = time.perf_counter(), _cpu()
    result = action()
    return (time.perf_counter() - wall, _cpu() - cpu), result


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _touch(path: Path, extra: str) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(extra)
    past = time.time() - 10  # settled, as an edit made a moment ago by an editor would be
    os.utime(path, (past, past))


def _cli_latency(
    env: dict[str, str], cwd: Path, qs: list[str]
) -> tuple[tuple[float, float], tuple[float, float]]:
    """(wall p50, p95), (CPU p50, p95) in ms of ``memoryd recall`` runs."""
    exe = Path(sys.executable).with_name("memoryd")
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "memoryd"]
    env = {**env, "PYTHONPYCACHEPREFIX": str(cwd / "pycache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run(
        [*command, "recall", "warm-up"], env=env, cwd=cwd, capture_output=True, check=True
    )
    walls, cpus = [], []
    for q in qs:
        (wall, cpu), _ = _clock(
            lambda q=q: subprocess.run(  # type: ignore[misc]
                [*command, "recall", q], env=env, cwd=cwd, capture_output=True, check=True
            )
        )
        walls.append(wall)
        cpus.append(cpu)
    return (
        (1000 * percentile(walls, 0.5), 1000 * percentile(walls, 0.95)),
        (1000 * percentile(cpus, 0.5), 1000 * percentile(cpus, 0.95)),
    )


def _with_lock(lock_file: Path, action: Callable[[], Any]) -> Any:
    from memoryd.runlock import DaemonLock

    with DaemonLock(lock_file):
        return action()


WALL = [
    ("size", "memories", "{:>8}"),
    ("cold_s", "cold s", "{:>6.2f}"),
    ("nochange_ms", "no-change ms", "{:>12.1f}"),
    ("onechange_ms", "1-change ms", "{:>11.1f}"),
    ("only_ms", "only= ms", "{:>8.1f}"),
    ("and-or_p50_ms", "query p50", "{:>9.2f}"),
    ("and-or_p95_ms", "query p95", "{:>9.2f}"),
    ("and-or_same_pct", "same list %", "{:>11.0f}"),
    ("guided_p50_ms", "guided p50", "{:>10.2f}"),
    ("guided_p95_ms", "guided p95", "{:>10.2f}"),
    ("or_p50_ms", "OR-only p50", "{:>11.2f}"),
    ("or_p95_ms", "OR-only p95", "{:>11.2f}"),
    ("levels_p50_ms", "levels p50", "{:>10.2f}"),
    ("levels_p95_ms", "levels p95", "{:>10.2f}"),
    ("levels_same_pct", "levels same %", "{:>13.0f}"),
    ("levels_same3_pct", "levels top-3 %", "{:>14.0f}"),
    ("cli_p50_ms", "cli p50", "{:>7.0f}"),
    ("cli_p95_ms", "cli p95", "{:>7.0f}"),
    ("cli_daemon_p50_ms", "cli+d p50", "{:>9.0f}"),
    ("cli_daemon_p95_ms", "cli+d p95", "{:>9.0f}"),
    ("rss_mb", "RSS MB", "{:>6.0f}"),
    ("worker_rss_mb", "worker RSS MB", "{:>13.0f}"),
    ("db_mb", "db MB", "{:>6.1f}"),
]
CPU = [
    ("size", "memories", "{:>8}"),
    ("cold_cpu_s", "cold CPU s", "{:>10.2f}"),
    ("nochange_cpu_ms", "no-change CPU ms", "{:>16.1f}"),
    ("and-or_cpu_p50_ms", "query CPU p50", "{:>13.2f}"),
    ("and-or_cpu_p95_ms", "query CPU p95", "{:>13.2f}"),
    ("guided_cpu_p50_ms", "guided CPU p50", "{:>14.2f}"),
    ("guided_cpu_p95_ms", "guided CPU p95", "{:>14.2f}"),
    ("or_cpu_p50_ms", "OR-only CPU p50", "{:>15.2f}"),
    ("or_cpu_p95_ms", "OR-only CPU p95", "{:>15.2f}"),
    ("levels_cpu_p50_ms", "levels CPU p50", "{:>14.2f}"),
    ("levels_cpu_p95_ms", "levels CPU p95", "{:>14.2f}"),
    ("cli_cpu_p50_ms", "cli CPU p50", "{:>11.0f}"),
    ("cli_cpu_p95_ms", "cli CPU p95", "{:>11.0f}"),
    ("cli_daemon_cpu_p50_ms", "cli+d CPU p50", "{:>13.0f}"),
    ("cli_daemon_cpu_p95_ms", "cli+d CPU p95", "{:>13.0f}"),
]


def table(rows: list[dict[str, Any]], columns: list[tuple[str, str, str]]) -> str:
    header = " | ".join(title for _key, title, _fmt in columns)
    lines = [header, "-" * len(header)]
    for row in rows:
        cells = [  # a measure not taken (--cli-runs 0) is a dash
            (fmt.format(row[key]) if key in row else "-").rjust(len(title))
            for key, title, fmt in columns
        ]
        lines.append(" | ".join(cells))
    return "\n".join(lines)


def quality_table(rows: list[dict[str, Any]]) -> str:
    lines = ["memories | class       | recall@10 | top-1 | precision@10", "-" * 55]
    for row in rows:
        for cls in needles.CLASSES:
            q = row["quality"].get(cls)
            if q is not None:
                cells = [_rate(q["recall"]), _rate(q["top1"]), _rate(q["precision"])]
                lines.append(f"{row['size']:>8} | {cls:<11} | {cells[0]:>9} | {cells[1]:>5} | "
                             f"{cells[2]:>12}")  # fmt: skip
    return "\n".join(lines)


def floors_table(rows: list[dict[str, Any]]) -> str:
    classes = [c for c in needles.CLASSES if c != "common"]
    lines = ["memories | decay_floor | " + " | ".join(classes)]
    lines.append("-" * len(lines[0]))
    for row in rows:
        for floor, top1 in row["floors"].items():
            cells = [_rate(top1.get(c, float("nan"))).rjust(len(c)) for c in classes]
            lines.append(f"{row['size']:>8} | {floor:>11} | " + " | ".join(cells))
    return "\n".join(lines)


def _rate(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.2f}"  # nan: the class has no such target


def _one_size(size: int, folder: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Prepare the corpus in one process and measure in another, so neither's RSS is the
    other's (compiling 100k memories takes more memory than indexing them)."""
    base = [sys.executable, __file__, "--corpus-dir", str(folder)]
    subprocess.run([*base, "--prepare", str(size)], check=True)
    command = [*base, "--one", str(size), "--queries", str(args.queries),
               "--cli-runs", str(args.cli_runs), "--decay-floors", args.decay_floors]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    print(f"measured {size}", file=sys.stderr)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description="memoryd search index benchmark")
    parser.add_argument("--sizes", default="1000,10000,100000", help="comma-separated sizes")
    parser.add_argument("--queries", type=int, default=300, help="in-process queries per size")
    parser.add_argument("--cli-runs", type=int, default=20, help="memoryd recall runs per mode")
    parser.add_argument("--corpus-dir", type=Path, default=None, help="keep and reuse corpora here")
    parser.add_argument(
        "--decay-floors", default="", help="also the top-1 rates at these decay floors (0,0.5)"
    )
    parser.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--prepare", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.prepare is not None:
        corpus(args.prepare, args.corpus_dir)
        return
    if args.one is not None:
        floors = [float(f) for f in args.decay_floors.split(",") if f]
        print(json.dumps(measure(args.one, args.corpus_dir, args.queries, args.cli_runs, floors)))
        return
    folder = args.corpus_dir or Path(tempfile.mkdtemp(prefix="memoryd-corpora-"))
    try:
        rows = [_one_size(int(size), folder, args) for size in args.sizes.split(",")]
    finally:
        if args.corpus_dir is None:
            shutil.rmtree(folder, ignore_errors=True)
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"wall clock (load average at the end: {load}, {os.cpu_count()} CPUs)")
    print(table(rows, WALL))
    print("\nCPU time (this process and its workers; what an otherwise idle machine would wait)")
    print(table(rows, CPU))
    print(
        "\nRecall quality per needle class (default config; bench/needles.py says how it is judged)"
    )
    print(quality_table(rows))
    if args.decay_floors:
        print("\nTop-1 rate per class at each search.decay_floor")
        print(floors_table(rows))


if __name__ == "__main__":
    main()
