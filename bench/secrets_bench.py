"""Secret scanner speed: scan N generated memories on one core and print files/s.

Usage: .venv/bin/python bench/secrets_bench.py [-n 10000] [--seed 7]

The corpus comes from bench/corpus.py (the index benchmark's generator). Target:
10k memories in under 2 s, so the pre-commit hook is never felt.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
TARGET_S_PER_10K = 2.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=10_000, help="memories to generate")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    sys.path.insert(0, str(REPO / "src"))
    from bench.corpus import generate
    from memoryd.secrets.scanner import scan
    from memoryd.secrets.targets import scan_paths, scan_staged

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        generate(root, args.n, args.seed)
        files = sorted(p for p in root.rglob("*.md") if p.is_file())
        texts = [p.read_text(encoding="utf-8") for p in files]
        rows = [
            _measure("scan(text), texts in memory", lambda: [scan(t) for t in texts]),
            _measure(
                "memoryd scan DIR (walk, read, scan)", lambda: _found(scan_paths([root], root))
            ),
        ]
        _git(root, "init", "-q")
        _git(root, "add", "-A")
        rows.append(
            _measure("memoryd scan --staged (all staged)", lambda: _found(scan_staged(root)))
        )
    size = sum(len(t.encode()) for t in texts) / max(1, len(texts))
    print(f"corpus: {len(texts)} memories, {size:.0f} bytes on average, seed {args.seed}")
    print(f"{'what':38} {'seconds':>8} {'files/s':>9} {'findings':>9} {'10k in':>8}")
    ok = rows[0][1] / max(1, len(texts)) * 10_000 < TARGET_S_PER_10K  # the scanner itself
    for name, seconds, found in rows:
        per_10k = seconds / max(1, len(texts)) * 10_000
        rate = len(texts) / seconds
        print(f"{name:38} {seconds:8.3f} {rate:9.0f} {found:9d} {per_10k:7.2f}s")
    verdict = "met" if ok else "MISSED"
    print(f"target: scanning 10k memories in < {TARGET_S_PER_10K:.0f} s on one core: {verdict}")
    print("(the other rows add walking, reading and git; they depend on the disk and the load)")
    return 0 if ok else 1


def _found(report: Any) -> list[list[object]]:
    return [[f] for _where, f in report.findings]


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def _measure(name: str, work: object) -> tuple[str, float, int]:
    assert callable(work)
    start = time.perf_counter()
    results = work()
    seconds = time.perf_counter() - start
    return name, seconds, sum(len(r) for r in results)


if __name__ == "__main__":
    raise SystemExit(main())
