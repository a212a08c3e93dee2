"""A conflict copy is one problem (the conflict), never a malformed memory, and the
context block never spends a hit on a copy or on CONFLICTS.md."""

from __future__ import annotations

import json
from pathlib import Path

from tests.sync.test_cli import LINES, _cli
from tests.sync.world import World, make_world, memory


def conflicted_world(tmp_path: Path) -> tuple[World, str]:
    world = make_world(tmp_path)
    for device in world.devices:
        device.paths.config_file.write_text(f"device: {device.name}\n")
    world.a.write("facts/x.md", memory("facts/x", "deploy staging gate", LINES))
    world.settle()
    world.a.write("facts/x.md", memory("facts/x", "deploy staging gate", LINES.replace("line 2", "A2")))
    world.b.write("facts/x.md", memory("facts/x", "deploy staging gate", LINES.replace("line 2", "B2")))
    world.a.sync()
    outcome = world.b.sync()
    world.settle()
    return world, outcome.conflicts[0]["copy"]


def test_a_copy_is_one_problem_and_context_never_injects_it(tmp_path: Path) -> None:
    world, copy = conflicted_world(tmp_path)
    code, out, _ = _cli(world.b.home, "inspect", "--json")
    assert code == 1
    about_copy = [
        (p["check"], p["message"]) for p in json.loads(out)["problems"] if copy in p["path"]
    ]
    assert about_copy == [
        ("sync.conflicts", "sync conflict: desktop's version of facts/x.md (both versions kept)")
    ]  # not also "id 'facts/x' does not match its path", whose fix edits the copy
    code, out, _ = _cli(world.b.home, "recall", "--json", "deploy staging gate")
    recalled = [hit["id"] for hit in json.loads(out)]
    assert copy.removesuffix(".md") in recalled  # recall still finds it, marked
    code, out, err = _cli(world.b.home, "context", "--json", "deploy staging gate")
    assert code == 0, err
    block = json.loads(out)
    hits = block["text"].split("## Relevant memories", 1)[1]
    assert "### facts/x (global fact)" in hits
    assert "conflict-" not in hits and "CONFLICTS" not in hits
    assert [e["id"] for e in block["entries"]] == ["facts/x"]  # the copy took a second hit
