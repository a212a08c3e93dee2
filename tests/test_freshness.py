from __future__ import annotations

from pathlib import Path

import pytest

from memoryd.app import App
from memoryd.config.sections import RootConfig
from memoryd.errors import PathError
from memoryd.freshness import ensure_fresh, search_roots
from memoryd.runlock import DaemonLock
from tests.helpers import git, run_cli
from tests.index.conftest import write_memory


@pytest.fixture
def app(isolated_home: Path, tmp_path: Path) -> App:
    assert run_cli("init").returncode == 0
    return App(cwd=tmp_path)


def test_ensure_fresh_reconciles_without_a_daemon(app: App) -> None:
    write_memory(app.paths.default_global_root, "facts/a.md", "alpha")
    with ensure_fresh(app) as db:
        assert [r.id for r in db.rows() if r.id != "ROOT"] == ["facts/a"]


def test_ensure_fresh_trusts_a_running_daemon_for_configured_roots(
    app: App, tmp_path: Path
) -> None:
    write_memory(app.paths.default_global_root, "facts/a.md", "alpha")
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    write_memory(repo / ".memory", "facts/p.md", "project")
    roots = search_roots(app.config, repo)
    with ensure_fresh(app, roots=roots[:1]):  # the index as a daemon left it (an empty
        pass  # index is reconciled whoever runs: see test_lean_recall's upgrade test)
    write_memory(app.paths.default_global_root, "facts/b.md", "beta")
    with DaemonLock(app.paths.lock_file), ensure_fresh(app, roots=roots) as db:
        # the daemon keeps the global root fresh (facts/b is its to index); the unregistered
        # project root it never watches, so that one is reconciled here
        ids = [r.id for r in db.rows()]
        assert "facts/p" in ids and "facts/a" in ids and "facts/b" not in ids


def test_search_roots_are_global_plus_this_project_only(app: App, tmp_path: Path) -> None:
    repos = []
    for name in ("mine", "other"):
        repo = tmp_path / name
        (repo / "sub").mkdir(parents=True)
        git(repo, "init", "-q")
        repos.append(repo)
    assert run_cli("init", "--project", str(repos[1])).returncode == 0
    app.reload_config()
    global_root = RootConfig(path=app.paths.default_global_root)
    assert [r.path for r in search_roots(app.config, repos[0] / "sub")] == [global_root.path]
    (repos[0] / ".memory").mkdir()
    roots = search_roots(app.config, repos[0] / "sub")
    assert [(r.path, r.scope) for r in roots] == [
        (global_root.path, "global"), (repos[0].resolve() / ".memory", "project"),
    ]  # fmt: skip
    other = search_roots(app.config, tmp_path, repos[1])
    assert [(r.path, r.scope) for r in other][1] == (repos[1].resolve() / ".memory", "project")
    with pytest.raises(PathError, match="is not inside a git repository"):
        search_roots(app.config, tmp_path, tmp_path)
