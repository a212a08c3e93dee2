"""Sync problems the user must act on: conflict copies, paused roots, quarantined files."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from memoryd.checks import Context, RootView, check, root_check
from memoryd.conflicts import parse_copy_name
from memoryd.findings import Finding

INSPECT_CODES = ("sync.paused", "sync.quarantined", "sync.left-out")


@root_check("sync.conflicts", layouts=("plugin", "layered", "claude"))
def conflict_copies(ctx: Context, root: RootView) -> Iterator[Finding]:
    for item in root.files:
        name = parse_copy_name(item.rel)
        if name is None:
            continue
        yield Finding(
            root.path / item.rel,
            f"sync conflict: {name.device}'s version of {name.original} (both versions kept)",
            f"merge it into {name.original} by hand and delete the copy, or "
            f"memoryd resolve {item.rel.removesuffix('.md')} --keep local|remote|both",
        )


@check("sync.state")
def paused_and_quarantined(ctx: Context) -> Iterator[Finding]:
    from memoryd.sync.report import state_problems

    for problem in state_problems(ctx.app.config, ctx.app.paths):
        if problem.code not in INSPECT_CODES:
            continue
        where = Path(problem.root) / problem.path if problem.path else Path(problem.root)
        yield Finding(where, problem.message, problem.fix)
