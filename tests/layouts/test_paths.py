"""Where the foreign trees are, and what every path in them means (pure rules)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memoryd.errors import ConfigError
from memoryd.layouts import (
    Identity,
    belongs,
    claude_entry,
    claude_projects_dir,
    claude_type,
    entry_for,
    layered_entry,
    layered_root,
    mimocode_data_dir,
    syncable,
)


def test_mimocode_home_puts_the_tree_under_its_data_folder() -> None:
    env = {"MIMOCODE_HOME": "/opt/mimo", "XDG_DATA_HOME": "/x", "HOME": "/h"}
    assert layered_root(env) == Path("/opt/mimo/data/memory")


def test_mimocode_home_must_be_absolute() -> None:
    with pytest.raises(ConfigError) as caught:
        mimocode_data_dir({"MIMOCODE_HOME": "rel/mimo", "HOME": "/h"})
    assert str(caught.value) == (
        "MIMOCODE_HOME must be an absolute path, got 'rel/mimo'\n"
        "  hint: export MIMOCODE_HOME=$PWD/rel/mimo or unset it"
    )


def test_without_mimocode_home_the_xdg_data_folder_is_used() -> None:
    assert layered_root({"XDG_DATA_HOME": "/xdg", "HOME": "/h"}) == Path("/xdg/mimocode/memory")
    assert layered_root({"HOME": "/h"}) == Path("/h/.local/share/mimocode/memory")
    # a relative XDG_DATA_HOME is ignored, as the XDG spec says
    assert layered_root({"XDG_DATA_HOME": "xdg", "HOME": "/h"}) == Path(
        "/h/.local/share/mimocode/memory"
    )


def test_claude_projects_folder() -> None:
    assert claude_projects_dir({"HOME": "/h"}) == Path("/h/.claude/projects")
    env = {"HOME": "/h", "CLAUDE_CONFIG_DIR": "/cc"}
    assert claude_projects_dir(env) == Path("/cc/projects")


LAYERED_CASES = [
    # path, scope, scope_id, type
    ("global/MEMORY.md", "global", "", "memory"),
    ("global/prefs.md", "global", "", "free"),
    ("global/g1/memory-style.md", "global", "g1", "memory"),
    ("projects/p1/MEMORY.md", "projects", "p1", "memory"),
    ("projects/p1/memory.md", "projects", "p1", "memory"),
    ("projects/p1/Memory.md", "projects", "p1", "memory"),
    ("projects/p1/MEMORY-arch.md", "projects", "p1", "memory"),
    ("projects/p1/memory-2.md", "projects", "p1", "memory"),
    ("projects/p1/memoryx.md", "projects", "p1", "free"),
    ("projects/p1/notes.md", "projects", "p1", "free"),
    ("projects/p1/sub/MEMORY.md", "projects", "p1", "free"),
    ("sessions/s1/checkpoint.md", "sessions", "s1", "checkpoint"),
    ("sessions/s1/checkpoint-tools.md", "sessions", "s1", "checkpoint"),
    ("sessions/s1/Checkpoint.md", "sessions", "s1", "free"),  # only memory ignores case
    ("sessions/s1/CHECKPOINT-x.md", "sessions", "s1", "free"),
    ("sessions/s1/checkpoints.md", "sessions", "s1", "free"),
    ("sessions/s1/notes.md", "sessions", "s1", "free"),  # the session scratchpad is free
    ("sessions/s1/tasks/T3/progress.md", "sessions", "s1", "progress"),
    ("sessions/s1/tasks/T3.1.2/notes.md", "sessions", "s1", "notes"),
    ("sessions/s1/tasks/T3/other.md", "sessions", "s1", "free"),
    ("sessions/s1/tasks/T3/sub/progress.md", "sessions", "s1", "free"),
    ("sessions/s1/tasks/progress.md", "sessions", "s1", "free"),
    ("sessions/s1/tasks/T3/Progress.md", "sessions", "s1", "free"),
]


@pytest.mark.parametrize(("rel", "scope", "scope_id", "type_"), LAYERED_CASES)
def test_layered_type_inference(rel: str, scope: str, scope_id: str, type_: str) -> None:
    assert layered_entry(rel) == Identity(id=rel[:-3], type=type_, scope=scope, scope_id=scope_id)
    assert entry_for("layered", rel, {}) == layered_entry(rel)
    assert belongs("layered", rel)


@pytest.mark.parametrize(
    "rel",
    ["MEMORY.md", "other/p1/x.md", "projects/x.md", "sessions/s1.md", "projects/p1/x.txt",
     "Projects/p1/MEMORY.md"],
)  # fmt: skip
def test_paths_outside_the_layered_shape_are_not_entries(rel: str) -> None:
    assert layered_entry(rel) is None
    assert not belongs("layered", rel)


@pytest.mark.parametrize(
    ("meta", "type_"),
    [
        ({"type": "user"}, "user"),
        ({"type": "feedback"}, "feedback"),
        ({"type": "Project"}, "project"),
        ({"name": "x", "metadata": {"type": "reference"}}, "reference"),
        ({"metadata": {"type": "feedback"}, "description": "d"}, "feedback"),
        ({"type": "misc"}, "free"),
        ({"type": 3}, "free"),
        ({"metadata": "type: user"}, "free"),
        ({}, "free"),
    ],
)
def test_claude_type_comes_from_the_frontmatter(meta: dict[str, object], type_: str) -> None:
    assert claude_type(meta) == type_


def test_claude_entries_only_for_memory_folder_files() -> None:
    assert claude_entry("-home-me-app/memory/user_role.md", {"type": "user"}) == Identity(
        id="-home-me-app/memory/user_role", type="user", scope="cc", scope_id="-home-me-app"
    )
    index = claude_entry("-home-me-app/memory/MEMORY.md", {})
    assert index is not None and index.type == "free"
    for rel in ("-home-me-app/notes.md", "-home-me-app/memory/sub/x.md", "memory/x.md"):
        assert claude_entry(rel, {"type": "user"}) is None
        assert not belongs("claude", rel)


def test_plugin_layout_has_no_foreign_entries() -> None:
    assert entry_for("plugin", "rules/x.md", {"type": "user"}) is None
    assert belongs("plugin", "rules/x.md")


@pytest.mark.parametrize(
    ("layout", "rel", "expected"),
    [
        ("layered", "global/MEMORY.md", True),
        ("layered", "projects/p1/MEMORY.md", True),
        ("layered", "projects/p1/memory-x.md", True),
        ("layered", "sessions/s1/checkpoint.md", False),
        ("layered", "sessions/s1/notes.md", False),
        ("layered", "sessions/s1/tasks/T1/progress.md", False),
        ("layered", ".gitignore", True),
        ("claude", "slug/memory/user.md", True),
        ("claude", "slug/memory/MEMORY.md", True),
        ("claude", "slug/0b7c.jsonl", False),
        ("claude", "slug/todos/x.md", False),
        ("plugin", "rules/x.md", True),
    ],
)
def test_syncable(layout: str, rel: str, expected: bool) -> None:
    assert syncable(layout, rel) is expected
