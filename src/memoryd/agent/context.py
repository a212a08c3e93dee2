"""The per-turn injection block: what `memoryd context` prints for an agent harness.

Three layers, in this order and with shrinking budget:

1. Iron rules, every time: the global roots' first (a project cannot override
   them), then the project's.
2. The outline, every time and kept short: what memory exists and when to load
   which part, taken from the compiled blocks of each root's ROOT.md.
3. The bodies of the best recall hits for the query: at most ``max_entries``
   within ``max_chars`` of body text, cut at a line boundary with a marker.

:func:`build` is pure, so the same files and query give the same bytes (a
harness can cache on them); :func:`gather` reads the inputs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memoryd.app import App

RULES_BLOCK = "rules"
OUTLINE_BLOCKS = ("directory", "routing")
CUT = "[… cut: memory_recall or memoryd recall {id} has the rest]"
OUTLINE_CUT = "[… outline cut: memoryd inspect lists every memory]"
STALE_HEADING = "## May be stale, check before trusting (the code they cite has changed)"
_EMPTY_ROW = re.compile(r"^\| [^|]+ \| 0 \| .*\|$")  # a directory row of a folder without memories
_TABLE_RULE = re.compile(r"^\|(?:-+\|)+$")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")  # a cell boundary: a pipe not escaped as \|
_LINK = re.compile(r"^\[(.*)\]\(.*\)$")


@dataclass(frozen=True)
class RootBlocks:
    """One root's compiled ROOT.md blocks (block name → lines between its markers)."""

    scope: str
    path: str
    blocks: dict[str, list[str]]


@dataclass(frozen=True)
class Shown:
    id: str
    scope: str
    kind: str | None
    summary: str | None
    body: str
    stale: tuple[str, ...] = ()  # citations whose text changed: never injected as true


@dataclass(frozen=True)
class Block:
    text: str
    rules: list[str] = field(default_factory=list)
    entries: list[dict[str, Any]] = field(default_factory=list)
    cut: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"text": self.text, "rules": self.rules, "entries": self.entries, "cut": self.cut}


def ordered(views: Sequence[RootBlocks]) -> list[RootBlocks]:
    """Global roots first (their rules stand above a project's), then project roots."""
    return sorted(views, key=lambda v: (v.scope != "global", v.path))


def rule_lines(views: Sequence[RootBlocks]) -> list[str]:
    lines: list[str] = []
    for view in ordered(views):
        for line in view.blocks.get(RULES_BLOCK, []):
            if line.startswith("- "):
                lines.append(f"{line} [{view.scope}]")
    return lines


def outline_lines(views: Sequence[RootBlocks]) -> list[str]:
    lines: list[str] = []
    for view in ordered(views):
        body = [line for name in OUTLINE_BLOCKS for line in _outline_part(view.blocks.get(name))]
        if body:
            lines += [f"### {view.scope} memory ({view.path})", *body]
    return lines


def _outline_part(block: list[str] | None) -> list[str]:
    """A compiled block made compact: its heading, then one short line per table row."""
    kept: list[str] = []
    for line in block or []:
        text = line.strip()
        if text.startswith("## "):
            kept.append("#### " + text[3:])
        elif text.startswith("|") and not _TABLE_RULE.match(text) and not _EMPTY_ROW.match(text):
            kept.extend(_row(text))
    return kept if len(kept) > 1 else []


def _row(text: str) -> list[str]:
    """``| a | b | c |`` → ``- a (b): c`` (directory) or ``- a → b`` (routing); headers dropped."""
    cells = [c.strip().replace("\\|", "|") for c in _CELL_SPLIT.split(text.strip("|"))]
    if cells in (["folder", "memories", "what is in it"], ["when the task involves", "load"]):
        return []
    cells[0] = _LINK.sub(r"\1", cells[0])
    if len(cells) == 3:
        return [f"- {cells[0]} ({cells[1]}): {cells[2]}"]
    if len(cells) == 2:
        return [f"- {cells[0]} → {cells[1]}"]
    return [text]


def cut_lines(lines: list[str], budget: int) -> tuple[list[str], bool]:
    """The longest prefix of whole lines within ``budget`` characters, and whether it was cut."""
    kept: list[str] = []
    used = 0
    for line in lines:
        cost = len(line) + 1
        if used + cost > budget:
            return kept, True
        kept.append(line)
        used += cost
    return kept, False


