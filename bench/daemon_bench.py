"""Daemon benchmark: save-to-recall latency, idle CPU, RSS, a burst of new files, transcripts.

Runs the real ``memoryd run`` as a subprocess against a throwaway MEMORYD_HOME
holding N memories, then prints a table. Linux only (reads /proc).

    .venv/bin/python bench/daemon_bench.py                 # 10k memories, 100 edits, 60 s idle
    .venv/bin/python bench/daemon_bench.py --memories 2000 --idle 10 --burst 1000   # quick run

With ``--transcripts N`` (default 4) auto-extraction is on (a trivial extractor command that
answers no memories) and the daemon watches a Claude Code projects folder in the bench's home:
the idle CPU is measured with those watches in place, then N sessions append a prompt and an
answer every second for ``--grow`` seconds while the daemon's CPU is measured, and a settle of a
5 MB transcript is timed against the floor of reading its lines with json.loads.
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
from types import SimpleNamespace
from typing import Any

TARGETS = {"p95": "< 300 ms", "cpu": "< 0.5 %", "rss": "< 80 MB"}
Row = tuple[str, str, str]
NO = SimpleNamespace(last_reconcile=None)


def generate(root: Path, count: int, seed: int = 0) -> list[Path]:
    """The index benchmark's deterministic corpus (bench/corpus.py) under ``root``."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from bench.corpus import generate as corpus

    return corpus(root, count, seed=seed)


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


def latency(ctx: dict[str, Any], files: list[Path], edits: int) -> list[Row]:
    """Append a unique word to a memory; time until recall finds it."""
    from memoryd.index import recall

    app, db = ctx["app"], ctx["db"]
    roots = list(app.config.roots)
    times = []
    for i in range(edits):
        path = files[(i * 97) % len(files)]
        token = f"benchtoken{i:04d}zz"
        text = path.read_text(encoding="utf-8") + f"\nedited {token}\n"
        t0 = time.perf_counter()
        path.write_text(text, encoding="utf-8")
        found = wait_for(lambda t=token: bool(recall(db, app.config, t, roots, bump=False)), 10)
        times.append((time.perf_counter() - t0) * 1000 if found else float("inf"))
        time.sleep(0.05)
    times.sort()
    p95 = times[max(0, int(len(times) * 0.95) - 1)]
    return [
        (f"save -> recall p50 ({edits} edits)", f"{statistics.median(times):.0f} ms", ""),
        (f"save -> recall p95 ({edits} edits)", f"{p95:.0f} ms", TARGETS["p95"]),
    ]


def compiled(files: list[Path], edits: int) -> list[Row]:
    """Change a memory's summary; time until its folder's index.md shows the new one."""
    times = []
    for i in range(edits):
        path = files[(i * 89 + 7) % len(files)]
        index, word = path.parent / "index.md", f"benchsummary{i:04d}zz"
        text = path.read_text(encoding="utf-8").replace("summary: ", f"summary: {word} ", 1)
        t0 = time.perf_counter()
        path.write_text(text, encoding="utf-8")
        found = wait_for(lambda i=index, w=word: i.exists() and w in i.read_text("utf-8"), 10)
        times.append((time.perf_counter() - t0) * 1000 if found else float("inf"))
        time.sleep(0.2)
    median = f"{statistics.median(times):.0f} ms"
    return [(f"save -> index.md rewritten p50 ({edits} edits)", median, "")]


def idle(pid: int, seconds: float, memories: int, extracting: bool = False) -> list[Row]:
    time.sleep(3)  # let the compile of the last edit finish
    cpu0, _, _ = proc_stat(pid)
    time.sleep(seconds)
    cpu1, rss, _ = proc_stat(pid)
    share = (cpu1 - cpu0) / seconds * 100
    what = ", extraction on" if extracting else ""
    return [
        (f"idle CPU over {seconds:.0f} s{what}", f"{share:.2f} %", TARGETS["cpu"]),
        (f"RSS at {memories} memories", f"{rss / 1024:.1f} MB", TARGETS["rss"]),
    ]


EXTRACTOR = "import sys\nsys.stdin.read()\nprint('{\"memories\": []}')\n"


