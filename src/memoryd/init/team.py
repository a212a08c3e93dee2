"""Joining and leaving a team's memory: what ``memoryd init --team`` and ``team leave`` do.

A team root is a plain git repository every member clones (``<config folder>/teams/NAME``),
registered with scope ``team``: recall ranks it between the project and the global root and
sync carries it like the global root. A project's committed ``.memory/`` can be a team root
too (``memoryd init --project --team``): it keeps scope ``project`` and travels with the
project's own repository. Either way what an agent writes there is a proposal
(:mod:`memoryd.team`) until a person accepts it. Leaving removes the root from config.yaml
and keeps every file.
"""

from __future__ import annotations

from pathlib import Path

from memoryd import gitcli
from memoryd.app import App
from memoryd.compile.writer import compile_root
from memoryd.config.edit import register_root, unregister_root
from memoryd.config.sections import PROJECT_SYNC, TEAM_NAME, TEAMS_DIR, RootConfig
from memoryd.errors import MemorydError, UsageError
from memoryd.fsutil import private_dirs
from memoryd.init.plugin import SetupResult, init_project
from memoryd.roots import init_root

CLONE_TIMEOUT_S = 300.0


def check_name(name: str) -> str:
    if not name or not TEAM_NAME.fullmatch(name):
        raise UsageError(
            f"team name {name!r} is not a name of letters, digits, '.', '_' or '-'",
            hint="memoryd init --team acme --remote git@example.com:acme/memory.git",
        )
    return name


def team_folder(app: App, name: str) -> Path:
    return app.paths.config_dir / TEAMS_DIR / check_name(name)


def init_team(app: App, name: str, remote: str | None) -> SetupResult:
    """Clone the team's memory repository from ``remote`` (an empty one is filled with a
    fresh root, pushed by the next sync) and register it as the team root ``name``."""
    path = team_folder(app, name)
    created: tuple[str, ...] = ()
    if not (path / ".git").exists():
        if not remote:
            raise UsageError(
                f"team {name!r} has no clone here yet, so memoryd needs its remote",
                hint=f"memoryd init --team {name} --remote URL (the team's memory repository)",
            )
        _clone(remote, path)
        created = (".git/",)
    created += init_root(path).created
    root = RootConfig(path=path, layout="plugin", scope="team", team=name)
    compile_root(root, app.config)
    return _registered(app, root, created)


def init_project_team(app: App, directory: Path, name: str | None) -> SetupResult:
    """Make the project's committed ``.memory/`` a team root (named after the project's
    folder unless ``name`` is given): set up as ``memoryd init --project`` does, then
    registered again with its team."""
    result = init_project(app, directory)
    team = check_name(name or result.root.parent.name)
    root = RootConfig(
        path=result.root, layout="plugin", scope="project", sync=PROJECT_SYNC, team=team
    )
    return _registered(app, root, result.created)


def _registered(app: App, root: RootConfig, created: tuple[str, ...]) -> SetupResult:
    before = app.config
    old = next((r for r in before.roots if r.path == root.path), None)
    if old == root:
        return SetupResult(root.path, created, registered=False)
    config = before if old is None else unregister_root(app.paths, before, root.path)
    register_root(app.paths, config, root)
    app.reload_config()
    return SetupResult(root.path, created, registered=True)


def _clone(remote: str, path: Path) -> None:
    if path.exists() and any(path.iterdir()):
        raise MemorydError(
            f"{path} exists and is not a git repository, so the team's memory cannot be "
            "cloned there",
            hint=f"move {path} aside and run this again",
        )
    private_dirs(path)  # the clone is a memory root: other users of the machine read none
    env = gitcli.repo_env()
    done = gitcli.run(
        ["clone", "--quiet", remote, str(path)], cwd=None, env=env, timeout=CLONE_TIMEOUT_S
    )
    if done.code != 0:
        reason = (done.err.strip().splitlines() or ["git clone failed"])[-1]
        raise MemorydError(
            f"cannot clone the team's memory from {remote}: {reason}",
            hint="check the URL and that 'git clone URL' works from this shell (access is "
            "your git host's)",
        )


def leave_team(app: App, name: str) -> RootConfig:
    """Stop syncing the team root ``name``: it leaves config.yaml, its files stay."""
    found = [r for r in app.config.roots if r.team == name]
    if not found:
        known = ", ".join(sorted({r.team for r in app.config.roots if r.team})) or "none"
        raise UsageError(
            f"no team root named {name!r} is configured (teams here: {known})",
            hint="memoryd team log lists the team roots",
        )
    unregister_root(app.paths, app.config, found[0].path)
    app.reload_config()
    return found[0]
