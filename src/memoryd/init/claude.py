"""The opt-in switch for Claude Code's memory folders (``layout: claude``).

Off by default. Turning it on registers ``~/.claude/projects`` as a root that is
indexed and watched but never synced; turning it off removes the root from
config.yaml, and the next reconcile drops its rows from the search cache.
memoryd never writes into these folders (Claude Code's ``MEMORY.md`` there is its
own index: indexed, never compiled or rewritten). Sync is opt-in per project
folder: asked to, memoryd makes ``~/.claude/projects`` a repository of its own
whose ``.gitignore`` lets in only the chosen folders' ``memory/*.md``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from memoryd.config.edit import register_root, unregister_root
from memoryd.config.sections import Config, RootConfig, SyncPolicy
from memoryd.errors import PathError
from memoryd.fsutil import write_if_changed
from memoryd.gitcli import init_repo
from memoryd.layouts import claude_projects_dir, gitignore_lines
from memoryd.paths import Paths

NO_SYNC = SyncPolicy(commit=False, push=False, pull=False)

PRIVACY_NOTICE = """\
Claude Code memory: what turning it on means for privacy
  memoryd will index {folder}/*/memory/*.md: the memories Claude Code keeps for each
  project. Its 'user' and 'feedback' memories may hold your personal preferences and
  guidance. Every agent that can recall from memoryd (subagents included, and agents
  that may have read injected text) will be able to find them.
  These folders are not synced: nothing leaves this machine unless you ask for it
  per project folder with 'memoryd init --claude --sync-folder DIR'.
  Turn it off again with 'memoryd init --no-claude'; the next reconcile removes the
  rows from the search cache (the files stay untouched)."""


@dataclass(frozen=True)
class ClaudeSwitch:
    folder: Path
    enabled: bool
    changed: bool  # config.yaml was rewritten


def claude_root(env: Mapping[str, str]) -> RootConfig:
    return RootConfig(path=claude_projects_dir(env), layout="claude", scope="global", sync=NO_SYNC)


def privacy_notice(env: Mapping[str, str]) -> str:
    return PRIVACY_NOTICE.format(folder=claude_projects_dir(env))


def enable_claude(paths: Paths, config: Config, env: Mapping[str, str]) -> ClaudeSwitch:
    root = claude_root(env)
    after = register_root(paths, config, root)
    return ClaudeSwitch(root.path, enabled=True, changed=after is not config)


def disable_claude(paths: Paths, config: Config, env: Mapping[str, str]) -> ClaudeSwitch:
    """Remove every ``layout: claude`` root (wherever it was registered)."""
    folder = claude_projects_dir(env)
    current = config
    for root in config.roots:
        if root.layout == "claude":
            current = unregister_root(paths, current, root.path)
    return ClaudeSwitch(folder, enabled=False, changed=current is not config)


# -- sync, opt-in per project folder ---------------------------------------------------

GITIGNORE_HEADER = "# memoryd: Claude Code memory sync. Only the listed folders' memory/*.md go in."
_ALLOW_RE = re.compile(r"^!/(?P<slug>[^/*]+)/memory/\*\.md$")

SYNC_NOTICE = """\
Claude Code memory sync for {folders}
  The memory/*.md files of these project folders will be committed in {root} and pushed
  to its git remote (add one with: git -C {root} remote add origin URL). Transcripts,
  todos and every other project folder stay out of git."""


def sync_slugs(text: str) -> list[str]:
    """The project folders a memoryd-written ``.gitignore`` lets through."""
    return [m.group("slug") for line in text.splitlines() if (m := _ALLOW_RE.match(line))]


def render_gitignore(slugs: list[str]) -> bytes:
    lines = [GITIGNORE_HEADER, *gitignore_lines("claude", tuple(sorted(set(slugs))))]
    return ("\n".join(lines) + "\n").encode("utf-8")


def slug_of(projects: Path, folder: Path) -> str:
    """The project folder's name, refusing anything that is not directly in ``projects``."""
    if folder.resolve().parent != projects.resolve() or not folder.is_dir():
        raise PathError(
            f"{folder} is not a Claude Code project folder",
            hint=f"pass a folder directly inside {projects} (ls {projects})",
        )
    return folder.name


def allow_sync(projects: Path, folders: list[Path]) -> list[str]:
    """Let these folders' memories into git: ``.gitignore`` and a repository; all slugs."""
    file = projects / ".gitignore"
    old = file.read_text(encoding="utf-8") if file.exists() else ""
    if old and not old.startswith(GITIGNORE_HEADER):
        raise PathError(
            f"{file} exists and memoryd did not write it",
            hint="move it aside, or make the folder a repository yourself and set sync in "
            "config.yaml",
        )
    slugs = sorted(set(sync_slugs(old)) | {slug_of(projects, f) for f in folders})
    write_if_changed(file, render_gitignore(slugs))
    init_repo(projects)
    return slugs


def enable_claude_sync(
    paths: Paths, config: Config, env: Mapping[str, str], folders: list[Path]
) -> tuple[ClaudeSwitch, list[str]]:
    """Turn indexing on with sync for these project folders (added to earlier ones)."""
    projects = claude_projects_dir(env)
    slugs = allow_sync(projects, folders)
    current = config
    for root in config.roots:
        if root.layout == "claude" and not root.sync.commit:
            current = unregister_root(paths, current, root.path)
    root = RootConfig(path=projects, layout="claude", scope="global", sync=SyncPolicy())
    after = register_root(paths, current, root)
    return ClaudeSwitch(projects, enabled=True, changed=after is not config), slugs
