"""Both foreign layouts indexed and recalled, with --type, --scope-id and --markers layered."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from memoryd.app import App
from memoryd.cli import main
from memoryd.index import open_index, recall, reconcile
from tests.helpers import run_cli

LAYERED = {
    "global/MEMORY.md": "# Global\nPrefer ripgrep over grep for searching.\n",
    "projects/p1/MEMORY.md": "## Rules\nThe deploy script uses pnpm, never npm: lockfile.\n",
    "projects/p1/memory-arch.md": "Architecture: the deploy pipeline runs on buildkite.\n",
    "projects/p2/MEMORY.md": "## Rules\nDeploy with cargo dist.\n",
    "sessions/s1/checkpoint.md": "## Current state\nDeploy blocked on a flaky lockfile test.\n",
    "sessions/s1/notes.md": "## [turn 3 · 2026-11-29T10:00:00Z]\nDeploy notes scratch.\n",
    "sessions/s1/tasks/T1/progress.md": "§1 deploy progress: pnpm install passes.\n",
    "sessions/s1/tasks/T1/notes.md": "Task notes about the deploy.\n",
    "stray.md": "Deploy text outside any scope is not a memory.\n",
}
CLAUDE = {
    "-home-me-app/memory/MEMORY.md": "- [User role](user_role.md): deploy engineer\n",
    "-home-me-app/memory/user_role.md": "---\nname: role\ntype: user\n---\nThe user runs deploy.\n",
    "-home-me-app/memory/feedback_tests.md": (
        "---\nname: tests\nmetadata:\n  type: feedback\n---\nRun deploy tests first.\n"
    ),
    "-home-me-web/memory/project_goal.md": "---\ntype: project\n---\nShip the deploy page.\n",
    "-home-me-app/todos/deploy.md": "deploy todo that is not a memory\n",
}


def build(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


@pytest.fixture
def trees(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.setenv("MIMOCODE_HOME", str(tmp_path / "mimo"))
    layered = tmp_path / "mimo" / "data" / "memory"
    claude = Path(os.environ["HOME"]) / ".claude" / "projects"
    build(layered, LAYERED)
    build(claude, CLAUDE)
    for args in (["init"], ["init", "--layered", "--project-id", "p1"], ["init", "--claude"]):
        err = io.StringIO()
        assert main(args, App(cwd=tmp_path, out=io.StringIO(), err=err)) == 0, err.getvalue()
    return layered, claude


def recall_json(*args: str) -> list[dict[str, object]]:
    done = run_cli("recall", *args, "--json", "--limit", "20")
    assert done.returncode == 0, done.stderr
    hits: list[dict[str, object]] = json.loads(done.stdout)
    return hits


def by_id(hits: list[dict[str, object]]) -> dict[str, dict[str, object]]:
    return {str(h["id"]): h for h in hits}


def test_both_layouts_are_indexed_with_type_and_scope_id(trees: tuple[Path, Path]) -> None:
    hits = by_id(recall_json("deploy", "--everywhere"))
    expected = {
        "projects/p1/MEMORY": ("layered", "memory", "p1"),
        "projects/p1/memory-arch": ("layered", "memory", "p1"),
        "projects/p2/MEMORY": ("layered", "memory", "p2"),
        "sessions/s1/checkpoint": ("layered", "checkpoint", "s1"),
        "sessions/s1/notes": ("layered", "free", "s1"),
        "sessions/s1/tasks/T1/progress": ("layered", "progress", "s1"),
        "sessions/s1/tasks/T1/notes": ("layered", "notes", "s1"),
        "-home-me-app/memory/MEMORY": ("claude", "free", "-home-me-app"),
        "-home-me-app/memory/user_role": ("claude", "user", "-home-me-app"),
        "-home-me-app/memory/feedback_tests": ("claude", "feedback", "-home-me-app"),
        "-home-me-web/memory/project_goal": ("claude", "project", "-home-me-web"),
    }
    got = {k: (h["layout"], h["type"], h["scope_id"]) for k, h in hits.items()}
    assert got == expected  # no stray.md, no todos/: not memories of their layouts


def test_results_say_what_each_file_is_never_no_summary(trees: tuple[Path, Path]) -> None:
    build(trees[1], {"-home-me-web/memory/reference_ci.md": (
        "---\nname: ci\ndescription: Where the deploy CI dashboards live\ntype: reference\n---\n"
        "Grafana board deploy-ci.\n"
    )})  # fmt: skip
    summaries = {str(h["id"]): h["summary"] for h in recall_json("deploy", "--everywhere")}
    assert summaries["-home-me-web/memory/reference_ci"] == "Where the deploy CI dashboards live"
    assert summaries["-home-me-app/memory/user_role"] == "role"  # no description: the name
    assert summaries["-home-me-web/memory/project_goal"] == "Ship the deploy page."
    assert summaries["projects/p1/MEMORY"] == "Rules"  # the first heading
    assert summaries["projects/p1/memory-arch"] == (
        "Architecture: the deploy pipeline runs on buildkite."  # no heading: the first line
    )
    assert None not in summaries.values()


def test_type_and_scope_id_filters(trees: tuple[Path, Path]) -> None:
    assert set(by_id(recall_json("deploy", "--type", "progress", "--everywhere"))) == {
        "sessions/s1/tasks/T1/progress"
    }
    assert set(by_id(recall_json("deploy", "--scope-id", "p1"))) == {
        "projects/p1/MEMORY",
        "projects/p1/memory-arch",
    }
    assert set(by_id(recall_json("deploy", "--type", "memory", "--scope-id", "p2"))) == {
        "projects/p2/MEMORY"
    }
    assert set(by_id(recall_json("deploy", "--type", "feedback", "--everywhere"))) == {
        "-home-me-app/memory/feedback_tests"
    }
    # a scope id that starts with '-' (Claude Code's folder names do) needs '='
    assert set(by_id(recall_json("deploy", "--scope-id=-home-me-web"))) == {
        "-home-me-web/memory/project_goal"
    }
    assert recall_json("deploy", "--type", "pinned") == []


def test_layered_markers_and_or_joined_terms(trees: tuple[Path, Path]) -> None:
    # OR: a file matching only one of the words is found
    hits = by_id(recall_json("ripgrep", "nonexistentword", "--markers", "layered"))
    assert set(hits) == {"global/MEMORY"}
    assert (
        hits["global/MEMORY"]["snippet"] == "# Global Prefer <<ripgrep>> over grep for searching."
    )
    plain = by_id(recall_json("ripgrep"))
    assert "«ripgrep»" in str(plain["global/MEMORY"]["snippet"])


def test_recall_never_writes_into_foreign_trees(trees: tuple[Path, Path]) -> None:
    layered, claude = trees
    before = sorted(p.relative_to(layered.parent) for p in layered.rglob("*"))
    assert recall_json("deploy", "--everywhere")
    assert not (claude / ".state.json").exists()
    assert not (layered / ".state.json").exists()
    assert sorted(p.relative_to(layered.parent) for p in layered.rglob("*")) == before


def test_turning_claude_off_removes_its_rows_at_the_next_reconcile(
    trees: tuple[Path, Path],
) -> None:
    assert any(h["layout"] == "claude" for h in recall_json("deploy", "--everywhere"))
    assert run_cli("init", "--no-claude").returncode == 0
    app = App()
    with open_index(app.paths) as db:
        assert any(r.layout == "claude" for r in db.rows())  # still cached until...
        report = reconcile(db, app.config)
        assert len([p for p in report.removed if ".claude" in str(p)]) == 4
        assert not any(r.layout == "claude" for r in db.rows())
        assert any(r.layout == "layered" for r in db.rows())
    assert not any(h.get("layout") == "claude" for h in recall_json("deploy", "--everywhere"))


def test_layered_rows_rank_by_bm25_and_keep_the_relative_floor(
    trees: tuple[Path, Path],
) -> None:
    app = App()
    roots = [r for r in app.config.roots if r.layout == "layered"]
    with open_index(app.paths) as db:
        reconcile(db, app.config, roots)
        hits = recall(db, app.config, "pnpm lockfile", roots, limit=10, bump=False)
    assert hits[0].id == "projects/p1/MEMORY"  # the only file with both words
    top = hits[0].score
    assert all(h.score >= 0.15 * top for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    prior = app.config.search.global_prior
    assert all(abs(h.score - h.relevance * prior) < 1e-9 for h in hits)  # no decay, no boost


def test_a_file_leaving_the_layout_shape_leaves_the_index(trees: tuple[Path, Path]) -> None:
    layered, _claude = trees
    assert "projects/p2/MEMORY" in by_id(recall_json("cargo", "--everywhere"))
    (layered / "projects" / "p2" / "MEMORY.md").rename(layered / "projects" / "MEMORY.md")
    assert recall_json("cargo", "--everywhere") == []


def test_inspect_only_looks_at_files_of_each_layout(trees: tuple[Path, Path]) -> None:
    layered, claude = trees
    broken = "---\n: [unclosed\n---\n"
    (claude / "-home-me-app" / "todos" / "broken.md").write_text(broken)
    (layered / "stray-broken.md").write_text(broken)
    (claude / "-home-me-app" / "memory" / "bad.md").write_text(broken)
    data = json.loads(run_cli("inspect", "--json").stdout)
    problems = {(p["check"], p["path"]) for p in data["problems"]}
    assert ("files.malformed", str(claude / "-home-me-app/memory/bad.md")) in problems
    checked = {path for _check, path in problems}
    assert str(claude / "-home-me-app/todos/broken.md") not in checked
    assert str(layered / "stray-broken.md") not in checked
    assert not any(check == "state.gitignore" for check, _path in problems)
    listed = {(m["root"], m["path"]) for m in data["memories"]}
    assert (str(claude), "-home-me-app/todos/deploy.md") not in listed
    assert (str(layered), "stray.md") not in listed
    assert (str(layered), "sessions/s1/tasks/T1/progress.md") in listed


def test_inspect_lists_what_recall_shows_of_each_memory(trees: tuple[Path, Path]) -> None:
    """inspect (and the UI's Memories view) listed every Claude Code and layered memory as
    '(no summary)' of kind '-': their summary is a description or a first line, not a
    summary: field, and their kind is the layout's type."""
    layered, claude = trees
    data = json.loads(run_cli("inspect", "--json").stdout)
    listed = {
        (m["path"], m["kind"], m["type"], m["summary"])
        for m in data["memories"]
        if m["root"] in (str(layered), str(claude))
    }
    assert listed == {
        ("-home-me-app/memory/MEMORY.md", None, "free",
         "- [User role](user_role.md): deploy engineer"),
        ("-home-me-app/memory/user_role.md", None, "user", "role"),
        ("-home-me-app/memory/feedback_tests.md", None, "feedback", "tests"),
        ("-home-me-web/memory/project_goal.md", None, "project", "Ship the deploy page."),
        ("global/MEMORY.md", None, "memory", "Global"),
        ("projects/p1/MEMORY.md", None, "memory", "Rules"),
        ("projects/p1/memory-arch.md", None, "memory",
         "Architecture: the deploy pipeline runs on buildkite."),
        ("projects/p2/MEMORY.md", None, "memory", "Rules"),
        ("sessions/s1/checkpoint.md", None, "checkpoint", "Current state"),
        ("sessions/s1/notes.md", None, "free", "[turn 3 · 2026-11-29T10:00:00Z]"),
        ("sessions/s1/tasks/T1/progress.md", None, "progress", "§1 deploy progress: pnpm install passes."),
        ("sessions/s1/tasks/T1/notes.md", None, "notes", "Task notes about the deploy."),
    }  # fmt: skip
    lines = [" ".join(line.split()) for line in run_cli("inspect").stdout.splitlines()]
    assert "-home-me-app/memory/user_role user global hits 0 role" in lines
    assert "sessions/s1/checkpoint checkpoint global hits 0 Current state" in lines


def test_recall_sees_only_this_projects_and_sessions_folders_unless_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two global roots holding every project: this project's folders, this session's, and
    the truly global files are searched; other projects' only with --everywhere or --scope-id."""
    from memoryd.layouts.visible import claude_slug
    from tests.helpers import git

    app_dir = tmp_path / "work" / "my.app"
    app_dir.mkdir(parents=True)
    git(app_dir, "init", "-q")
    (app_dir / ".git" / "mimocode-project-id").write_text("p1\n")  # as MiMo Code keeps it
    monkeypatch.setenv("MIMOCODE_HOME", str(tmp_path / "mimo"))
    own = claude_slug(app_dir)
    assert own == claude_slug(tmp_path) + "-work-my-app"
    build(tmp_path / "mimo" / "data" / "memory", {
        **LAYERED, "global/deploy.md": "Deploy windows are on Tuesdays.\n",
    })  # fmt: skip
    build(Path(os.environ["HOME"]) / ".claude" / "projects", {
        f"{own}/memory/deploy.md": "---\ntype: project\n---\nThis app deploys with kamal.\n",
        "-home-me-web/memory/deploy.md": "---\ntype: project\n---\nThe web deploys to vercel.\n",
    })  # fmt: skip
    for args in (["init"], ["init", "--layered", "--project-id", "p1"], ["init", "--claude"]):
        done = run_cli(*args, cwd=app_dir)
        assert done.returncode == 0, done.stderr

    def ids(*flags: str, env: dict[str, str] | None = None) -> set[str]:
        import subprocess
        import sys

        done = subprocess.run(
            [sys.executable, "-m", "memoryd", "recall", "deploy", "--json", "--limit", "30",
             *flags],
            cwd=app_dir, env={**os.environ, **(env or {})}, capture_output=True, text=True,
            timeout=60, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return {str(h["id"]) for h in json.loads(done.stdout)}

    mine = {"global/deploy", "projects/p1/MEMORY", "projects/p1/memory-arch", f"{own}/memory/deploy"}
    session = {"sessions/s1/checkpoint", "sessions/s1/notes", "sessions/s1/tasks/T1/progress",
               "sessions/s1/tasks/T1/notes"}  # fmt: skip
    others = {"projects/p2/MEMORY", "-home-me-web/memory/deploy"}
    assert ids() == mine
    assert ids(env={"CLAUDE_CODE_SESSION_ID": "s1"}) == mine | session
    assert ids(env={"OPENCODE_SESSION_ID": "s2"}) == mine
    assert ids("--everywhere") == mine | session | others
    assert ids("--scope-id", "p2") == {"projects/p2/MEMORY"}
    # the agent tools see the same: recall over MCP and the injected block
    from memoryd.agent.upkeep import search
    from memoryd.locate import active_roots

    app = App(cwd=app_dir)
    roots = active_roots(app.config, app.cwd)
    found = {h.id for h in search(app, roots, "deploy", limit=30, count_hits=False)}
    assert found == mine
    wide = search(app, roots, "deploy", limit=30, count_hits=False, everywhere=True)
    assert {h.id for h in wide} == mine | session | others
    # a word only other projects' folders hold: nothing here, and recall says where it is
    vercel = run_cli("recall", "vercel", cwd=app_dir)
    assert (vercel.returncode, vercel.stdout) == (0, "")
    searched = ", ".join(str(r.path) for r in app.config.roots)
    assert vercel.stderr == (
        f"no memory of this project matches 'vercel' (searched {searched}), but other "
        "projects' or sessions' Claude Code or MiMo Code memories do: add --everywhere to "
        "see them\n"
    )
    nowhere = run_cli("recall", "heroku", cwd=app_dir).stderr
    assert nowhere.startswith("no memory matches 'heroku' (searched ")


def test_claude_codes_folder_name_of_a_deep_path_is_cut_and_hashed_as_claude_code_does() -> None:
    """The names Claude Code 2.1 gave these folders (tests/e2e made them): a name over 200
    characters is cut and ends in a hash of the path, an emoji is two '-'. memoryd's own
    name for the deep one was 259 characters, a folder that never exists."""
    from memoryd.layouts.visible import claude_slug

    deep = Path(
        "/tmp/agents-pt/pytest-of-root/pytest-6/test_scratch0/app/" + "very-long-folder-name-" * 4
        + "/" + "another-long-folder-name-" * 4 + "/项目 ünïcode 📦"
    )  # fmt: skip
    assert claude_slug(deep) == (
        "-tmp-agents-pt-pytest-of-root-pytest-6-test-scratch0-app-very-long-folder-name-very-long-"
        "folder-name-very-long-folder-name-very-long-folder-name--another-long-folder-name-"
        "another-long-folder-name-anot-zdwqu1"
    )
    assert claude_slug(Path("/home/me/📦 app")) == "-home-me----app"
    assert claude_slug(Path("/home/me/my.app")) == "-home-me-my-app"


def test_a_linked_worktree_sees_claude_codes_folder_of_the_main_checkout(tmp_path: Path) -> None:
    """Claude Code keeps the memories of a session in ../wt/feature in the main checkout's
    folder (tests/e2e shows it): memoryd saw only the worktree's own folder."""
    from memoryd.layouts.visible import claude_slug, visible_for
    from tests.helpers import git

    main = tmp_path / "app"
    main.mkdir()
    git(main, "init", "-q")
    (main / "README.md").write_text("app\n")
    git(main, "add", "README.md")
    git(main, "commit", "-qm", "start")
    linked = tmp_path / "wt" / "feature"
    git(main, "worktree", "add", "-q", "-b", "feature", str(linked))
    assert visible_for(linked, {}).claude_slugs == (
        claude_slug(linked), claude_slug(main),
    )  # fmt: skip