def claude_line(kind: str, session: str, cwd: str, text: str) -> str:
    import json

    content: Any = text if kind == "user" else [{"type": "text", "text": text}]
    return json.dumps({
        "type": kind, "sessionId": session, "cwd": cwd, "isSidechain": False,
        "message": {"role": kind, "content": content}, "uuid": os.urandom(8).hex(),
    }) + "\n"  # fmt: skip


def transcripts(ctx: dict[str, Any], sessions: int, grow_s: float) -> list[Row]:
    """Daemon CPU while ``sessions`` Claude Code transcripts grow, and what a settle costs."""
    import json

    projects, pid, state = ctx["claude"], ctx["pid"], ctx["state"]
    folder = projects / "-bench-proj"
    folder.mkdir(parents=True, exist_ok=True)
    files = [folder / f"session-{n}.jsonl" for n in range(sessions)]
    answer = "Because the lockfile format differs between pnpm 8 and 9. " * 8
    lines = 0
    cpu0, _, _ = proc_stat(pid)
    started = time.monotonic()
    while time.monotonic() - started < grow_s:
        for n, file in enumerate(files):
            with file.open("a", encoding="utf-8") as out:
                out.write(claude_line("user", f"s{n}", "/bench/proj", f"question {lines}: 部署?"))
                out.write(claude_line("assistant", f"s{n}", "/bench/proj", answer))
            lines += 2
        time.sleep(1.0)
    cpu1, _, _ = proc_stat(pid)
    grow_share = (cpu1 - cpu0) / grow_s * 100
    wait_for(lambda: len(_ledger(state)) >= sessions, 30, 0.1)
    ledger = _ledger(state)
    size = sum(f.stat().st_size for f in files)

    from memoryd.extract.transcript import ClaudeReader

    big = folder / "big.jsonl"
    with big.open("w", encoding="utf-8") as out:
        while out.tell() < 5 * 1024 * 1024:
            out.write(claude_line("user", "big", "/bench/proj", "question: 部署脚本?"))
            out.write(claude_line("assistant", "big", "/bench/proj", answer))
    t0 = time.perf_counter()
    for raw in big.read_bytes().splitlines():
        json.loads(raw)
    floor = time.perf_counter() - t0
    reader = ClaudeReader()
    t0 = time.perf_counter()
    conv = reader.read(big)
    parse = time.perf_counter() - t0
    with big.open("a", encoding="utf-8") as out:
        out.write(claude_line("user", "big", "/bench/proj", "one more question"))
        out.write(claude_line("assistant", "big", "/bench/proj", answer))
    t0 = time.perf_counter()
    more = reader.read(big)
    incremental = time.perf_counter() - t0
    assert conv is not None and more is not None and more.turns == conv.turns + 1
    big.unlink()
    return [
        (f"CPU while {sessions} transcripts grow ({lines} lines, {grow_s:.0f} s)",
         f"{grow_share:.2f} %", ""),
        ("  per appended line", f"{(cpu1 - cpu0) / max(1, lines) * 1000:.2f} ms", ""),
        (f"  sessions settled and extracted (of {sessions})", str(len(ledger)), str(sessions)),
        ("  transcripts' size", f"{size / 1024:.0f} kB", ""),
        (f"settle: parse a 5 MB transcript ({conv.turns} turns)", f"{parse * 1000:.0f} ms", ""),
        ("  floor: json.loads of every line", f"{floor * 1000:.0f} ms",
         f"ratio {parse / floor:.2f}"),
        ("settle after one more turn (reads the new lines only)",
         f"{incremental * 1000:.1f} ms", ""),
    ]  # fmt: skip


def _ledger(state: Path) -> dict[str, Any]:
    import json

    try:
        return dict(json.loads((state / "extract.json").read_text())["sessions"])
    except (OSError, ValueError, KeyError):
        return {}