def cut_body(body: str, budget: int) -> tuple[str, bool]:
    """``body`` within ``budget`` characters, cut at a line boundary.

    A first line longer than the whole budget is cut inside the line (at the
    last space when there is one) rather than dropping the body altogether.
    """
    lines = body.strip("\n").split("\n")
    kept, cut = cut_lines(lines, budget)
    if cut and not kept and budget > 0:
        head = lines[0][:budget]
        space = head.rfind(" ")
        kept = [head[:space] if space > budget // 2 else head]
    return "\n".join(kept), cut


def build(
    views: Sequence[RootBlocks],
    hits: Sequence[Shown],
    max_chars: int,
    max_entries: int,
    outline_chars: int,
) -> Block:
    """The injection block (pure: the same inputs give the same text)."""
    rules = rule_lines(views)
    out = ["<memory>", "## Iron rules (always follow; global first, then this project)"]
    out += rules or ["(none)"]
    outline, outline_cut = cut_lines(outline_lines(views), outline_chars)
    if outline:
        out += ["", "## Memory outline (what exists; load more with memory_recall)", *outline]
        out += [OUTLINE_CUT] if outline_cut else []
    stale = [h for h in hits if h.stale][:max_entries]
    chosen, any_cut = _bodies([h for h in hits if not h.stale], rules, max_chars, max_entries)
    if chosen:
        out += ["", "## Relevant memories (best recall hits for this prompt)"]
        for entry, text, cut in chosen:
            title = f"### {entry.id} ({entry.scope} {entry.kind or 'memory'})"
            out += [title + (f": {entry.summary}" if entry.summary else "")]
            out += [text] if text else []
            out += [CUT.format(id=entry.id)] if cut else []
    if stale:
        out += ["", STALE_HEADING]
        out += [_stale_line(entry) for entry in stale]
    out.append("</memory>")
    entries: list[dict[str, Any]] = [
        {"id": e.id, "scope": e.scope, "kind": e.kind, "summary": e.summary, "cut": c}
        for e, _, c in chosen
    ]
    entries += [
        {"id": e.id, "scope": e.scope, "kind": e.kind, "summary": e.summary, "stale": list(e.stale)}
        for e in stale
    ]
    return Block("\n".join(out) + "\n", rules, entries, any_cut or outline_cut)


def _stale_line(entry: Shown) -> str:
    """One line for a memory whose cited code changed: what it claims, and where to look."""
    summary = f": {entry.summary}" if entry.summary else ""
    return f"- {entry.id} ({entry.scope}){summary} — {'; '.join(entry.stale)}"


def _bodies(
    hits: Sequence[Shown], rules: list[str], max_chars: int, max_entries: int
) -> tuple[list[tuple[Shown, str, bool]], bool]:
    shown_rules = "\n".join(rules)
    chosen: list[tuple[Shown, str, bool]] = []
    left = max_chars
    for entry in hits:
        if len(chosen) >= max_entries or left <= 0:
            break
        if entry.kind == "rule" and f"`{entry.id}`" in shown_rules:
            continue  # already in layer 1
        text, cut = cut_body(entry.body, left)
        chosen.append((entry, text, cut))
        left -= len(text)
        if cut:
            return chosen, True
    return chosen, False


def gather(
    app: App, query: str, max_chars: int | None = None, max_entries: int | None = None
) -> Block:
    """Read the roots' compiled blocks and the best hits for ``query``, then build the block."""
    from memoryd import locate
    from memoryd.agent import citing, upkeep

    settings = app.config.injection
    chars = settings.max_chars if max_chars is None else max_chars
    entries = settings.max_entries if max_entries is None else max_entries
    roots = locate.active_roots(app.config, app.cwd)
    hits: list[Shown] = []
    with upkeep.freshen(app, roots) as db:  # opened once: every open checks the database
        views = [RootBlocks(r.scope, str(r.path), upkeep.root_blocks(r)) for r in roots]
        if query.strip() and entries > 0:
            found = upkeep.search(app, roots, query, limit=entries * 2, count_hits=False, db=db)
            checker = citing.Checker(app.cwd)
            hits = [
                Shown(h.id, h.scope, h.kind, h.summary, h.body,
                      tuple(citing.stale_reasons(checker.of_file(h.path))))
                for h in found
            ]  # fmt: skip
    return build(views, hits, chars, entries, settings.outline_chars)
