"""The opt-in switch for Claude Code's memory folders (``layout: claude``).

Off by default. Turning it on registers ``~/.claude/projects`` as a root that is
indexed and watched but never synced; turning it off removes the root from
config.yaml, and the next reconcile drops its rows from the search cache.
memoryd never writes into these folders (Claude Code's ``MEMORY.md`` there is its
own index: indexed, never compiled or rewritten).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from memoryd.config import Config, RootConfig, SyncPolicy, register_root, unregister_root
from memoryd.layouts import claude_projects_dir
from memoryd.paths import Paths

NO_SYNC = SyncPolicy(commit=False, push=False, pull=False)

PRIVACY_NOTICE = """\
Claude Code memory: what turning it on means for privacy
  memoryd will index {folder}/*/memory/*.md: the memories Claude Code keeps for each
  project. Its 'user' and 'feedback' memories may hold your personal preferences and
  guidance. Every agent that can recall from memoryd (subagents included, and agents
  that may have read injected text) will be able to find them.
  These folders are not synced: nothing leaves this machine unless you turn sync on
  for the root yourself.
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
