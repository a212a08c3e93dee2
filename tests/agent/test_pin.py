"""``memoryd pin ID [--off]``: only the pinned line changes; inspect sees it at once."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import run_cli
from tests.index.conftest import write_memory

TEXT = "---\nid: facts/a\nkind: fact\nsummary: alpha   # kept as written\n---\nalpha body\n"


def test_pin_and_unpin_change_one_line(isolated_home: Path) -> None:
    assert run_cli("init").returncode == 0
    path = isolated_home / "memory" / "facts" / "a.md"
    path.parent.mkdir(exist_ok=True)
    path.write_text(TEXT)
    done = run_cli("pin", "facts/a")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "pinned facts/a\n"
    assert path.read_text() == TEXT.replace("---\nalpha", "pinned: true\n---\nalpha")
    assert listed()["facts/a"] is True
    again = run_cli("pin", "facts/a", "--json")
    assert json.loads(again.stdout)["changed"] is False
    assert run_cli("pin", "facts/a", "--off").stdout == "unpinned facts/a\n"
    assert path.read_text() == TEXT
    assert listed()["facts/a"] is False


def listed() -> dict[str, bool]:
    """Each memory's pinned flag, as inspect reads it from the index and the files."""
    memories = json.loads(run_cli("inspect", "--json").stdout)["memories"]
    return {m["id"]: m["pinned"] for m in memories}


def test_a_broken_frontmatter_is_refused_and_left_alone(isolated_home: Path) -> None:
    assert run_cli("init").returncode == 0
    root = isolated_home / "memory"
    broken = write_memory(root, "facts/b.md", "x", id="facts/b", kind="fact", summary="b")
    broken.write_text("---\nid: facts/b\nkind: [unclosed\n---\nx\n")
    done = run_cli("pin", "facts/b")
    assert done.returncode == 1
    assert done.stderr.startswith(
        "memoryd: error: refusing to pin 'facts/b': its frontmatter does not parse\n"
        "  hint: memoryd inspect says where; fix it, then try again"
    )
    assert broken.read_text() == "---\nid: facts/b\nkind: [unclosed\n---\nx\n"
