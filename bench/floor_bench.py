"""memoryd against the floor (bench/floor.py), side by side in one run, as ratios.

    .venv/bin/python bench/floor_bench.py                   # 1k, 10k, 100k
    .venv/bin/python bench/floor_bench.py --sizes 1000,10000 --rounds 3

A loaded machine slows both sides alike, so every measure alternates memoryd and
the floor on the same corpus (bench/corpus.py, compiled as a root holds it) and
keeps each side's best round; the table gives both and their ratio, with the load
average the run saw. Rows:

- cold: CPU seconds of ``memoryd reindex --full`` (worker processes included) against
  the floor's cold index, each a fresh process;
- no-change: CPU ms of an in-process ``reconcile`` with nothing changed against the
  floor's stat-every-file rescan;
- needle p50: in-process ``recall`` (bump off) against one FTS5 bm25 query, wall ms p50
  over the long-tail queries of bench/index_bench.py;
- recall CLI: ``memoryd recall`` end to end with a real ``memoryd run`` daemon started for
  the measurement (ready and listening first, and done with its start-up compile: idle;
  stopped after; it must have answered every recall over its socket, or the run stops)
  against a bare ``python3`` that imports sqlite3,
  opens memoryd's index and runs the same FTS5 query, wall ms p50; "lean (lock only)": the
  lock held by this process and no socket, so the lean path answers in the client (no
  reconcile); "no daemon": neither, so memoryd checks every file's fingerprint first (the
  bare query does not). "no daemon, against a fresh bare" is the same memoryd run against
  the least a process without a daemon must do to answer from an index it knows is fresh:
  the bare query after a stat of every file of the root, compared with the index's rows
  (bench/floor.py's rescan).

The CLI is the installed ``memoryd`` console script of this interpreter's environment
(``<venv>/bin/memoryd``, whose wrapper imports ``re`` before memoryd: an editable install
here; a regular install starts the same way), with its bytecode cached. ``--instructions``
also counts both sides' instructions under ``valgrind --tool=callgrind`` (median over a few
queries): unlike wall time, that count does not move with the machine's load. With a daemon
it counts the client process only: the daemon's share of the answer is in the wall time.

Targets (issue 21): cold <= 1.3x, no-change <= 1.2x, needle p50 <= 2x, recall CLI <= 1.3x.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench import floor  # noqa: E402
from bench.index_bench import (  # noqa: E402
    _clock,
    _cpu,
    _with_lock,
    corpus,
    guided_queries,
    percentile,
)

CLI_CASES = ("", ", lean (lock only)", ", no daemon")  # with a daemon, the lock, nothing
FRESH = ", no daemon, against a fresh bare"  # the no-daemon runs against BARE_FRESH
TARGETS = {
    "cold": 1.3, "no-change": 1.2, "needle p50": 2.0,
    **{f"recall CLI{case}": 1.3 for case in CLI_CASES},
    **{f"recall CLI instructions{case}": 1.3 for case in CLI_CASES},
    f"recall CLI{FRESH}": 1.3, f"recall CLI instructions{FRESH}": 1.3,
}  # fmt: skip
DAEMON_READY_S = 300.0
BARE = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1])
sql = ("SELECT m.path, m.summary FROM memories_fts JOIN memories m ON m.rowid = memories_fts.rowid "
       "WHERE memories_fts MATCH ? ORDER BY bm25(memories_fts) LIMIT 10")
for row in conn.execute(sql, (sys.argv[2],)):
    print(*row)
"""
# BARE after making sure the index is fresh: every file of the root (argv[3]) stat'ed and
# compared with its row, as bench/floor.py's rescan does (it stops if one differs).
BARE_FRESH = """
import os, sqlite3, sys
conn = sqlite3.connect(sys.argv[1])
known = {p: (s, m) for p, s, m in conn.execute("SELECT path, size, mtime_ns FROM memories")}
for folder, dirs, names in os.walk(sys.argv[3]):
    dirs[:] = [d for d in dirs if not d.startswith(".")]
    for name in names:
        if name.endswith(".md"):
            path = os.path.join(folder, name)
            st = os.stat(path)
            if known.get(path) != (st.st_size, st.st_mtime_ns):
                sys.exit(f"not fresh: {path}")
sql = ("SELECT m.path, m.summary FROM memories_fts JOIN memories m ON m.rowid = memories_fts.rowid "
       "WHERE memories_fts MATCH ? ORDER BY bm25(memories_fts) LIMIT 10")
for row in conn.execute(sql, (sys.argv[2],)):
    print(*row)
"""


def _child_cpu(command: list[str], env: dict[str, str]) -> float:
    before = _cpu()
    subprocess.run(command, env=env, check=True, capture_output=True)
    return _cpu() - before


