"""Install and remove memoryd's git pre-commit hook.

The hook runs ``memoryd scan --staged`` with the absolute interpreter that
installed it, so it works without memoryd on PATH. A foreign hook already in
place is kept as ``pre-commit.legacy`` and still runs first (unless it is memoryd's
hook itself, which another installer moved there: it would run itself for ever);
uninstall removes only memoryd's own hook and puts the legacy one back. When that
interpreter is gone (memoryd removed or moved) the hook says so in one line and how
to go on, instead of the shell's ``exec: ...: not found`` on every commit.
"""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from memoryd import gitcli
from memoryd.errors import PathError, Refused
from memoryd.fsutil import atomic_write

MARKER = "# memoryd pre-commit hook"
HOOK_NAME = "pre-commit"
LEGACY_NAME = "pre-commit.legacy"

_TEMPLATE = """\
#!/bin/sh
{marker}: refuses a commit whose staged files contain a secret.
# Installed by `memoryd hook install`; `memoryd hook uninstall` removes it and restores
# pre-commit.legacy, the hook that was here before (which still runs first).
# Not when this script is itself pre-commit.legacy or that is memoryd's hook too (another
# installer, e.g. `pre-commit install`, moved ours aside and chains to it): it would run itself.
legacy="$(dirname "$0")/{legacy}"
if [ "$(basename "$0")" != {legacy} ] && [ -x "$legacy" ] && ! grep -qF '{marker}' "$legacy"; then
    "$legacy" "$@" || exit $?
fi
if [ ! -x {python} ]; then
    gone="memoryd pre-commit hook: "{python}" is gone (memoryd was removed or moved)"
    next="run 'memoryd hook install' here again with the memoryd you use now, or delete $0"
    echo "$gone; $next" >&2
    exit 1
fi
exec {python} -m memoryd scan --staged
"""


@dataclass(frozen=True)
class HookResult:
    path: Path
    action: str  # installed | updated | unchanged | removed | absent
    legacy: Path | None = None  # the foreign hook kept aside (install) or restored (uninstall)


def hook_script(python: str) -> str:
    return _TEMPLATE.format(marker=MARKER, legacy=LEGACY_NAME, python=shlex.quote(python))


def is_ours(path: Path) -> bool:
    try:
        return MARKER in path.read_text(encoding="utf-8", errors="replace")
    except (FileNotFoundError, IsADirectoryError):
        return False


def install(repo: Path, python: str | None = None) -> HookResult:
    """Put memoryd's pre-commit hook in ``repo``; keep a foreign one as pre-commit.legacy."""
    hooks = hooks_dir(repo)
    hook, legacy = hooks / HOOK_NAME, hooks / LEGACY_NAME
    script = hook_script(python or sys.executable).encode("utf-8")
    kept: Path | None = None
    if hook.exists() and not is_ours(hook):
        if legacy.exists():
            raise Refused(
                f"{hook} is not memoryd's hook and {legacy} already exists",
                hint=f"merge {hook.name} into {legacy.name} by hand, remove {hook.name}, run again",
            )
        os.replace(hook, legacy)
        kept = legacy
    if hook.exists():
        action = "unchanged" if hook.read_bytes() == script else "updated"
    else:
        action = "installed"
    if action != "unchanged":
        hooks.mkdir(parents=True, exist_ok=True)
        atomic_write(hook, script, mode=0o755)
    return HookResult(hook, action, kept or (legacy if legacy.exists() else None))


def uninstall(repo: Path) -> HookResult:
    """Remove memoryd's hook (only ours) and restore pre-commit.legacy if there is one."""
    hooks = hooks_dir(repo)
    hook, legacy = hooks / HOOK_NAME, hooks / LEGACY_NAME
    if not hook.exists():
        return HookResult(hook, "absent")
    if not is_ours(hook):
        raise Refused(
            f"{hook} is not memoryd's hook; left it alone",
            hint="remove it by hand if you want it gone",
        )
    hook.unlink()
    restored = None
    if legacy.exists():
        os.replace(legacy, hook)
        restored = hook
    return HookResult(hook, "removed", restored)


def hooks_dir(repo: Path) -> Path:
    """``.git/hooks`` of ``repo`` (worktree-aware); refuses when core.hooksPath is set."""
    custom = _git(repo, "config", "--get", "core.hooksPath", check=False).strip()
    if custom:
        raise Refused(
            f"core.hooksPath is set to {custom} in {repo}, so git ignores .git/hooks",
            hint="add 'memoryd scan --staged' to a pre-commit hook in that folder, or use the "
            "pre-commit framework with memoryd's .pre-commit-hooks.yaml",
        )
    path = Path(_git(repo, "rev-parse", "--git-path", "hooks").strip())
    return path if path.is_absolute() else (repo / path).resolve()


def _git(repo: Path, *args: str, check: bool = True) -> str:
    if not repo.is_dir():
        raise PathError(f"{repo} is not a folder", hint="pass --repo with a git repository")
    # the environment as git gave it: installed from a hook or a worktree, git finds its own
    done = gitcli.run(args, cwd=repo, env=gitcli.hook_env(), timeout=30.0)
    if check and done.code != 0:
        raise PathError(
            f"{repo} is not a git repository",
            hint="run 'git init' there first, or pass --repo with a repository",
        )
    return done.out.decode("utf-8", "surrogateescape")
