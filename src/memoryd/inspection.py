"""``memoryd inspect`` as a library: every memory of every root, and the self-check."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memoryd.app import App
from memoryd.checks import Context, RootView, run_checks
from memoryd.findings import Finding
from memoryd.index import layout
from memoryd.memory import Memory
from memoryd.team import described, provenance

HitReader = Callable[[Path], Mapping[str, int]]


@dataclass(frozen=True)
class MemoryRow:
    root: Path
    scope: str
    path: str  # root-relative
    id: str
    kind: str | None
    summary: str | None
    pinned: bool
    superseded_by: str | None
    hits: int
    created: int | None = None  # epoch ms, from the frontmatter
    updated: int | None = None
    type: str | None = None  # the layered and claude layouts' type (user, feedback, ...)
    provenance: Mapping[str, str] | None = None  # a team memory's (memoryd.team.provenance)
    by: str = ""  # ...as one line (memoryd.team.described)

    def as_dict(self) -> dict[str, Any]:
        return {
            "root": str(self.root),
            "scope": self.scope,
            "path": self.path,
            "id": self.id,
            "kind": self.kind,
            "summary": self.summary,
            "pinned": self.pinned,
            "superseded": self.superseded_by is not None,
            "superseded_by": self.superseded_by,
            "hits": self.hits,
            "created": self.created,
            "updated": self.updated,
            "type": self.type,
            **({"provenance": dict(self.provenance)} if self.provenance is not None else {}),
        }


@dataclass(frozen=True)
class Inspection:
    memories: list[MemoryRow]
    findings: list[Finding]

    def as_dict(self) -> dict[str, Any]:
        return {
            "memories": [m.as_dict() for m in self.memories],
            "problems": [f.as_dict() for f in self.findings],
        }


def inspect(app: App, hits: HitReader | None = None) -> Inspection:
    """Every memory of every configured root, and every check's findings."""
    from memoryd.index.hits import read_hits

    read = hits or read_hits
    ctx = Context.build(app)
    try:
        rows = [
            r
            for root in ctx.roots
            if root.exists
            for r in memory_rows(root, read(root.path), _summaries(ctx, root))
        ]
        return Inspection(rows, run_checks(ctx))
    finally:
        ctx.close()


def _summaries(ctx: Context, root: RootView) -> Mapping[str, str | None]:
    """The summaries recall shows for a layered or claude root's files, by root-relative
    path: the index's (a file without a description gets its first line, and the scan
    inspect lists from keeps no body). A plugin root's are its frontmatter's."""
    if root.config.layout == "plugin":
        return {}
    return {
        row.path.relative_to(root.path).as_posix(): row.summary
        for row in ctx.index().rows(root.path)
    }


def memory_rows(
    root: RootView, hits: Mapping[str, int], summaries: Mapping[str, str | None] | None = None
) -> list[MemoryRow]:
    rows = []
    known = summaries or {}
    for rel, item in sorted(root.memories.items()):
        if item.shows is not None and item.shows.proposed:
            continue  # a team proposal: `memoryd team log` lists it, for a person to review
        memory = item.memory or Memory()
        identity = layout.identify(root.config, rel, memory)
        ident = identity.id
        team = root.config.is_team
        rows.append(
            MemoryRow(
                root=root.path,
                scope=root.config.scope,
                path=rel,
                id=ident,
                kind=memory.kind,
                summary=known[rel] if rel in known else layout.summary(root.config, memory),
                type=identity.type,
                pinned=memory.pinned,
                superseded_by=memory.superseded_by,
                hits=hits.get(ident, 0),
                created=memory.created,
                updated=memory.updated,
                provenance=provenance(memory.meta) if team else None,
                by=described(memory.meta) if team else "",
            )
        )
    return rows


def render_text(result: Inspection) -> str:
    """The human listing: one line per memory, then the problems with their fixes."""
    lines = [*listing_lines(result), f"{len(result.memories)} memories", *proposal_lines(result)]
    if result.findings:
        lines.append("")
        lines += [f.text() for f in result.findings]
        lines.append(f"{len(result.findings)} problem(s) found")
    else:
        lines.append("no problems found")
    return "\n".join(lines)


def listing_lines(result: Inspection) -> list[str]:
    """One line per memory, under a line naming each root."""
    lines = []
    width = max((len(m.id) for m in result.memories), default=2)
    kinds = max((len(m.kind or m.type or "-") for m in result.memories), default=4)
    root: Path | None = None
    for m in result.memories:
        if m.root != root:
            root = m.root
            lines.append(f"{root} ({m.scope} root)")
        flags = ("pinned " if m.pinned else "") + (
            f"superseded by {m.superseded_by} " if m.superseded_by else ""
        )
        summary = " ".join((m.summary or "(no summary)").split())
        lines.append(
            f"  {m.id:<{width}}  {m.kind or m.type or '-':<{kinds}}  {m.scope:<7}  "
            f"hits {m.hits:<4} {flags}{summary}"
        )
        if m.by:
            lines.append(f"  {'':<{width}}  {m.by}")
    return lines


def proposal_lines(result: Inspection) -> list[str]:
    proposals = [m.id for m in result.memories if m.kind == "rule-proposal"]
    return [f"rule-proposal waiting for a person: {p} (memoryd accept {p})" for p in proposals]


BRIEF_CUT = "[… {count} more {what} left out (size limit): 'memoryd inspect' lists them all]"


def render_brief(result: Inspection, budget: int) -> str:
    """inspect for an agent, within ``budget`` characters: the counts, the problems and the
    proposals first (what an agent asks inspect for), then the listing; a cut says how much
    was left out. A client keeps a long tool answer out of the model's context (Claude Code
    saves it to a file and shows its first 2 KB), and the problems came last."""
    found = len(result.findings)
    verdict = f"{found} problem(s) found" if found else "no problems found"
    out = [f"{len(result.memories)} memories, {verdict}"]
    sections = (
        ([f.text() for f in result.findings], "problem(s)"),
        (proposal_lines(result), "rule-proposal(s)"),
        (listing_lines(result), "lines of the listing"),
    )
    for items, what in sections:
        if not items:
            continue
        room = budget - _size(out) - len(BRIEF_CUT.format(count=len(items), what=what)) - 2
        kept: list[str] = []
        for item in items:
            if _size(kept) + len(item) + 1 > room:
                break
            kept.append(item)
        out += ["", *kept]
        if len(kept) < len(items):
            out.append(BRIEF_CUT.format(count=len(items) - len(kept), what=what))
    return "\n".join(out)


# What memory_inspect answers at most: Claude Code keeps a longer MCP answer out of the
# model's context (it saves it to a file and shows the model its first 2 KB).
INSPECT_CHARS = 20_000


def inspect_text(app: App) -> str:
    """What ``memoryd inspect`` finds, for the MCP tool: its problems first, then the
    listing, within :data:`INSPECT_CHARS`."""
    from memoryd.extract_report import lines, report
    from memoryd.index.hits import read_hits

    extraction = lines(report(app))
    budget = INSPECT_CHARS - sum(len(line) + 1 for line in extraction) - 1
    return "\n".join([render_brief(inspect(app, hits=read_hits), budget), "", *extraction])


def _size(lines: list[str]) -> int:
    return sum(len(line) + 1 for line in lines)
