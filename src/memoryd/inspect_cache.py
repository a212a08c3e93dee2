"""Inspect's findings kept in memoryd's cache folder, so a page can show them without a run.

A full ``inspect`` reads every file and runs every check: seconds at 10k memories, far
too slow for a list a person scrolls. The daemon runs it a little after each batch of
changes and stores the findings here; the page's Memories view joins them to its rows
(``memoryd.index.browse``) and says how old they are. Without a daemon, the page stores
the findings of each inspect it runs (the Problems view) the same way.

The daemon runs it in a fresh interpreter (:func:`refresh_apart`, ``python -m
memoryd.inspect_cache``): inspect parses every file with its whole frontmatter, which at
100k memories took the daemon from 139 MB to a 714 MB peak, and glibc kept 404 MB of it
after, 20 s after every start and every batch. A child gives all of it back when it exits.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memoryd.app import App
from memoryd.fsutil import atomic_write
from memoryd.paths import Paths

log = logging.getLogger(__name__)

NAME = "inspect.json"


@dataclass(frozen=True)
class Cached:
    at_ms: int  # when the inspect ran
    memories: int
    findings: list[dict[str, str]]  # Finding.as_dict()

    def per_file(self) -> dict[Path, int]:
        """How many findings each file has."""
        counts: dict[Path, int] = {}
        for finding in self.findings:
            path = Path(finding["path"])
            counts[path] = counts.get(path, 0) + 1
        return counts


def file(paths: Paths) -> Path:
    return paths.cache_dir / NAME


def store(paths: Paths, memories: int, findings: list[dict[str, str]]) -> Cached:
    cached = Cached(int(time.time() * 1000), memories, findings)
    data = {"at_ms": cached.at_ms, "memories": memories, "findings": findings}
    target = file(paths)
    text = json.dumps(data, ensure_ascii=False)
    atomic_write(target, text.encode("utf-8", "backslashreplace"), durable=False)  # a cache
    return cached


def load(paths: Paths) -> Cached | None:
    """The last stored result; None when there is none or it cannot be read."""
    try:
        data: Any = json.loads(file(paths).read_bytes())
        return Cached(int(data["at_ms"]), int(data["memories"]), list(data["findings"]))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log.debug("no cached inspect result: %s", exc)
        return None


def refresh(app: App) -> Cached:
    """Run inspect now and store its findings."""
    from memoryd.inspection import inspect

    result = inspect(app)
    return store(app.paths, len(result.memories), [f.as_dict() for f in result.findings])


APART = [sys.executable, "-m", "memoryd.inspect_cache"]
APART_TIMEOUT_S = 3600.0  # a root of 300k memories takes minutes on a loaded machine


def refresh_apart(app: App) -> bool:
    """:func:`refresh` in a fresh interpreter with ``app``'s environment and folder (see the
    module docstring); True if it stored the findings."""
    try:
        done = subprocess.run(
            APART, env=dict(app.env), cwd=app.cwd, capture_output=True, timeout=APART_TIMEOUT_S,
            stdin=subprocess.DEVNULL, check=False,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("inspect's findings for the page were not refreshed: %s", exc)
        return False
    if done.returncode != 0:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:]
        log.warning(
            "inspect's findings for the page were not refreshed (exit %d): %s",
            done.returncode, tail[0] if tail else "no message",
        )  # fmt: skip
        return False
    return True


if __name__ == "__main__":
    refresh(App())
