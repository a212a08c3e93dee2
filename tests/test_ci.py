"""`.ci/run` is the README's test command, and passes its arguments on to pytest.

The real `.ci/run` and `./dev` scripts run; only the virtualenv's tools are
stand-ins that log their arguments (a nested run of the whole suite is not
something a test can own).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TOOL = '#!/bin/sh\nprintf "%s %s\\n" "$(basename "$0")" "$*" >> "$TOOL_LOG"\n'


def stand_in_venv(tmp_path: Path) -> Path:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True, exist_ok=True)
    for name in ("python", "ruff", "mypy"):
        tool = venv / "bin" / name
        tool.write_text(TOOL)
        tool.chmod(0o755)
    return venv


def run(tmp_path: Path, *command: str) -> list[str]:
    """Run ``command`` in the repository with the stand-in venv: the tool calls, in order."""
    log = tmp_path / "tools.log"
    log.unlink(missing_ok=True)
    env = {**os.environ, "MEMORYD_VENV": str(stand_in_venv(tmp_path)), "TOOL_LOG": str(log)}
    done = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return log.read_text().splitlines()


def test_ci_run_without_arguments_is_exactly_the_readmes_test_command(tmp_path: Path) -> None:
    assert "./dev test    # create .venv with the test extras" in (REPO / "README.md").read_text()
    readme = run(tmp_path, "sh", str(REPO / "dev"), "test")
    assert readme == [
        "python -m pip install --quiet --disable-pip-version-check -e .[test]",
        "ruff check src tests bench",
        "mypy ",
        "python -m pytest",
    ]
    assert run(tmp_path, "bash", str(REPO / ".ci" / "run")) == readme


def test_ci_run_passes_its_arguments_to_pytest(tmp_path: Path) -> None:
    calls = run(tmp_path, "bash", str(REPO / ".ci" / "run"), "-k", "recall", "-x")
    assert calls[1:3] == ["ruff check src tests bench", "mypy "]  # the checks still run first
    assert calls[-1] == "python -m pytest -k recall -x"
