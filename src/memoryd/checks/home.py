"""The roots themselves: configured roots exist; ``.state.json`` stays out of git."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

from memoryd import gitcli
from memoryd.checks import Context, RootView, check, root_check
from memoryd.findings import Finding
from memoryd.rootfs import STATE_FILE


@check("roots.missing")
def missing_roots(ctx: Context) -> Iterator[Finding]:
    for root in ctx.roots:
        if not root.exists:
            yield Finding(
                root.path,
                f"this configured {root.config.scope} root does not exist",
                "create it with 'memoryd init' (or 'memoryd init --project DIR'), "
                f"or remove it from {ctx.app.paths.config_file}",
            )


@check("home.private")
def readable_by_others(ctx: Context) -> Iterator[Finding]:
    from memoryd.privacy import exposed

    for found in exposed(ctx.app.paths, [r.path for r in ctx.roots if r.exists]):
        yield Finding(found.path, found.message, found.fix)


@root_check("state.gitignore")  # only plugin roots hold a .state.json
def state_out_of_git(ctx: Context, root: RootView) -> Iterator[Finding]:
    state = root.path / STATE_FILE
    tracked = _git(root.path, "ls-files", "--error-unmatch", "--", STATE_FILE)
    if tracked == 0:
        yield Finding(
            state,
            "is tracked by git: every recall changes a tracked file and devices conflict on it",
            f"git -C {root.path} rm --cached {STATE_FILE}, then commit",
        )
    ignored = _git(root.path, "check-ignore", "-q", "--no-index", "--", STATE_FILE)
    if ignored is None or ignored == 128:  # git missing, or not a repository
        ignored = 0 if _listed(root.path / ".gitignore") else 1
    if ignored != 0:
        yield Finding(
            root.path / ".gitignore",
            f"does not ignore {STATE_FILE} (the per-device hit counts)",
            f"add the line '{STATE_FILE}' to {root.path / '.gitignore'} (memoryd init does it)",
        )


def _git(folder: Path, *args: str) -> int | None:
    """git's exit code about the root's own repository (None: no git, or no answer)."""
    try:
        done = gitcli.run(["-C", str(folder), *args], cwd=None, env=gitcli.repo_env(), timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.code


def _listed(gitignore: Path) -> bool:
    try:
        lines = gitignore.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return False
    return any(line.strip() in (STATE_FILE, "/" + STATE_FILE) for line in lines)
