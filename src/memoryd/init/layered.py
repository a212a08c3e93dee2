"""Setting up the layered tree: register it, migrate ``memory.md``, create MEMORY.md.

MiMo Code creates a project's ``MEMORY.md`` from a four-section template and renames
a legacy lowercase ``memory.md`` before it writes a checkpoint; ``memoryd init
--layered`` does the same so a tree memoryd serves looks like one MiMo made. Every
step is idempotent: a second run changes nothing.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

from memoryd.app import App
from memoryd.config.edit import register_root
from memoryd.config.sections import RootConfig
from memoryd.errors import PathError
from memoryd.fsutil import atomic_write, fsync_dir, private_dirs
from memoryd.gitcli import init_repo
from memoryd.init.plugin import SetupResult
from memoryd.layouts import configured_root
from memoryd.layouts.visible import project_id_for, valid_project_id
from memoryd.rootfs import STATE_FILE
from memoryd.roots import ensure_gitignored

log = logging.getLogger(__name__)

MEMORY_FILE = "MEMORY.md"
LEGACY_MEMORY_FILE = "memory.md"

MEMORY_TEMPLATE = """\
# Project memory

## Project context
_What this project is and what it is for._

## Rules
_Constraints the user set that every session must follow._

## Architecture decisions
_Major design choices, each with its reason._

## Discovered durable knowledge
_Facts learned while working that stay true from one session to the next._
"""


@dataclass(frozen=True)
class LayeredSetup:
    created: tuple[str, ...]  # tree-relative paths written or renamed into place
    project_id: str | None  # None: this repository has no MiMo project id yet


def migrate_legacy_memory(project_dir: Path) -> bool:
    """Rename ``memory.md`` to ``MEMORY.md`` when only the old name exists."""
    try:
        names = set(os.listdir(project_dir))
    except FileNotFoundError:
        return False
    if LEGACY_MEMORY_FILE not in names:
        return False
    if MEMORY_FILE in names:
        log.warning(
            "%s has both %s and %s; left both", project_dir, MEMORY_FILE, LEGACY_MEMORY_FILE
        )
        return False
    os.rename(project_dir / LEGACY_MEMORY_FILE, project_dir / MEMORY_FILE)
    fsync_dir(project_dir)
    return True


def ensure_project_memory(root: Path, project_id: str) -> list[str]:
    """Migrate the legacy name, then create MEMORY.md from the template if missing."""
    if not valid_project_id(project_id):
        raise PathError(
            f"{project_id!r} is not a usable project id",
            hint="pass letters, digits, '.', '_' or '-' (MiMo Code uses a UUID)",
        )
    folder = root / "projects" / project_id
    rel = f"projects/{project_id}/{MEMORY_FILE}"
    if migrate_legacy_memory(folder):
        return [f"{rel} (renamed from {LEGACY_MEMORY_FILE})"]
    names = set(os.listdir(folder)) if folder.is_dir() else set()
    if MEMORY_FILE in names:
        return []
    atomic_write(folder / MEMORY_FILE, MEMORY_TEMPLATE.encode("utf-8"))
    return [rel]


def init_layered_tree(root: Path, project_id: str | None) -> LayeredSetup:
    """Create the tree's folder, keep sessions/ out of git, set up the project memory."""
    if root.exists() and not root.is_dir():
        raise PathError(f"{root} exists and is not a folder", hint="move it aside and run again")
    created: list[str] = []
    if not root.exists():
        private_dirs(root)
        created.append(".")
    for pattern in ("/sessions/", STATE_FILE):
        if ensure_gitignored(root, pattern) and ".gitignore" not in created:
            created.append(".gitignore")
    projects = root / "projects"
    for folder in sorted(projects.iterdir()) if projects.is_dir() else []:
        if folder.is_dir() and migrate_legacy_memory(folder):
            created.append(f"projects/{folder.name}/{MEMORY_FILE} (renamed from memory.md)")
    if project_id is not None:
        created += ensure_project_memory(root, project_id)
    return LayeredSetup(tuple(created), project_id)


def setup_layered(
    app: App, directory: Path, project_id: str | None
) -> tuple[SetupResult, str | None]:
    """What ``memoryd init --layered`` does; returns the result and the project id used."""
    root = configured_root(app.config, app.env)
    pid = project_id or project_id_for(directory)
    tree = init_layered_tree(root, pid)
    before = app.config
    after = register_root(
        app.paths, before, RootConfig(path=root, layout="layered", scope="global")
    )
    if after is not before:
        app.reload_config()
    created = list(tree.created)
    policy = next((r.sync for r in app.config.roots if r.path == root), None)
    if policy is not None and (policy.commit or policy.pull) and init_repo(root):
        created.append(".git/")  # global/ and projects/ sync; sessions/ is ignored
    return SetupResult(root, tuple(created), registered=after is not before), pid
