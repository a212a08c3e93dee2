"""The Claude Code PreToolUse hook from docs/layouts.md, run as Claude Code would run it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "layouts.md"

pytestmark = pytest.mark.skipif(shutil.which("jq") is None, reason="the hook example needs jq")


def hook_script() -> str:
    text = DOC.read_text(encoding="utf-8")
    blocks = re.findall(r"```sh\n(#!/bin/sh\n.*?)```", text, flags=re.S)
    assert len(blocks) == 1, "docs/layouts.md should hold exactly one hook script"
    return blocks[0]


def run_hook(script: Path, payload: dict[str, object]) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(
        ["sh", str(script)],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def test_documented_hook_blocks_with_exit_2_and_allows_with_0(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MIMOCODE_HOME", str(tmp_path / "mimo"))
    root = tmp_path / "mimo" / "data" / "memory"
    root.mkdir(parents=True)
    work = tmp_path / "work"
    work.mkdir()
    script = tmp_path / "memory-guard.sh"
    script.write_text(hook_script())

    def payload(path: str, **extra: object) -> dict[str, object]:
        return {"tool_name": "Write", "cwd": str(work), "tool_input": {"file_path": path}, **extra}

    blocked = run_hook(script, payload(str(root / "sessions/s1/tasks/T1/progress.md")))
    assert blocked.returncode == 2
    assert "is under a session's tasks/ folder" in blocked.stderr
    allowed = run_hook(script, payload(str(root / "projects/p1/MEMORY.md")))
    assert (allowed.returncode, allowed.stderr) == (0, "")
    source = run_hook(script, payload(str(work / "src/app.py")))
    assert source.returncode == 0
    escape = run_hook(script, payload(".mimocode/../src/x.ts", agent_type="dream"))
    assert escape.returncode == 2 and "is outside both" in escape.stderr
    no_path = run_hook(script, {"tool_name": "Bash", "cwd": str(work), "tool_input": {}})
    assert no_path.returncode == 0
