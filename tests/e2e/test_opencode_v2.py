"""integrations/opencode/memoryd.js under OpenCode 2's plugin API, driven by a node harness.

OpenCode 2 is not on the npm registry (opencode-ai's latest is 1.x, which
tests/e2e/test_opencode.py runs for real): ``opencode_v2.mjs`` loads the plugin as
OpenCode 2's docs say it does (``Plugin.define({id, setup(ctx)})``: the default export's
``id`` and ``setup``) and calls the hooks it registers (``session`` ``prompt`` and
``context``, ``tool`` ``execute.before``) as OpenCode 2 calls them. memoryd itself runs for
real. What the plugin says goes to OpenCode's log folder, never to the console.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.clients import INTEGRATIONS, client_env
from tests.e2e.conftest import Project

pytestmark = pytest.mark.e2e

HARNESS = Path(__file__).parent / "opencode_v2.mjs"
RULE = "- 部署只用 pnpm (`rules/部署只用-pnpm`) [project]"


def drive(project: Project, **env: str) -> dict[str, Any]:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is needed to load the OpenCode plugin")
    layered = project.home / ".local" / "share" / "mimocode" / "memory"
    layered.mkdir(parents=True, exist_ok=True)
    args = [str(INTEGRATIONS / "opencode" / "memoryd.js"), str(project.repo),
            str(layered / "MEMORY.md"), str(project.repo / "src" / "app.py")]  # fmt: skip
    done = subprocess.run(
        [node, str(HARNESS), *args], cwd=project.repo, capture_output=True, text=True,
        timeout=120, check=False, env=client_env(project.home, env),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_the_plugin_loads_as_an_opencode_2_plugin_and_injects_and_guards(
    project: Project,
) -> None:
    project.seed()
    out = drive(project)
    assert (out["exports"], out["id"], out["v1"]) == (["default"], "memoryd", "function")
    assert out["registered"] == ["session.context", "session.prompt", "tool.execute.before"]
    first, second, other = out["requests"]
    # both model requests of the prompt's turn carry one block, as a system part
    assert first == second and len(first) == 1 and first[0]["type"] == "text"
    block = first[0]["text"]
    assert block.startswith("<memory>") and block.count(RULE) == 1
    assert "### pitfalls/fts5-unicode61-merges-a-chinese-run (project pitfall)" in block
    assert other == []  # a session with no prompt yet: nothing to match memories to
    assert out["refused"].startswith("refused: ")
    assert " is not a memory path" in out["refused"]
    assert out["allowed"] == "allowed"
    assert out["console"] == []


def test_a_memoryd_that_cannot_run_is_said_in_opencodes_log_not_on_the_console(
    project: Project,
) -> None:
    out = drive(project, MEMORYD_BIN="/nonexistent/memoryd")
    assert out["requests"][0] == [] and out["allowed"] == "allowed"
    assert out["console"] == []
    log = (project.home / ".local" / "share" / "opencode" / "log" / "memoryd.log").read_text()
    lines = log.splitlines()
    assert len(lines) == 3  # the context, and each of the two guarded writes
    assert lines[0].split(" ", 1)[1].startswith(
        "error memoryd context could not run /nonexistent/memoryd: spawn /nonexistent/memoryd ENOENT"
    )
