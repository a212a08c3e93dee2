"""`memoryd mcp` start-up: the time from spawning it to the answer of ``initialize``.

Run: .venv/bin/python bench/mcp_bench.py [RUNS]   (default 10)
An agent starts memoryd's MCP server with each session; Claude Code lists memoryd's tools
only once it has answered, so a slow start leaves the first request of a ``claude -p``
run without them (2.3-3.7 s were seen under load). Target: under 0.5 s on an idle machine.
The floor is ``python -c pass`` with the same interpreter, measured in the same run; the
table also gives ``memoryd --version`` (the console script's own start) and the time to
the ``tools/list`` answer, and the first start (nothing kept yet: the SDK's own pace, one
run). ``--profile`` prints the imports that cost most
(``python -X importtime``) instead.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

VENV_BIN = Path(sys.executable).parent
INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "bench", "version": "0"}},
}  # fmt: skip
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def env(home: Path) -> dict[str, str]:
    return {
        **os.environ, "MEMORYD_HOME": str(home / "memoryd"), "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"), "XDG_DATA_HOME": str(home / ".local"),
    }  # fmt: skip


def serve_once(home: Path, cwd: Path) -> tuple[float, float]:
    """Seconds to the initialize answer and to the tools/list answer."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [str(VENV_BIN / "memoryd"), "mcp"], cwd=cwd, env=env(home), stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(json.dumps(INITIALIZE) + "\n")
        proc.stdin.flush()
        answer = json.loads(proc.stdout.readline())
        ready = time.perf_counter() - start
        assert answer["id"] == 1 and "result" in answer, answer
        proc.stdin.write(json.dumps(INITIALIZED) + "\n" + json.dumps(LIST) + "\n")
        proc.stdin.flush()
        listed = json.loads(proc.stdout.readline())
        assert listed["id"] == 2 and listed["result"]["tools"], listed
        return ready, time.perf_counter() - start
    finally:  # answered: it may still be loading the SDK, which is no longer timed
        proc.kill()
        proc.wait(timeout=10)


def timed(command: list[str], home: Path, cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env(home), check=True, capture_output=True)
    return time.perf_counter() - start


def profile(home: Path, cwd: Path, top: int = 25) -> None:
    """The imports of `memoryd mcp` up to its first answer, costliest (cumulative) first."""
    code = "import sys; sys.argv=['memoryd','mcp']; from memoryd.entry import main; main()"
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code], cwd=cwd, env=env(home),
        input=json.dumps(INITIALIZE) + "\n", capture_output=True, text=True, timeout=60,
        check=False,
    )  # fmt: skip
    rows = []
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "cumulative" not in line:
            own, total, name = (p.strip() for p in line[12:].split("|"))
            rows.append((int(total), int(own), name))
    print(f"{'cumulative ms':>14} {'self ms':>8}  module")
    for cumulative, self_us, name in sorted(rows, reverse=True)[:top]:
        print(f"{cumulative / 1000:>14.1f} {self_us / 1000:>8.1f}  {name}")


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    runs = int(args[0]) if args else 10
    with tempfile.TemporaryDirectory() as tmp:
        home, project = Path(tmp), Path(tmp) / "project"
        project.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=project, check=True)
        for init in (["init"], ["init", "--project"]):
            subprocess.run([str(VENV_BIN / "memoryd"), *init], cwd=project, env=env(home),
                           check=True, capture_output=True)  # fmt: skip
        if "--profile" in sys.argv:
            profile(home, project)
            return
        first = serve_once(home, project)  # nothing kept yet: at the SDK's pace (and fills it)
        floor = [timed([sys.executable, "-c", "pass"], home, project) for _ in range(runs)]
        version = [timed([str(VENV_BIN / "memoryd"), "--version"], home, project)
                   for _ in range(runs)]  # fmt: skip
        served = [serve_once(home, project) for _ in range(runs)]
    base = statistics.median(floor)
    rows = [
        ("first start: initialize answered", [first[0]]),
        ("python -c pass (floor)", floor),
        ("memoryd --version", version),
        ("memoryd mcp: initialize answered", [r for r, _ in served]),
        ("memoryd mcp: tools/list answered", [t for _, t in served]),
    ]
    print(f"memoryd mcp start-up, {runs} runs (target: initialize answered < 500 ms idle)")
    print(f"{'':36} {'p50 ms':>8} {'max ms':>8} {'x floor':>8}")
    for name, times in rows:
        p50 = statistics.median(times)
        print(f"{name:36} {p50 * 1000:>8.0f} {max(times) * 1000:>8.0f} {p50 / base:>8.1f}")


if __name__ == "__main__":
    main()
