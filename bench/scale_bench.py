"""What one edit costs as the memory grows: issue 39's table at several sizes, with ratios.

    .venv/bin/python bench/scale_bench.py --sizes 1000,100000,300000 --corpus-dir /tmp/corpora

One corpus per size (bench/index_bench.py's, kept in ``--corpus-dir``, with a user's hit
counts in ``.state.json``). CPU time or callgrind instructions wherever the machine's load
would move a wall time (the machine is shared); the load average is printed. Rows:

- compile after one edit: ``compile_root(changed=[f])`` on a warm cache, CPU ms p50;
- with a real ``memoryd run`` (sync off): its CPU per single save (p50, from /proc, the
  save's whole work: index, compile, its own writes), save -> index.md rewritten p50 and
  save -> searchable p95 (wall), RSS settled / start-up peak, idle CPU over ``--idle`` s,
  ``memoryd recall`` answered by it against a bare Python FTS5 query (wall p50);
- the lean recall (lock held, no socket) against the bare query, callgrind instructions;
- git sync after one edit: memoryd's CPU (``sync_root``, git included) against plain
  ``git add -A; git commit; git push`` on the same repository (CPU of the gits);
- cold ``memoryd reindex --full`` against the floor's cold index (CPU, and peak RSS), and a
  no-change reconcile against the floor's rescan (bench/floor_bench.py's measures).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import statistics
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
from bench.floor_bench import BARE, _instructions, _serving, _settle  # noqa: E402
from bench.index_bench import _cpu, corpus, guided_queries, percentile  # noqa: E402

EDITS = 15
RUN = f"{int(time.time()):x}"  # this run's mark in the words its edits add
IDENTITY = {
    "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}  # fmt: skip
Row = dict[str, float]
# the console script, as a user runs it (its wrapper takes the lean recall and the socket)
_EXE = Path(sys.executable).with_name("memoryd")
MEMORYD = [str(_EXE)] if _EXE.exists() else [sys.executable, "-m", "memoryd"]
FOUND = "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?"


def memory_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.md") if p.name not in ("index.md", "ROOT.md"))


def edit_summary(path: Path, word: str) -> None:
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("summary: ", f"summary: {word} ", 1), encoding="utf-8")


def proc(pid: int) -> tuple[float, float, float]:
    """(CPU seconds, RSS MB, peak RSS MB) of ``pid``; the CPU of its children it waited for
    included (the daemon's inspect for the page runs in one, see memoryd.inspect_cache)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    cpu = sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    status = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    return cpu, int(status["VmRSS"].split()[0]) / 1024, int(status["VmHWM"].split()[0]) / 1024


def wait_for(cond: Callable[[], bool], timeout: float = 30, step: float = 0.005) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(step)
    return False


def compile_one_edit(root: Path, files: list[Path]) -> Row:
    from memoryd.compile.listing import ScanCache
    from memoryd.compile.writer import compile_root
    from memoryd.config.sections import Config, RootConfig

    # the daemon's cache (memoryd.compile.writer)
    rc, config, cache = RootConfig(root), Config(), ScanCache(slim=True, packed=True)
    compile_root(rc, config, cache=cache)
    times = []
    for i in range(EDITS):
        path = files[(i * 7919) % len(files)]
        edit_summary(path, f"compiled{i}")
        start = time.process_time()
        compile_root(rc, config, [path], cache=cache)
        times.append((time.process_time() - start) * 1000)
    return {"compile after one edit, CPU ms p50": statistics.median(times)}


def with_daemon(root: Path, files: list[Path], home: Path, env: dict[str, str], idle: float) -> Row:
    import sqlite3

    from memoryd.paths import resolve_paths

    paths = resolve_paths(env)
    memoryd = MEMORYD
    row: Row = {}
    for _ in range(2):  # the full path once: it checks the index, leaves the config snapshot
        subprocess.run([*memoryd, "recall", "warm-up"], env=env, capture_output=True, check=True)
    with _daemon(memoryd, env, paths) as counts:
        pid = _daemon_pid(paths)
        assert pid is not None
        _cpu0, rss, peak = proc(pid)
        row["daemon RSS settled, MB"], row["daemon RSS start-up peak, MB"] = rss, peak
        conn = sqlite3.connect(f"file:{paths.index_db}?mode=ro", uri=True)
        cpus, searchable, rewritten = [], [], []
        for i in range(EDITS):
            path = files[(i * 104729 + 11) % len(files)]
            # new to the corpus in every run: a word an earlier run left is found at once
            word = f"scaletoken{RUN}x{i:04d}zq"
            index = path.parent / "index.md"
            text = path.read_text(encoding="utf-8").replace("summary: ", f"summary: {word} ", 1)
            before = proc(pid)[0]
            t0 = time.perf_counter()
            path.write_text(text, encoding="utf-8")
            wait_for(lambda w=word: conn.execute(FOUND, (w,)).fetchone()[0] > 0)  # type: ignore[misc]
            searchable.append((time.perf_counter() - t0) * 1000)
            wait_for(lambda i=index, w=word: w in i.read_text(encoding="utf-8"))  # type: ignore[misc]
            rewritten.append((time.perf_counter() - t0) * 1000)
            _quiet(pid)
            cpus.append((proc(pid)[0] - before) * 1000)
        last_edit = time.monotonic()
        conn.close()
        row["daemon CPU per single save, p50 ms"] = statistics.median(cpus)
        row["save -> searchable p95, wall ms"] = percentile(searchable, 0.95)
        row["save -> index.md rewritten p50, wall ms"] = statistics.median(rewritten)
        _cpu0, rss, peak = proc(pid)
        row["daemon RSS after the edits, MB"] = rss
        mine, bare = [], []
        for q in guided_queries(20):
            mine.append(_wall([*memoryd, "recall", q], env))
            bare.append(_wall([sys.executable, "-c", BARE, str(paths.index_db), _fts(q)], env))
        row["recall with the daemon, wall ms p50"] = percentile(mine, 0.5)
        row["bare query, wall ms p50"] = percentile(bare, 0.5)
        row["recall with the daemon / bare query"] = percentile(mine, 0.5) / percentile(bare, 0.5)
        row["inspect for the page after the edits, CPU s"] = _after_inspect(pid, last_edit)
        c0 = proc(pid)[0]
        time.sleep(idle)
        row["idle daemon CPU, %"] = (proc(pid)[0] - c0) / idle * 100
    row["recalls the daemon passed to the full path"] = counts.get("fell back", -1)
    return row


@contextlib.contextmanager
def _daemon(memoryd: list[str], env: dict[str, str], paths: Any) -> Iterator[dict[str, int]]:
    """A real ``memoryd run`` on the corpus, ready, listening and idle; stopped after. Yields
    the recall socket's counts (answered, fell back...), read from its log once stopped."""
    from memoryd.daemon.status import read_status
    from memoryd.recall_client import SOCKET_NAME

    log = paths.state_dir.parent / "bench-daemon.log"
    counts: dict[str, int] = {}
    with log.open("w") as out:
        proc = subprocess.Popen([*memoryd, "run"], env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 1800
        while not _serving(read_status(paths), proc.pid, paths.state_dir / SOCKET_NAME):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the daemon did not start:\n{log.read_text()}")
            time.sleep(0.05)
        _settle(proc.pid, deadline)
        yield counts
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=300)
    closed = [line for line in log.read_text().splitlines() if "recall socket closed:" in line]
    for part in closed[-1].rpartition("closed:")[2].split(",") if closed else ():
        number, _, what = part.strip().partition(" ")
        counts[what] = int(number)


def _after_inspect(pid: int, since: float) -> float:
    """Wait out the inspect the edits scheduled (``inspect_after_s`` after the last batch, in
    a child process: memoryd.inspect_cache) and return its CPU seconds: work the edits
    caused, which the idle window after it must not count."""
    from memoryd.config.sections import DaemonConfig

    c0 = proc(pid)[0]
    time.sleep(max(0.0, since + DaemonConfig().inspect_after_s + 1 - time.monotonic()))
    wait_for(lambda: not _children(pid), timeout=1800, step=0.1)
    _quiet(pid)
    return proc(pid)[0] - c0


def _children(pid: int) -> list[str]:
    """The process ids of ``pid``'s children, from each of its threads."""
    out: list[str] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            out += (task / "children").read_text().split()
    return out


def _daemon_pid(paths: Any) -> int | None:
    from memoryd.daemon.status import read_status

    return read_status(paths).running_pid


def _quiet(pid: int, window: float = 0.3) -> None:
    """Wait until ``pid`` spends under 2% of a CPU over ``window`` (its work is done)."""
    before = proc(pid)[0]
    for _ in range(100):
        time.sleep(window)
        now = proc(pid)[0]
        if now - before < 0.02 * window:
            return
        before = now


def _fts(q: str) -> str:
    from memoryd.index.tokenizer import fts_expression, query_terms

    return fts_expression(query_terms(q)) or '""'


def _wall(command: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(command, env=env, capture_output=True, check=True)
    return (time.perf_counter() - t0) * 1000


def lean_instructions(env: dict[str, str], paths: Any, runs: int) -> Row:
    from memoryd.runlock import DaemonLock

    qs = guided_queries(runs)
    memoryd = MEMORYD
    with DaemonLock(paths.lock_file):
        subprocess.run([*memoryd, "recall", "warm-up"], env=env, capture_output=True, check=True)
        mine = [_instructions([*memoryd, "recall", q], env) for q in qs]
        bare = [_instructions([sys.executable, "-c", BARE, str(paths.index_db), _fts(q)], env)
                for q in qs]  # fmt: skip
    return {
        "lean recall, M instructions": statistics.median(mine),
        "bare query, M instructions": statistics.median(bare),
        "lean recall / bare query, instructions": statistics.median(mine) / statistics.median(bare),
    }


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def sync_one_edit(root: Path, files: list[Path], scratch: Path) -> Row:
    """memoryd's sync of one edit against plain git's add, commit and push, alternated."""
    from memoryd.config.sections import Config, RootConfig
    from memoryd.paths import resolve_paths
    from memoryd.sync.engine import sync_root

    remote = scratch / "remote.git"
    git("init", "-q", "--bare", "-b", "main", str(remote), cwd=scratch)
    shutil.rmtree(root / ".git", ignore_errors=True)
    git("init", "-q", "-b", "main", cwd=root)
    git("remote", "add", "origin", str(remote), cwd=root)
    git("add", "-A", cwd=root)
    git("commit", "-qm", "corpus", cwd=root)
    git("push", "-q", "origin", "main", cwd=root)
    git("branch", "-u", "origin/main", cwd=root)
    paths = resolve_paths({"MEMORYD_HOME": str(scratch / "sync-home")})
    rc = RootConfig(path=root)
    config = Config(device="bench", roots=(rc,))
    assert sync_root(config, paths, rc, force=True).ok  # its first cycle: .gitignore, state
    ours, theirs = [], []
    for i in range(5):  # in a row: a commit by hand moves HEAD, and the next cycle starts over
        edit_summary(files[(i * 31 + 3) % len(files)], f"synced{i}")
        c0 = _cpu()
        outcome = sync_root(config, paths, rc, force=True)
        ours.append(_cpu() - c0)
        assert outcome.ok, outcome
    for i in range(5):
        edit_summary(files[(i * 37 + 5) % len(files)], f"plain{i}")
        c0 = _cpu()
        git("add", "-A", cwd=root)
        git("commit", "-qm", f"plain {i}", cwd=root)
        git("push", "-q", "origin", "main", cwd=root)
        theirs.append(_cpu() - c0)
    mine, plain = statistics.median(ours) * 1000, statistics.median(theirs) * 1000
    shutil.rmtree(root / ".git", ignore_errors=True)
    (root / ".gitignore").unlink(missing_ok=True)
    return {
        "git sync after one edit, memoryd CPU ms": mine,
        "plain git add -A; commit; push, CPU ms": plain,
        "git sync after one edit, memoryd / plain git": mine / plain,
    }


def cold_and_no_change(root: Path, env: dict[str, str], scratch: Path) -> Row:
    from memoryd.config.loader import load_config
    from memoryd.index import open_index, reconcile
    from memoryd.paths import resolve_paths

    floor_db = scratch / "floor.db"
    floor_db.unlink(missing_ok=True)
    floor_cpu, floor_rss = _child([sys.executable, str(HERE / "floor.py"), "index", str(root),
                                   str(floor_db)], env)  # fmt: skip
    paths = resolve_paths(env)
    shutil.rmtree(paths.cache_dir, ignore_errors=True)
    cpu, rss = _child([*MEMORYD, "reindex", "--full"], env)
    row = {
        "cold reindex --full, CPU s": cpu,
        "floor cold index, CPU s": floor_cpu,
        "cold reindex --full / floor": cpu / floor_cpu,
        "cold reindex --full peak RSS, MB": rss,
        "floor cold index peak RSS, MB": floor_rss,
    }
    import sqlite3

    conn = sqlite3.connect(floor_db)
    config = load_config(paths)
    ours, theirs = [], []
    with open_index(paths) as db:
        reconcile(db, config)
        for _ in range(3):
            c0 = time.process_time()
            reconcile(db, config)
            ours.append(time.process_time() - c0)
            c0 = time.process_time()
            floor.rescan(conn, root)
            theirs.append(time.process_time() - c0)
    conn.close()
    row["no-change reconcile / floor"] = min(ours) / min(theirs)
    return row


def _child(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """CPU seconds (its children included) and peak RSS MB of ``command``."""
    with tempfile.TemporaryFile() as err:
        child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode != 0:
            err.seek(0)
            raise SystemExit(f"{command} failed: {err.read().decode(errors='replace')}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def one_size(size: int, corpus_dir: Path, args: argparse.Namespace) -> Row:
    from memoryd.index.hits import render

    root = corpus(size, corpus_dir)
    counts = json.loads((root / ".hits.json").read_text())
    (root / ".state.json").write_text(render(counts), encoding="utf-8")
    files = memory_files(root)
    scratch = Path(tempfile.mkdtemp(prefix="memoryd-scale-"))
    home = scratch / "home"
    home.mkdir()
    (home / "config.yaml").write_text(f"roots:\n  - path: {root}\n    sync: false\n")
    env = {**os.environ, "MEMORYD_HOME": str(home), "PYTHONPYCACHEPREFIX": str(scratch / "pyc")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode cached, as an installed memoryd has it
    os.environ["MEMORYD_HOME"] = str(home)
    row: Row = {}
    parts = args.parts.split(",")

    def done(part: Row) -> None:  # kept as it comes: a 300k run takes an hour
        row.update(part)
        if args.json:
            args.json.write_text(json.dumps({str(size): row}, indent=1))

    try:
        if "compile" in parts:
            done(compile_one_edit(root, files))
        if "cold" in parts or "daemon" in parts or "lean" in parts:  # they need the index
            done(cold_and_no_change(root, env, scratch))
        if "daemon" in parts:
            done(with_daemon(root, files, home, env, args.idle))
        if "lean" in parts and args.instructions:
            from memoryd.paths import resolve_paths

            done(lean_instructions(env, resolve_paths(env), args.instructions))
        if "sync" in parts:
            done(sync_one_edit(root, files, scratch))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,100000,300000")
    parser.add_argument("--corpus-dir", type=Path, default=Path(tempfile.gettempdir()) / "corpora")
    parser.add_argument("--idle", type=float, default=20.0)
    parser.add_argument("--instructions", type=int, default=3, help="callgrind runs (0: none)")
    parser.add_argument("--parts", default="compile,cold,daemon,lean,sync")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    parser.add_argument("--table", type=Path, nargs="+", help="print the table of earlier --json")
    args = parser.parse_args()
    if args.table:  # runs of one size each (a 300k run takes an hour), printed as one table
        merged: dict[int, Row] = {}
        for file in args.table:  # parts of one size may come from several runs
            for size, row in json.loads(file.read_text()).items():
                merged.setdefault(int(size), {}).update(row)
        print(table(dict(sorted(merged.items()))))
        return
    os.environ.update(IDENTITY)
    sizes = [int(s) for s in args.sizes.split(",")]
    rows: dict[int, Row] = {}
    loads = [os.getloadavg()]
    for size in sizes:
        rows[size] = one_size(size, args.corpus_dir, args)
        loads.append(os.getloadavg())
        print(f"(done {size}: load average {os.getloadavg()})", file=sys.stderr, flush=True)
        rows[size]["load average, 1 min (at the end)"] = os.getloadavg()[0]
    print(table(rows))
    print("load average (1, 5, 15 min) before and after each size: "
          + "; ".join(" ".join(f"{x:.2f}" for x in load) for load in loads))  # fmt: skip


def table(rows: dict[int, Row]) -> str:
    sizes = list(rows)
    measures = list(dict.fromkeys(m for row in rows.values() for m in row))
    ratio = 1000 in rows and 100_000 in rows
    head = ["measure", *(f"{s:,}" for s in sizes)] + (["100k / 1k"] if ratio else [])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for m in measures:
        cells = [_fmt(rows[s].get(m)) for s in sizes]
        if ratio:
            a, b = rows[1000].get(m), rows[100_000].get(m)
            cells.append(f"{b / a:.2f}x" if a and b is not None else "")
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _fmt(value: float | None) -> str:
    if value is None:
        return ""
    return f"{value:.2f}" if abs(value) < 10 else f"{value:,.0f}"


if __name__ == "__main__":
    main()