def measure(
    size: int, corpus_dir: Path, rounds: int, n_queries: int, instructions: int = 0
) -> list[dict[str, Any]]:
    root = corpus(size, corpus_dir)
    (root / ".state.json").unlink(missing_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="memoryd-floor-"))
    try:
        return _measure(size, root, scratch, rounds, n_queries, instructions)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _measure(  # noqa: PLR0917 - the measurement's settings, passed through
    size: int, root: Path, scratch: Path, rounds: int, n: int, instructions: int
) -> list[dict[str, Any]]:
    home = scratch / "home"
    home.mkdir()
    config_file = home / "config.yaml"
    config_file.write_text(f"roots:\n  - path: {root}\n    scope: global\n")
    os.utime(config_file, (time.time() - 60, time.time() - 60))
    env = {**os.environ, "MEMORYD_HOME": str(home), "PYTHONPYCACHEPREFIX": str(scratch / "pyc")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["MEMORYD_HOME"] = str(home)
    exe = Path(sys.executable).with_name("memoryd")
    memoryd = [str(exe)] if exe.exists() else [sys.executable, "-m", "memoryd"]
    floor_db = scratch / "floor.db"

    def floor_cold() -> float:
        floor_db.unlink(missing_ok=True)
        command = [sys.executable, str(HERE / "floor.py"), "index", str(root), str(floor_db)]
        return _child_cpu(command, env)

    def memoryd_cold() -> float:
        return _child_cpu([*memoryd, "reindex", "--full"], env)

    rows = [_best("cold", "s", rounds, memoryd_cold, floor_cold)]

    from memoryd.config.loader import load_config
    from memoryd.index import open_index, recall, reconcile
    from memoryd.paths import resolve_paths

    paths = resolve_paths(env)
    config = load_config(paths)
    conn = sqlite3.connect(floor_db)
    qs = guided_queries(n)
    with open_index(paths) as db:
        reconcile(db, config)
        rows.append(_best(
            "no-change", "ms", max(rounds, 5),
            lambda: 1000 * _clock(lambda: reconcile(db, config))[0][1],
            lambda: 1000 * _clock(lambda: floor.rescan(conn, root))[0][1],
        ))  # fmt: skip
        mine, theirs = [], []
        for q in qs:
            ours = functools.partial(recall, db, config, q, config.roots, bump=False)
            mine.append(1000 * _clock(ours)[0][0])
            theirs.append(1000 * _clock(functools.partial(floor.query, conn, q))[0][0])
        rows.append(_row("needle p50", "ms", percentile(mine, 0.5), percentile(theirs, 0.5)))
    conn.close()
    rows += _cli(memoryd, env, paths, qs[: max(10, n // 5)], instructions, root)
    for row in rows:
        row["size"] = size
    return rows


def _cli(  # noqa: PLR0917 - the measurement's settings, passed through
    memoryd: list[str], env: dict[str, str], paths: Any, qs: list[str], instructions: int,
    root: Path,
) -> list[dict[str, Any]]:
    from memoryd.index.tokenizer import fts_expression, query_terms

    bare = [sys.executable, "-c", BARE, str(paths.index_db)]
    fresh = [sys.executable, "-c", BARE_FRESH, str(paths.index_db)]
    expressions = [fts_expression(query_terms(q)) or '""' for q in qs]
    for _ in range(2):  # the full path once: it checks the index file, leaves the snapshot
        subprocess.run([*memoryd, "recall", "warm-up"], env=env, capture_output=True, check=True)

    def floors(case: str) -> list[tuple[str, list[str], list[str]]]:
        """Each floor the case is measured against: its row's name and command line
        (before and after the query's expression)."""
        found: list[tuple[str, list[str], list[str]]] = [(case, bare, [])]
        if case == ", no daemon":
            found.append((FRESH, fresh, [str(root)]))
        return found

    def run(case: str) -> tuple[list[float], list[list[float]]]:
        mine: list[float] = []
        theirs: list[list[float]] = [[] for _ in floors(case)]
        for q, expression in zip(qs, expressions, strict=True):
            mine.append(1000 * _clock(lambda q=q: _run([*memoryd, "recall", q], env))[0][0])  # type: ignore[misc]
            for times, (_, command, after) in zip(theirs, floors(case), strict=True):
                line = [*command, expression, *after]
                times.append(1000 * _clock(lambda line=line: _run(line, env))[0][0])  # type: ignore[misc]
        return mine, theirs

    def counted(case: str) -> tuple[list[float], list[list[float]]]:
        pairs = list(zip(qs, expressions, strict=True))[:instructions]
        mine = [_instructions([*memoryd, "recall", q], env) for q, _ in pairs]
        return mine, [
            [_instructions([*command, e, *after], env) for _, e in pairs]
            for _, command, after in floors(case)
        ]

    def within(case: str, action: Callable[[str], Any]) -> Any:
        if case == ", no daemon":
            return action(case)
        if case:
            return _with_lock(paths.lock_file, lambda: action(case))
        with _daemon(memoryd, env, paths):
            return action(case)

    rows = []
    for case in CLI_CASES:
        mine, theirs = within(case, run)
        for (name, _, _), times in zip(floors(case), theirs, strict=True):
            p50s = percentile(mine, 0.5), percentile(times, 0.5)
            rows.append(_row(f"recall CLI{name}", "ms", *p50s))
        if instructions:
            mine, theirs = within(case, counted)
            for (name, _, _), counts in zip(floors(case), theirs, strict=True):
                p50s = percentile(mine, 0.5), percentile(counts, 0.5)
                rows.append(_row(f"recall CLI instructions{name}", "M", *p50s))
    return rows


@contextlib.contextmanager
def _daemon(memoryd: list[str], env: dict[str, str], paths: Any) -> Iterator[None]:
    """A real ``memoryd run`` on the corpus, ready and listening on its recall socket;
    stopped after, and the run refused unless it answered every recall it was asked."""
    from memoryd.daemon.status import read_status
    from memoryd.recall_client import SOCKET_NAME

    log = paths.state_dir.parent / "bench-daemon.log"
    with log.open("w") as out:
        proc = subprocess.Popen([*memoryd, "run"], env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + DAEMON_READY_S
        while not _serving(read_status(paths), proc.pid, paths.state_dir / SOCKET_NAME):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the daemon did not start:\n{log.read_text()}")
            time.sleep(0.05)
        _settle(proc.pid, deadline)
        subprocess.run([*memoryd, "recall", "warm-up"], env=env, capture_output=True, check=True)
        yield
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)
    closed = [line for line in log.read_text().splitlines() if "recall socket closed:" in line]
    if not closed or " 0 fell back, 0 refused, 0 dropped" not in closed[-1]:
        raise SystemExit(f"the daemon did not answer every recall:\n{log.read_text()}")


SETTLED_WINDOW_S = 0.5
SETTLED_SHARE = 0.05  # of one CPU, over the window


def _settle(pid: int, deadline: float) -> None:
    """Wait until the daemon is done with its start-up work: ready means it answers, but
    its first reconcile then has the whole root recompiled on the compile thread (seconds
    at 100k memories), and every answer meanwhile waits for the GIL. The service's normal
    state is the idle daemon, so it is measured once a window of SETTLED_WINDOW_S costs it
    less than SETTLED_SHARE of a CPU (its CPU time, from /proc)."""

    def cpu() -> float:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    before = cpu()
    while time.monotonic() < deadline:
        time.sleep(SETTLED_WINDOW_S)
        now = cpu()
        if now - before < SETTLED_SHARE * SETTLED_WINDOW_S:
            return
        before = now
    raise SystemExit(f"the daemon (pid {pid}) did not settle within {DAEMON_READY_S} s")


def _serving(view: Any, pid: int, socket_file: Path) -> bool:
    status = view.status
    return bool(
        view.running_pid == pid and status is not None and status.pid == pid
        and status.last_reconcile is not None and socket_file.exists()
    )  # fmt: skip


def _instructions(command: list[str], env: dict[str, str]) -> float:
    """Millions of instructions ``command`` executes (callgrind's count)."""
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return int(done.stderr.split("Collected : ")[1].split()[0]) / 1e6


def _run(command: list[str], env: dict[str, str]) -> None:
    subprocess.run(command, env=env, capture_output=True, check=True)


def _best(
    name: str, unit: str, rounds: int, mine: Callable[[], float], theirs: Callable[[], float]
) -> dict[str, Any]:
    ours, floors = [], []
    for _ in range(rounds):  # alternate, so a burst of load hits both sides
        ours.append(mine())
        floors.append(theirs())
    return _row(name, unit, min(ours), min(floors))


def _row(name: str, unit: str, mine: float, theirs: float) -> dict[str, Any]:
    return {"measure": name, "unit": unit, "memoryd": mine, "floor": theirs,
            "ratio": mine / theirs if theirs else float("inf")}  # fmt: skip


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["memories | measure | memoryd | floor | ratio | target",
             "---|---|---|---|---|---"]  # fmt: skip
    for r in rows:
        target = TARGETS[r["measure"]]
        verdict = "ok" if r["ratio"] <= target else "over"
        lines.append(
            f"{r['size']} | {r['measure']} ({r['unit']}) | {r['memoryd']:.2f} | {r['floor']:.2f} "
            f"| {r['ratio']:.2f}x | <= {target}x {verdict}"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--queries", type=int, default=200)
    default_dir = Path(tempfile.gettempdir()) / "memoryd-corpora"
    parser.add_argument("--corpus-dir", type=Path, default=default_dir)
    parser.add_argument(
        "--instructions", type=int, default=0, metavar="N",
        help="also count the recall CLI's instructions (valgrind) over N queries",
    )  # fmt: skip
    args = parser.parse_args()
    load = os.getloadavg()
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        rows += measure(size, args.corpus_dir, args.rounds, args.queries, args.instructions)
    end = os.getloadavg()
    print(table(rows))
    cores = os.cpu_count()
    print(f"\nload average (1 min) at start {load[0]:.2f}, at end {end[0]:.2f}; {cores} cores")


if __name__ == "__main__":
    main()