def burst(ctx: dict[str, Any], root: Path, count: int, memories: int) -> list[Row]:
    """Write ``count`` new files at once; time until the index equals a full scan."""
    from memoryd.app import App
    from memoryd.index import open_index, reconcile

    app, db, home = ctx["app"], ctx["db"], ctx["home"]
    t0 = time.perf_counter()
    generate(root / "burst", count, seed=1)
    written = time.perf_counter() - t0
    assert wait_for(lambda: len(db.rows(root)) >= memories + count, 600, 0.1), "never indexed"
    scratch = App(env={**os.environ, "MEMORYD_HOME": str(home / "scan")})

    def snapshot() -> set[tuple[str, str]]:
        return {(str(r.path), r.hash) for r in db.rows()}

    seen, settled_at = snapshot(), time.perf_counter()
    with open_index(scratch.paths) as fresh:  # the truth: a full scan into a fresh database
        while time.perf_counter() - t0 < 600:
            reconcile(fresh, app.config)
            if {(str(r.path), r.hash) for r in fresh.rows()} == seen:
                break
            time.sleep(0.1)
            now = snapshot()
            if now != seen:  # the daemon's index moved: note when it last did
                seen, settled_at = now, time.perf_counter()
    took = settled_at - t0
    _, _, peak = proc_stat(ctx["pid"])
    return [
        (f"{count}-file burst: index = full scan", f"{took:.1f} s", ""),
        ("  (of which writing the files)", f"{written:.1f} s", ""),
        ("peak RSS (whole run)", f"{peak / 1024:.1f} MB", ""),
    ]


def configure(config: Path, root: Path, home: Path, args: argparse.Namespace) -> None:
    """Sync off unless asked (measure the daemon, not a first commit of 10k files); extraction
    on with a trivial extractor when transcripts are measured."""
    text = "" if args.sync else f"roots:\n  - path: {root}\n    sync: false\n"
    if args.transcripts:
        script = home / "extractor.py"
        script.write_text(EXTRACTOR, encoding="utf-8")
        text += (
            f"extract:\n  command: '{sys.executable} {script}'\n  settle_ms: 2000\n"
            "  min_turns: 2\n  min_chars: 10\n  opencode: false\n"
        )
    if text:
        config.write_text(text, encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--edits", type=int, default=100)
    parser.add_argument("--idle", type=float, default=60.0)
    parser.add_argument("--burst", type=int, default=5_000)
    parser.add_argument("--transcripts", type=int, default=4, help="0 turns extraction off")
    parser.add_argument("--grow", type=float, default=30.0, help="seconds the transcripts grow")
    parser.add_argument(
        "--sync", action="store_true", help="leave git sync on (it commits the corpus mid-run)"
    )
    args = parser.parse_args()

    home = Path(tempfile.mkdtemp(prefix="memoryd-bench-"))
    os.environ["MEMORYD_HOME"] = str(home)
    from memoryd.app import App
    from memoryd.daemon.status import Status, read_status
    from memoryd.index import open_index
    from memoryd.init.plugin import init_global

    root = init_global(App()).root
    configure(App().paths.config_file, root, home, args)
    files = generate(root, args.memories)
    app = App()
    log = (home / "daemon.out").open("w")
    fake_home = home / "home"
    (fake_home / ".claude" / "projects").mkdir(parents=True)
    env = {**os.environ, "HOME": str(fake_home)}
    daemon = subprocess.Popen(
        [sys.executable, "-m", "memoryd", "run"], stdout=log, stderr=log, env=env
    )
    table: list[Row] = []
    try:
        started = time.monotonic()

        def status() -> Status | None:
            return read_status(app.paths).status

        assert wait_for(lambda: (status() or NO).last_reconcile, 300, 0.05), "daemon not up"
        table.append(("startup: index everything", f"{time.monotonic() - started:.1f} s", ""))
        time.sleep(2)
        with open_index(app.paths) as db:
            ctx = {
                "app": app,
                "db": db,
                "home": home,
                "pid": daemon.pid,
                "claude": fake_home / ".claude" / "projects",
                "state": app.paths.state_dir,
            }
            table += latency(ctx, files, args.edits)
            table += compiled(files, max(1, args.edits // 5))
            table += idle(daemon.pid, args.idle, args.memories, bool(args.transcripts))
            if args.transcripts:
                table += transcripts(ctx, args.transcripts, args.grow)
            table += burst(ctx, root, args.burst, args.memories)
    finally:
        daemon.send_signal(signal.SIGTERM)
        code = daemon.wait(timeout=60)
        log.close()
    table.append(("exit code after SIGTERM", str(code), "0"))
    width = max(len(r[0]) for r in table)
    print(f"{'measure':<{width}}  {'value':>10}  target")
    for name, value, target in table:
        print(f"{name:<{width}}  {value:>10}  {target}")
    print(f"(home: {home})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
