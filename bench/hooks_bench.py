"""memoryd's hooks as the real Claude Code CLI times them (its transcript's ``durationMs``).

Run: .venv/bin/python bench/hooks_bench.py [RUNS] [MEMORIES]   (default: 5 runs, 200 memories)
Needs node and npm: the clients come from tests/e2e/node (npm ci, as the e2e tests do).
Each run is ``claude -p`` against a fake Messages API on loopback with the shipped settings
(src/memoryd/integrations/claude-code/settings.json), a project root of MEMORIES generated
memories, and the prompt hook in its plain-text form as well (Claude Code records how long a
hook took only for some answers). The floor is ``memoryd --version`` timed in the same run:
the start-up cost every hook pays before doing any work.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script

from tests.e2e.clients import INTEGRATIONS, Client, client_env, install, version
from tests.e2e.fake_models import FakeModelAPI, Turn

from bench.corpus import generate

PROMPTS = ("分词 FTS5 两字词", "why does the pnpm lockfile break", "watchdog 依赖 inotify")


def durations(home: Path, session: str) -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    for path in (home / ".claude" / "projects").glob(f"*/{session}.jsonl"):
        for line in path.read_text().splitlines():
            entry = json.loads(line).get("attachment") or {}
            if entry.get("type") == "hook_success" and "durationMs" in entry:
                found.setdefault(entry["hookName"], []).append(int(entry["durationMs"]))
    return found


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    bin_dir = install()
    with tempfile.TemporaryDirectory(prefix="memoryd-hooks-bench-") as raw:
        tmp = Path(raw)
        home, repo = tmp / "home", tmp / "app"
        home.mkdir()
        repo.mkdir()
        os.environ.update(MEMORYD_HOME=str(tmp / "memoryd-home"), HOME=str(home))
        env = client_env(home)
        subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
        for args in (["init"], ["init", "--project"]):
            subprocess.run([sys.executable, "-m", "memoryd", *args], cwd=repo, env=env,
                           check=True, capture_output=True)  # fmt: skip
        generate(repo / ".memory", count)
        settings = json.loads((INTEGRATIONS / "claude-code" / "settings.json").read_text())
        plain = {"type": "command", "command": "memoryd context --hook", "timeout": 10}
        settings["hooks"]["UserPromptSubmit"][0]["hooks"].append(plain)
        (home / ".claude").mkdir()
        (home / ".claude" / "settings.json").write_text(json.dumps(settings))
        floor = []
        for _ in range(runs):
            start = time.perf_counter()
            subprocess.run(["memoryd", "--version"], env=env, check=True, capture_output=True)
            floor.append((time.perf_counter() - start) * 1000)
        seen: dict[str, list[int]] = {}
        with FakeModelAPI([Turn(text="ok")] * runs) as api:
            env.update(ANTHROPIC_BASE_URL=api.url, ANTHROPIC_API_KEY="sk-ant-bench-fake")
            client = Client(bin_dir, env, repo)
            for i in range(runs):
                done = client.run("claude", "-p", PROMPTS[i % len(PROMPTS)],
                                  "--output-format", "json")  # fmt: skip
                session = json.loads(done.stdout)["session_id"]
                for name, values in durations(home, session).items():
                    seen.setdefault(name, []).extend(values)
        base = statistics.median(floor)
        print(f"claude {version(bin_dir, 'claude')}, {count} project memories, {runs} runs")
        print(f"{'hook':34} {'n':>3} {'min ms':>7} {'median':>7} {'max':>7} {'x floor':>8}")
        print(f"{'floor: memoryd --version':34} {runs:>3} {min(floor):7.0f} {base:7.0f} "
              f"{max(floor):7.0f} {1.0:8.1f}")  # fmt: skip
        for name, values in sorted(seen.items()):
            mid = statistics.median(values)
            print(f"{name:34} {len(values):>3} {min(values):7d} {mid:7.0f} {max(values):7d} "
                  f"{mid / base:8.1f}")  # fmt: skip
        shutil.rmtree(tmp / "home" / ".claude", ignore_errors=True)


if __name__ == "__main__":
    main()
