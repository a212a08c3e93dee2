"""Helpers shared by the tests: the real CLI in a subprocess, git in a folder."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def run_cli(
    *args: str, cwd: Path | None = None, input: str | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run the real ``memoryd`` CLI in a subprocess (environment from os.environ)."""
    return subprocess.run(
        [sys.executable, "-m", "memoryd", *args],
        cwd=cwd,
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo`` and return its stdout (raises on failure)."""
    done = subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout
