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
from pathlib import Path
from typing import Any

from tests.agent.conftest import Setup
from tests.agent.test_cli_context import fill
from tests.agent.test_removed_worktree import worktree
from tests.helpers import git

INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "test", "version": "0"}},
}  # fmt: skip
REQUESTS: list[dict[str, Any]] = [
    INITIALIZE,
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    {"jsonrpc": "2.0", "id": "p", "method": "prompts/list"},
    {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
     "params": {"name": "memory_recall", "arguments": {"query": "bastion"}}},
]  # fmt: skip
# `memoryd mcp`, with the SDK's import taking HANG more seconds when it is set
SERVER = """\
import os, sys, time
if os.environ.get("HANG"):
    class Hang:
        def find_spec(self, name, path=None, target=None):
            if name == "mcp.server":
                time.sleep(float(os.environ["HANG"]))
    sys.meta_path.insert(0, Hang())
sys.argv = ["memoryd", "mcp"]
from memoryd.entry import main
raise SystemExit(main())
"""


class Server:
    """One `memoryd mcp` process (the SDK's import taking ``hang`` more seconds)."""

    def __init__(self, cwd: Path, hang: float = 0) -> None:
        env = {**os.environ, **({"HANG": str(hang)} if hang else {})}
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SERVER], cwd=cwd, env=env, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        self.answers: dict[Any, dict[str, Any]] = {}
        self.buffer = b""

    def send(self, *requests: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        for request in requests:
            self.proc.stdin.write(json.dumps(request).encode() + b"\n")
        self.proc.stdin.flush()

    def wait(self, wanted: int, deadline: float) -> dict[Any, dict[str, Any]]:
        """The answers by id, once there are ``wanted`` of them or ``deadline`` seconds passed."""
        assert self.proc.stdout is not None
        end = time.monotonic() + deadline
        while len(self.answers) < wanted and time.monotonic() < end:
            ready, _, _ = select.select([self.proc.stdout], [], [], 0.1)
            if not ready:
                continue
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                break
            self.buffer += chunk
            while b"\n" in self.buffer:
                line, self.buffer = self.buffer.split(b"\n", 1)
                message = json.loads(line)
                self.answers[message["id"]] = message
        return self.answers

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.proc.kill()
        self.proc.wait(timeout=10)


def serve(setup: Setup, wanted: int, hang: bool, deadline: float) -> dict[Any, dict[str, Any]]:
    """Send every request; the answers that came before ``deadline`` seconds, by id."""
    with Server(setup.repo, hang=60 if hang else 0) as server:
        server.send(*REQUESTS)
        return server.wait(wanted, deadline)


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


def test_a_worktree_removed_while_the_sdk_loads_is_still_served_as_its_project(
    setup: Setup,
) -> None:
    """The client has its answers at once and its session may remove the worktree the server
    started in before the SDK has loaded: the project was read from the worktree only then,
    so recall served the global memory alone (seen with the real Claude Code under load)."""
    fill(setup)
    folder = worktree(setup)
    serve(setup, wanted=4, hang=False, deadline=120)  # answers kept
    with Server(folder, hang=3) as server:
        server.send(*REQUESTS[:2])
        assert 1 in server.wait(1, deadline=20)
        git(setup.repo, "worktree", "remove", "--force", str(folder))
        server.send(REQUESTS[4])
        answer = server.wait(2, deadline=120)[3]
    text = answer["result"]["content"][0]["text"]
    assert text.startswith("## facts/the-bastion-host-deploys-staging (project fact, "), text
