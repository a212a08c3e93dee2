"""``memoryd mcp`` answers initialize, tools/list and prompts/list before the SDK has loaded.

Importing the SDK took 2.3-3.7 s under load, and Claude Code's first request of a
``claude -p`` run went out while memoryd was still connecting. Here the SDK's import is
made to hang: a server started before (which kept the SDK's own answers) still answers
what never changes at once, and a tool call waits for the SDK.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from typing import Any

from tests.tools.conftest import Setup

INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "test", "version": "0"}},
}  # fmt: skip
REQUESTS = [
    INITIALIZE,
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    {"jsonrpc": "2.0", "id": "p", "method": "prompts/list"},
    {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
     "params": {"name": "memory_recall", "arguments": {"query": "deploy"}}},
]  # fmt: skip
# `memoryd mcp`, with the SDK's import hanging when HANG is set
SERVER = """\
import os, sys, time
if os.environ.get("HANG"):
    class Hang:
        def find_spec(self, name, path=None, target=None):
            if name == "mcp.server":
                time.sleep(60)
    sys.meta_path.insert(0, Hang())
sys.argv = ["memoryd", "mcp"]
from memoryd.entry import main
raise SystemExit(main())
"""


def serve(setup: Setup, wanted: int, hang: bool, deadline: float) -> dict[Any, dict[str, Any]]:
    """Send every request; the answers that came before ``deadline`` seconds, by id."""
    env = {**os.environ, **({"HANG": "1"} if hang else {})}
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER], cwd=setup.repo, env=env, stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    answers: dict[Any, dict[str, Any]] = {}
    try:
        for request in REQUESTS:
            proc.stdin.write(json.dumps(request).encode() + b"\n")
        proc.stdin.flush()
        end, buffer = time.monotonic() + deadline, b""
        while len(answers) < wanted and time.monotonic() < end:
            ready, _, _ = select.select([proc.stdout], [], [], 0.1)
            if not ready:
                continue
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                break
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                message = json.loads(line)
                answers[message["id"]] = message
    finally:
        proc.kill()
        proc.wait(timeout=10)
    return answers


def test_a_second_start_answers_what_never_changes_while_the_sdk_still_loads(
    setup: Setup,
) -> None:
    first = serve(setup, wanted=4, hang=False, deadline=120)
    assert sorted(map(str, first)) == ["1", "2", "3", "p"]
    assert first[1]["result"]["serverInfo"]["name"] == "memoryd"
    hung = serve(setup, wanted=3, hang=True, deadline=20)
    # the SDK never loaded, yet the client has its own answers, word for word
    assert hung == {key: first[key] for key in (1, 2, "p")}
    assert {t["name"] for t in hung[2]["result"]["tools"]} >= {"memory_recall"}


def test_without_kept_answers_everything_waits_for_the_sdk(setup: Setup) -> None:
    """The first start (or one after an upgrade: a new version is a new key) answers at the
    SDK's pace; nothing is made up."""
    assert serve(setup, wanted=1, hang=True, deadline=5) == {}
