"""Sync cycle times: two devices, a local bare remote, N memories from the shared corpus.

    .venv/bin/python bench/sync_bench.py [N ...]      (default: 1000 10000)

Rows: the first commit of N new memories (scanned for secrets, pushed), a cycle with
nothing to do (commit check + fetch), one edited memory (commit + push), a
fast-forward of that edit on the other device, and a diverged cycle (10 changes on each
side, one same-line conflict) replayed and pushed. Everything lives in a temp folder;
commits use a throwaway identity.

A second table gives each git command's CPU (user + system, its children's included) in
the first commit: the slowest single call and the sum over calls. Target: no call over
5 s at 100k (issue 38: ``git reset --pathspec-from-file`` with every path took ~75 s).
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.corpus import generate
from memoryd import gitcli
from memoryd.config.sections import Config, RootConfig
from memoryd.paths import resolve_paths
from memoryd.sync.engine import SyncOutcome, sync_root

IDENTITY = {
    "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}  # fmt: skip


def run(*args: str, cwd: Path | None = None) -> None:
    subprocess.run(args, cwd=cwd, check=True, capture_output=True)


class Device:
    def __init__(self, name: str, home: Path) -> None:
        self.paths = resolve_paths({"MEMORYD_HOME": str(home)})
        self.root = self.paths.default_global_root
        self.rc = RootConfig(path=self.root)
        self.config = Config(device=name, roots=(self.rc,))

    def sync(self) -> SyncOutcome:
        outcome = sync_root(self.config, self.paths, self.rc, force=True)
        assert outcome.ok, outcome
        return outcome


GIT_CPU: dict[str, list[float]] = {}  # git command -> CPU seconds of each call


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _measured_run(real: Callable[..., gitcli.Done]) -> Callable[..., gitcli.Done]:
    def run(args: list[str], **kw: object) -> gitcli.Done:
        before = _children_cpu()
        try:
            return real(args, **kw)
        finally:
            GIT_CPU.setdefault(args[0] if args else "?", []).append(_children_cpu() - before)

    return run


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace(old, new, 1) if old in text else text + new, encoding="utf-8")


def bench(n: int, base: Path) -> tuple[list[tuple[str, float]], dict[str, list[float]]]:
    remote = base / "remote.git"
    run("git", "init", "-q", "--bare", "-b", "main", str(remote))
    a, b = Device("a", base / "a"), Device("b", base / "b")
    files = generate(a.root, n, seed=0)
    run("git", "init", "-q", "-b", "main", cwd=a.root)
    run("git", "remote", "add", "origin", str(remote), cwd=a.root)
    GIT_CPU.clear()
    rows = [("first commit + push", timed(a.sync))]
    first = {step: list(cpu) for step, cpu in GIT_CPU.items()}
    run("git", "clone", "-q", str(remote), str(b.root))
    rows.append(("nothing to do", timed(a.sync)))
    edit(files[0], "\n", "\nedited on a\n")
    rows.append(("one edit: commit + push", timed(a.sync)))
    rows.append(("fast-forward on the other device", timed(b.sync)))
    for i in range(1, 11):
        edit(files[i], "\n", "\nmore from a\n")
        edit(files[10 + i], "\n", "\nmore from b\n")
    (a.root / files[0].relative_to(a.root)).write_text("a wins?\n", encoding="utf-8")
    (b.root / files[0].relative_to(a.root)).write_text("b wins?\n", encoding="utf-8")
    a.sync()
    outcome: list[SyncOutcome] = []
    rows.append(("diverged: replay 10 + 1 conflict, push", timed(lambda: outcome.append(b.sync()))))
    assert outcome[0].conflicts, outcome
    return rows, first


def main() -> None:
    sizes = [int(x) for x in sys.argv[1:]] or [1000, 10_000]
    os.environ.update(IDENTITY)
    gitcli.run = _measured_run(gitcli.run)
    firsts = []
    print(f"{'memories':>8}  {'step':<40} {'ms':>9}")
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="memoryd-sync-bench-") as tmp:
            rows, first = bench(n, Path(tmp))
            for step, ms in rows:
                print(f"{n:>8}  {step:<40} {ms:>9.0f}")
            firsts.append((n, first))
    print()
    print(f"{'memories':>8}  {'first commit: git step':<24} {'calls':>5} {'max s':>7} {'sum s':>7}")
    for n, first in firsts:
        for step, cpu in sorted(first.items(), key=lambda kv: -max(kv[1])):
            print(f"{n:>8}  {step:<24} {len(cpu):>5} {max(cpu):>7.2f} {sum(cpu):>7.2f}")
        worst = max((max(c), s) for s, c in first.items())
        verdict = "ok" if worst[0] <= 5.0 else "OVER"
        print(f"{n:>8}  slowest git step: {worst[1]} {worst[0]:.2f} s CPU (target 5 s): {verdict}")


if __name__ == "__main__":
    main()
