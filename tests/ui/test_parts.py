"""Pieces of the page that are plain functions: the diff rows, the score parts, the CLI."""

from __future__ import annotations

import math
import socket
import time
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from memoryd.config.sections import Config, RootConfig
from memoryd.index import open_index, recall, reconcile
from memoryd.paths import resolve_paths
from memoryd.ui.diff import side_by_side
from tests.helpers import run_cli
from tests.index.conftest import write_memory

DAY_MS = 86_400_000


def test_diff_pairs_changed_lines_and_marks_one_sided_ones() -> None:
    rows = side_by_side("a\nB\nc\nextra\n", "a\nb\nc\n")
    assert [(r["op"], r["left"], r["right"]) for r in rows] == [
        ("equal", "a", "a"),
        ("change", "B", "b"),
        ("equal", "c", "c"),
        ("delete", "extra", None),
    ]
    assert [(r["left_no"], r["right_no"]) for r in rows] == [(1, 1), (2, 2), (3, 3), (4, None)]
    assert [r["op"] for r in side_by_side("", "x\ny\n")] == ["insert", "insert"]


lines = st.lists(st.sampled_from(["a", "b", "分词", "", "<script>"]), max_size=12)


@given(lines, lines)
def test_diff_keeps_every_line_of_both_sides_in_order(left: list[str], right: list[str]) -> None:
    rows = side_by_side("\n".join(left), "\n".join(right))
    assert [r["left"] for r in rows if r["left"] is not None] == "\n".join(left).splitlines()
    assert [r["right"] for r in rows if r["right"] is not None] == "\n".join(right).splitlines()


def test_score_parts_are_what_the_score_multiplies(tmp_path: Path) -> None:
    now = int(time.time() * 1000)
    root = RootConfig(path=tmp_path / "g", scope="global")
    for n, age in enumerate((1, 8, 20)):
        write_memory(root.path, f"facts/f{n}.md", f"deploy note {n}", kind="fact",
                     summary=f"deploy {n}", updated=now - age * DAY_MS)  # fmt: skip
    write_memory(root.path, "facts/pinned.md", "deploy pinned", pinned=True, updated=now - 9000)
    config = Config(roots=(root,))
    with open_index(resolve_paths()) as db:
        reconcile(db, config, [root])
        hits = recall(db, config, "deploy", [root], now_ms=now, bump=False)
    assert len(hits) == 4
    for hit in hits:
        assert set(hit.parts) >= {"relevance", "scope", "age", "hits"}
        assert hit.parts["relevance"] == hit.relevance
        assert math.prod(hit.parts.values()) == hit.score
        assert hit.to_json()["parts"]["scope"] == config.search.global_prior
    ages = {h.id: h.parts["age"] for h in hits}
    assert ages["facts/pinned"] == 1.0
    assert ages["facts/f0"] > ages["facts/f1"] > ages["facts/f2"]


def test_a_busy_port_and_a_bad_port_are_clear_errors(isolated_home: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = run_cli("ui", "--no-open", "--port", str(port))
    assert done.returncode == 1
    assert done.stderr.startswith(
        f"memoryd: error: cannot listen on 127.0.0.1:{port}: Address already in use\n"
        "  hint: leave --port out for a free port, or pick another one"
    )
    bad = run_cli("ui", "--no-open", "--port", "70000")
    assert bad.returncode == 2
    assert "--port must be between 0 and 65535, got 70000" in bad.stderr


def test_a_memory_shows_dates_and_whether_its_root_commits(tmp_path: Path) -> None:
    """The page showed created/updated as epoch milliseconds, and promised 'the next sync
    commits it' for a project root, which does not commit."""
    from memoryd.app import App
    from memoryd.ui.views import memory
    from tests.helpers import git

    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    assert run_cli("init").returncode == 0
    assert run_cli("init", "--project", str(project)).returncode == 0
    done = run_cli("remember", "--kind", "fact", "--summary", "the gate is staging",
                   "--json", "body", cwd=project)  # fmt: skip
    assert done.returncode == 0, done.stderr
    rel = "facts/the-gate-is-staging.md"
    page = memory(App(cwd=project), {"root": str(project / ".memory"), "path": rel})
    assert page["commits"] is False
    created = page["meta"]["created"]
    assert time.strftime("%Y-%m-%d ", time.gmtime()) in created and created.endswith(" UTC")
    global_root = App().paths.default_global_root
    (global_root / "facts/a.md").write_text("---\nkind: fact\nsummary: a\nupdated: 0\n---\nx\n")
    page = memory(App(), {"root": str(global_root), "path": "facts/a.md"})
    assert page["commits"] is True
    assert page["meta"]["updated"] == "1970-01-01 00:00:00 UTC"


def test_the_daemon_keeps_the_findings_the_list_shows_current(
    isolated_home: Path, tmp_path: Path
) -> None:
    from memoryd.app import App
    from memoryd.inspect_cache import load
    from tests.daemon.harness import DaemonProcess, wait_until

    assert run_cli("init").returncode == 0
    config = isolated_home / "config.yaml"
    config.write_text(config.read_text() + "\ndaemon:\n  inspect_after_s: 0.5\n")
    root = isolated_home / "memory"
    daemon = DaemonProcess(tmp_path)
    try:
        app = App()
        daemon.wait_ready(app)
        assert wait_until(lambda: load(app.paths) is not None)  # one run after the start
        broken = root / "facts" / "broken.md"
        broken.parent.mkdir(exist_ok=True)
        broken.write_text("---\nkind: [unclosed\n---\nbody\n")

        def found() -> bool:
            cached = load(app.paths)
            return cached is not None and broken in cached.per_file()

        assert wait_until(found)  # a little after the batch that indexed it
        broken.unlink()
        assert wait_until(lambda: not found())
    finally:
        assert daemon.terminate() == 0, daemon.output()
