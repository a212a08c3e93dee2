"""Setting up roots: what ``memoryd init`` does, as a library."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memoryd.app import App
from memoryd.compile.writer import compile_root
from memoryd.config.edit import register_root
from memoryd.config.sections import PROJECT_SYNC, RootConfig, refuse_non_utf8_root
from memoryd.errors import PathError
from memoryd.fsutil import atomic_write
from memoryd.rootfs import PROJECT_DIRNAME
from memoryd.roots import canonical_toplevel, init_root

CONFIG_TEMPLATE = """\
# memoryd configuration. Every setting is optional; the values shown are the defaults.
# Reference: docs/config.md in the memoryd repository.
#
# device: <host name>          # names this machine in commits and conflict copies
# roots:                       # absent: just the global root below
#   - path: {global_root}
#     layout: plugin           # plugin | layered | claude
#     scope: global            # global | project
#     sync: {{commit: true, push: true, pull: true}}
# search:
#   limit: 10
#   score_floor: 0.15          # keep results scoring at least 15% of the best one
#   half_life_days: 14         # 0 turns time decay off
#   project_prior: 1.0
#   global_prior: 0.5
# injection:
#   max_chars: 1200
#   max_entries: 4
# extract:                     # auto-extraction from agents' transcripts (docs/agents.md)
#   command: llm --no-log -m gpt-4o-mini   # absent: nothing is extracted
# daemon:
#   quiet_ms: 150
#   max_wait_ms: 1000
#   reconcile_interval_s: 600
"""


@dataclass(frozen=True)
class SetupResult:
    root: Path
    created: tuple[str, ...]
    registered: bool


def global_root(app: App) -> RootConfig:
    for root in app.config.roots:
        if root.scope == "global" and root.layout == "plugin":
            return root
    return RootConfig(path=app.paths.default_global_root)


def init_global(app: App) -> SetupResult:
    root = global_root(app)
    created = init_root(root.path).created
    compile_root(root, app.config)  # a fresh ROOT.md gets its compiled blocks
    from memoryd.gitcli import init_repo

    if init_repo(root.path):  # the global root is its own repository (sync needs one)
        created = (*created, ".git/")
    config_file = app.paths.config_file
    if not config_file.exists():
        text = CONFIG_TEMPLATE.format(global_root=root.path)
        atomic_write(config_file, text.encode("utf-8"))
        created = (*created, str(config_file))
    return SetupResult(root.path, created, registered=False)


def init_project(app: App, directory: Path) -> SetupResult:
    """Create and register ``<main work tree>/.memory`` for the project of ``directory``.

    Inside a linked ``git worktree`` that is the main work tree's root: every
    checkout of the project shares one project memory.
    """
    if not directory.is_dir():
        raise PathError(
            f"{directory} is not a folder", hint="pass a folder inside a git repository"
        )
    top = canonical_toplevel(directory)
    if top is None:
        raise PathError(
            f"{directory} is not inside a git repository",
            hint=f"run 'git init' in {directory} first, or pass a folder inside a repository",
        )
    path = top / PROJECT_DIRNAME
    refuse_non_utf8_root(path)  # before anything is created
    created = init_root(path).created
    before = app.config
    root = RootConfig(path=path, layout="plugin", scope="project", sync=PROJECT_SYNC)
    compile_root(root, app.config)
    after = register_root(app.paths, before, root)
    if after is not before:
        app.reload_config()
    return SetupResult(path, created, registered=after is not before)
