"""The canonical project root: one per project, shared by its worktrees, made on first write."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from memoryd.app import App
from memoryd.init.plugin import init_global
from memoryd.roots import canonical_toplevel, project_root_for
from tests.helpers import git, run_cli

RULE = """\
---
id: rules/no-force-push
kind: rule
summary: 绝不 force-push 到 main 分支
created: 1700000000000
updated: 1700000000000
---
Rewrite history only on your own branches.
"""
FACT = """\
---
id: facts/staging
kind: fact
summary: Staging deploys run from the bastion host
created: 1700000000000
updated: 1700000000000
load_when:
  - staging
---
ssh bastion, then ./deploy staging
"""


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("project\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "init")
    return path


def common_dir_top(worktree: Path) -> Path:
    """The main work tree, the way git itself reports it."""
    common = git(worktree, "rev-parse", "--path-format=absolute", "--git-common-dir").strip()
    return Path(common).parent


def configured_roots() -> list[str]:
    config = App().paths.config_file
    return [r["path"] for r in yaml.safe_load(config.read_text())["roots"]]


def test_a_worktree_sees_the_main_trees_memories_and_iron_rules(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "proj")
    init_global(App(cwd=repo))
    assert run_cli("init", "--project", cwd=repo).returncode == 0
    (repo / ".memory/rules/no-force-push.md").write_text(RULE)
    (repo / ".memory/facts/staging.md").write_text(FACT)
    worktree = tmp_path / "wt" / "feature"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(worktree))
    (worktree / "src").mkdir()

    assert common_dir_top(worktree) == repo.resolve()
    assert project_root_for(worktree / "src") == repo.resolve() / ".memory"
    recall = run_cli("recall", "--json", "staging bastion", cwd=worktree / "src")
    assert recall.returncode == 0, recall.stderr
    hits = json.loads(recall.stdout)
    assert [(h["id"], h["scope"]) for h in hits] == [("facts/staging", "project")]
    context = run_cli("context", "--json", "deploy", cwd=worktree)
    assert context.returncode == 0, context.stderr
    rules = json.loads(context.stdout)["rules"]
    assert len(rules) == 1 and "绝不 force-push 到 main 分支" in rules[0]
    assert rules[0].endswith("[project]")
    assert not (worktree / ".memory").exists()


def test_reads_skip_a_missing_project_root_and_the_first_write_creates_it(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "proj")
    init_global(App(cwd=repo))
    global_root = App().paths.default_global_root
    recall = run_cli("recall", "anything", cwd=repo)
    assert recall.returncode == 0, recall.stderr
    assert "Traceback" not in recall.stderr
    assert not (repo / ".memory").exists()

    done = run_cli(
        "remember", "--json", "--kind", "fact", "--summary", "本项目的 CI 跑在 arm64 上", cwd=repo
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["scope"] == "project" and out["root"] == str(repo.resolve() / ".memory")
    written = Path(out["path"])
    assert written.parent == repo.resolve() / ".memory" / "facts" and written.is_file()
    for made in ("ROOT.md", "rules", "preferences", "decisions", "pitfalls", ".gitignore"):
        assert (repo / ".memory" / made).exists(), made  # as `memoryd init --project` makes it
    assert ".state.json" in (repo / ".memory/.gitignore").read_text().split()
    assert "| [facts/](facts/index.md) | 1 |" in (repo / ".memory/ROOT.md").read_text()
    assert (
        "`facts/本项目的-ci-跑在-arm64-上`: 本项目的 CI 跑在 arm64 上"
        in (repo / ".memory/facts/index.md").read_text()
    )
    assert str(repo.resolve() / ".memory") in configured_roots()
    assert not list((global_root / "facts").iterdir())


def test_the_first_write_from_a_worktree_creates_the_main_trees_root(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "proj")
    init_global(App(cwd=repo))
    worktree = tmp_path / "feature"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(worktree))
    done = run_cli(
        "remember",
        "--json",
        "--kind",
        "pitfall",
        "--summary",
        "The test DB needs UTC",
        cwd=worktree,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["root"] == str(repo.resolve() / ".memory")
    assert not (worktree / ".memory").exists()
    again = run_cli("recall", "--json", "test DB UTC", cwd=repo)
    assert [h["id"] for h in json.loads(again.stdout)] == ["pitfalls/the-test-db-needs-utc"]
    init = run_cli("init", "--project", cwd=worktree)  # already there: nothing new
    assert init.returncode == 0, init.stderr
    assert str(repo.resolve() / ".memory") in init.stdout


def test_global_scope_and_folders_outside_git_never_create_a_project_root(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "proj")
    plain = tmp_path / "plain"
    plain.mkdir()
    init_global(App(cwd=repo))
    done = run_cli(
        "remember", "--json", "--kind", "preference", "--summary", "Answer tersely",
        "--scope", "global", cwd=repo,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["scope"] == "global"
    assert not (repo / ".memory").exists()
    outside = run_cli("remember", "--json", "--kind", "fact", "--summary", "Plain", cwd=plain)
    assert outside.returncode == 0, outside.stderr
    assert json.loads(outside.stdout)["scope"] == "global"
    refused = run_cli(
        "remember", "--kind", "fact", "--summary", "Plain 2", "--scope", "project", cwd=plain
    )
    assert refused.returncode == 1
    assert refused.stderr == (
        f"memoryd: error: {plain} is not inside a git repository, so it has no project memory\n"
        "  hint: run it from inside the project's repository, or use --scope global\n"
    )


def test_the_global_root_is_a_git_repository_but_not_a_project(tmp_path: Path) -> None:
    init_global(App(cwd=tmp_path))
    global_root = App().paths.default_global_root
    assert (global_root / ".git").is_dir()
    done = run_cli(
        "remember",
        "--json",
        "--kind",
        "fact",
        "--summary",
        "Written from the root",
        cwd=global_root,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["scope"] == "global"
    assert not (global_root / ".memory").exists()


def test_a_worktree_of_a_bare_repository_is_its_own_project(tmp_path: Path) -> None:
    seed = make_repo(tmp_path / "seed")
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(seed), str(bare))
    worktree = tmp_path / "checkout"
    git(bare, "worktree", "add", "-q", str(worktree), "main")
    assert canonical_toplevel(worktree) == worktree.resolve()
    assert project_root_for(worktree) == worktree.resolve() / ".memory"


def test_a_submodule_is_its_own_project(tmp_path: Path) -> None:
    lib = make_repo(tmp_path / "lib")
    app = make_repo(tmp_path / "app")
    git(app, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "vendor/lib")
    sub = app / "vendor" / "lib"
    assert (sub / ".git").is_file()  # a gitdir: file without commondir
    assert canonical_toplevel(sub) == sub.resolve()
