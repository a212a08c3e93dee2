"""The semantic stage's cost: query p50 in process at 10k memories, lexical and with the
stage, and a cold index's CPU per memory with the stage.

    .venv/bin/python bench/semantic_bench.py [--size 10000] [--queries 40] [--embed 300]

The query rows search a bench/corpus.py corpus of ``--size`` memories whose vectors are
random unit vectors (written into the stage's table, each under its memory's hash, as
:func:`memoryd.index.semantic.update` writes them): a query's cost does not depend on what
the vectors hold, and embedding 10k memories would take minutes. The query's own vector is
the real model's. Three rows: lexical recall; recall with the stage, each query new to the
process (its embedding computed); the same queries again (their vectors remembered). The
cold row indexes the first ``--embed`` memories of the corpus with the stage on, embedding
each with the real model. Times are CPU (``time.process_time``) and wall, p50 and p95.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.corpus import BASE_MS, EN, generate  # noqa: E402


def _home(scratch: Path, root: Path, semantic: bool) -> None:
    home = scratch / ("home-sem" if semantic else "home")
    home.mkdir(exist_ok=True)
    search = "search:\n  semantic: true\n" if semantic else ""
    (home / "config.yaml").write_text(f"roots:\n  - path: {root}\n    scope: global\n{search}")
    os.environ["MEMORYD_HOME"] = str(home)


def _times(run: Callable[[str], object], queries: list[str]) -> tuple[list[float], list[float]]:
    cpu, wall = [], []
    for q in queries:
        c, w = time.process_time(), time.perf_counter()
        run(q)
        cpu.append((time.process_time() - c) * 1000)
        wall.append((time.perf_counter() - w) * 1000)
    return cpu, wall


def _row(name: str, cpu: list[float], wall: list[float]) -> str:
    def p(values: list[float], q: int) -> float:
        return statistics.quantiles(values, n=20)[q] if len(values) > 1 else values[0]

    return (
        f"| {name} | {statistics.median(cpu):.2f} / {p(cpu, 18):.2f} | "
        f"{statistics.median(wall):.2f} / {p(wall, 18):.2f} |"
    )


def main() -> None:  # noqa: PLR0915 - one measurement after another
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--embed", type=int, default=300, help="memories of the cold row")
    args = parser.parse_args()

    import numpy as np

    from memoryd.config.loader import load_config
    from memoryd.index import open_index, recall, reconcile, semantic
    from memoryd.paths import resolve_paths

    rng = np.random.default_rng(0)
    words = [w for w in EN if len(w) > 3]
    queries = [" ".join(words[(i * 7 + j * 13) % len(words)] for j in range(3)) for i in range(
        args.queries
    )]
    print(f"load average {os.getloadavg()[0]:.2f} at the start\n")
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        root = scratch / "root"
        generate(root, args.size)
        _home(scratch, root, semantic=False)
        paths = resolve_paths()
        config = load_config(paths)
        db = open_index(paths)
        reconcile(db, config)
        rows = db.conn.execute("SELECT path, hash FROM memories WHERE hash IS NOT NULL").fetchall()
        vectors = rng.standard_normal((len(rows), 384)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        semantic._ensure(db.conn)
        db.conn.execute("BEGIN")
        db.conn.executemany(
            f"INSERT OR REPLACE INTO {semantic.TABLE} (path, hash, vector) VALUES (?, ?, ?)",
            [(p, h, v.tobytes()) for (p, h), v in zip(rows, vectors, strict=True)],
        )
        db.conn.execute("COMMIT")
        sem = dataclasses.replace(config, search=dataclasses.replace(config.search, semantic=True))

        def lexical(q: str) -> object:
            return recall(db, config, q, config.roots, limit=10, bump=False, now_ms=BASE_MS)

        def with_stage(q: str) -> object:
            return recall(db, sem, q, config.roots, limit=10, bump=False, now_ms=BASE_MS)

        assert semantic.embedder() is not None, "the semantic extra is not installed"
        with_stage("warm up the model and the matrix")
        for q in queries:
            lexical(q)  # the page cache warm, as in a daemon
        print(f"in process, {len(rows)} memories, {len(queries)} queries; ms p50 / p95\n")
        print("| recall | CPU | wall |\n|---|---|---|")
        print(_row("lexical", *_times(lexical, queries)))
        print(_row("with the semantic stage, new queries", *_times(with_stage, queries)))
        print(_row("with the semantic stage, repeated", *_times(with_stage, queries)))
        embed_cpu, embed_wall = _times(
            lambda q: semantic._query_vector(semantic.embedder(), q),  # type: ignore[arg-type]
            [f"{q} again" for q in queries],
        )
        print(_row("(the query's embedding alone)", embed_cpu, embed_wall))
        db.close()

        small = scratch / "small"
        generate(small, args.embed, seed=1)
        _home(scratch, small, semantic=True)
        paths = resolve_paths()
        config = load_config(paths)
        db = open_index(paths)
        c, w = time.process_time(), time.perf_counter()
        reconcile(db, config)
        cpu = (time.process_time() - c) * 1000
        wall = (time.perf_counter() - w) * 1000
        (count,) = db.conn.execute(f"SELECT count(*) FROM {semantic.TABLE}").fetchone()
        db.close()
        print(
            f"\ncold index with the stage: {count} memories embedded, "
            f"{cpu / count:.1f} ms CPU and {wall / count:.1f} ms wall a memory "
            f"(the main process; the lexical part's workers are not in the CPU)"
        )
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
