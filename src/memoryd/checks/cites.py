"""Citations: memories whose cited code changed (with the diff), and citations to fill in."""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from memoryd.checks import Context, RootView, root_check
from memoryd.findings import Finding

if TYPE_CHECKING:
    from memoryd.cites.check import Project
    from memoryd.cites.citation import Citation

DIFF_LINES = 40  # of a stale citation's diff, at most, in one finding


@root_check("cites.stale")
def stale(ctx: Context, root: RootView) -> Iterator[Finding]:
    from memoryd.cites.check import Checker

    checker = Checker(_tree(ctx, root))
    for item in root.memories.values():
        if item.memory is None or "cites" not in item.memory.meta:
            continue
        ident = root.id_of(item)
        for verdict in checker.verdicts(item.memory.meta):
            if verdict.state == "unanchored":
                yield Finding(
                    item.path,
                    f"cites {verdict.citation.where} without a fingerprint, so a change to it "
                    "goes unseen",
                    f"memoryd cite --fix {ident}",
                )
            elif verdict.stale:
                project = checker.project
                assert project is not None  # a stale verdict was checked in a project
                yield Finding(
                    item.path,
                    f"may be stale: {verdict.citation.where}: {verdict.reason}\n"
                    + _diff(project, verdict.citation),
                    f"check the memory against the code; then edit it, or run memoryd cite "
                    f"--confirm {ident} if it is still true",
                )


def _tree(ctx: Context, root: RootView) -> Path:
    """Where a root's citations are checked: a project root in its own project, a
    global root in the project of the folder inspect runs in."""
    return root.config.path.parent if root.config.scope == "project" else ctx.app.cwd


def _diff(project: Project, citation: Citation) -> str:
    """The cited text then (from git history) against now, as indented diff lines."""
    from memoryd.cites.check import current_text, old_text

    then = old_text(project, citation)
    now = current_text(project, citation)
    if then is None:
        shown = "\n".join(f"    {line}" for line in (now or [])[:DIFF_LINES])
        head = (
            "    (the cited text as it was is in no commit of the last 200: it was never "
            "committed, so only the lines there now are shown)"
        )
        return head + ("\n" + shown if shown else "\n    (the file is gone)")
    diff = list(difflib.unified_diff(then, now or [], "cited then", "now", lineterm="", n=1))
    return "\n".join(f"    {line}" for line in diff[:DIFF_LINES])
