"""The per-turn injection block (the ``injection:`` section of config.yaml applied), pure.

Four layers, in this order, within one hard total (``injection.max_total_chars``,
below the 10,000 characters above which Claude Code stops inlining a hook's output):

1. Iron rules, every time: the global roots' first (a project cannot override
   them), then the project's. They come first and take what they need; when they
   alone do not fit, the block says how many were left out and in which ROOT.md
   they are (and ``memoryd inspect`` reports it).
2. The current goal: each ROOT.md's "Current goal" section, when it is filled in.
3. The outline, kept short: what memory exists and when to load which part, from
   the compiled blocks of each root's ROOT.md. The project's outline comes first
   (the more specific root wins), then the global one; each root gets a fair part
   of ``outline_chars`` (what one leaves is the next one's), and a cut says which
   root was cut.
4. The bodies of the best recall hits for the query: at most ``max_entries``
   within ``max_chars`` of body text, cut at a line boundary with a marker.

Nothing is left out silently: every cut leaves a line that says what is missing
and where it is. :func:`build` is pure, so the same files and query give the same
bytes (a harness can cache on them); :func:`memoryd.agent.context.gather` reads the
inputs. Top-level, not in ``agent/``: inspect's check of the rules' budget
(``checks/injection.py``) applies the same rules without importing the agent tools.

What a session already holds, and the block of only what is new to it, is the per-session
half: :mod:`memoryd.injection_session`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

RULES_BLOCK = "rules"
OUTLINE_BLOCKS = ("directory", "routing")
CUT = "[… cut: memory_recall or memoryd recall {id} has the rest]"
OUTLINE_CUT = "[… {scope} outline cut: {path}/ROOT.md has all of it]"
RULES_CUT = (
    "[… {count} iron rule(s) left out: over injection.max_total_chars ({total}); "
    "all are in {where}]"
)
GOAL_CUT = "[… goal cut: the rest is in {path}/ROOT.md]"
OUTLINE_LEFT_OUT = "[… outline left out (size limit): each root's ROOT.md has it]"
QUERY_CUT = (
    "[… recall searched {kept} of the prompt's {total} search terms (its first and last): "
    "memory_recall with a few rare words finds the rest]"
)
BODIES_CUT = "[… {count} more relevant memor{y} left out (size limit): memory_recall has them]"
GOAL_HEADING = "## Current goal"
DEFAULT_TOTAL = 8000
TAIL = 200  # room kept at the end of the block for the last notices (outline, bodies)
RULES_HEADING = "## Iron rules (always follow; global first, then this project)"
STALE_HEADING = "## May be stale, check before trusting (the code they cite has changed)"
STALE_CUT = "[… {count} more possibly stale memor{y} left out (size limit)]"
_EMPTY_ROW = re.compile(r"^\| [^|]+ \| 0 \| .*\|$")  # a directory row of a folder without memories
_TABLE_RULE = re.compile(r"^\|(?:-+\|)+$")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")  # a cell boundary: a pipe not escaped as \|
_LINK = re.compile(r"^\[(.*)\]\(.*\)$")


class Searched(Protocol):
    """What recall searched for a prompt (:class:`memoryd.agent.query.PromptQuery`):
    ``kept`` of the prompt's ``total`` distinct terms."""

    @property
    def kept(self) -> int: ...
    @property
    def total(self) -> int: ...
    @property
    def left_out(self) -> int: ...


@dataclass(frozen=True)
class RootBlocks:
    """One root's compiled ROOT.md blocks (block name → lines between its markers) and
    its "Current goal" section (empty when not filled in)."""

    scope: str
    path: str
    blocks: dict[str, list[str]]
    goal: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Shown:
    """One memory as the context block shows it."""

    id: str
    scope: str
    kind: str | None
    summary: str | None
    body: str
    stale: tuple[str, ...] = ()  # citations whose text changed: never injected as true


@dataclass(frozen=True)
class Block:
    """The context block's text and what went into it (and what was cut)."""

    text: str
    rules: list[str] = field(default_factory=list)
    entries: list[dict[str, Any]] = field(default_factory=list)
    cut: bool = False
    rules_left_out: int = 0  # iron rules that did not fit in the total
    cut_roots: list[str] = field(default_factory=list)  # roots whose outline was cut
    missing: list[tuple[str, str]] = field(default_factory=list)  # (scope, path): not there
    query_terms_left_out: int = 0  # the prompt's search terms recall was not given
    frame: str = ""  # frame_digest of the roots the block was built from
    framed: bool = True  # it carries the rules, the goal and the outline
    shown: dict[str, str] = field(default_factory=dict)  # memory_key -> shown_digest

    def as_dict(self) -> dict[str, Any]:
        return {
            "text": self.text, "rules": self.rules, "entries": self.entries, "cut": self.cut,
            "rules_left_out": self.rules_left_out, "cut_roots": self.cut_roots,
            "query_terms_left_out": self.query_terms_left_out,
        }  # fmt: skip


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


def specific_first(views: Sequence[RootBlocks]) -> list[RootBlocks]:
    """Project roots first (the more specific root wins), then global roots."""
    return sorted(views, key=lambda v: (v.scope == "global", v.path))


def outline_lines(views: Sequence[RootBlocks]) -> list[str]:
    """Every root's outline, uncut (project first)."""
    return [line for view in specific_first(views) for line in _root_outline(view)]


def _root_outline(view: RootBlocks) -> list[str]:
    body = [line for name in OUTLINE_BLOCKS for line in _outline_part(view.blocks.get(name))]
    return [f"### {view.scope} memory ({view.path})", *body] if body else []


def fair_outline(views: Sequence[RootBlocks], budget: int) -> tuple[list[str], list[str]]:
    """The outline within ``budget`` characters, project first, and the paths of the roots
    that were cut. The budget is shared max-min fairly: a root that needs less than an
    equal part takes what it needs, and the others share the rest equally.
    """
    parts = [(view, _root_outline(view)) for view in specific_first(views)]
    parts = [(view, lines) for view, lines in parts if lines]
    shares = fair_shares([size(lines) for _, lines in parts], budget)
    out: list[str] = []
    cut_roots: list[str] = []
    for (view, lines), share in zip(parts, shares, strict=True):
        kept, cut = cut_lines(lines, share)
        if cut:
            marker = OUTLINE_CUT.format(scope=view.scope, path=view.path)
            kept, _ = cut_lines(lines, share - len(marker) - 1)
            kept = [*kept, marker] if len(kept) > 1 else [marker]
            cut_roots.append(view.path)
        out += kept
    return out, cut_roots


def fair_shares(needs: Sequence[int], budget: int) -> list[int]:
    """Max-min fair parts of ``budget`` for these needs (in their order)."""
    shares = [0] * len(needs)
    left, open_ = budget, sorted(range(len(needs)), key=lambda i: needs[i])
    while open_:
        i = open_.pop(0)
        shares[i] = min(needs[i], left // (len(open_) + 1))
        left -= shares[i]
    return shares


def outline_room(views: Sequence[RootBlocks]) -> int:
    """The least outline budget that holds every root's cut marker."""
    paths = [v for v in views if _root_outline(v)]
    return sum(len(OUTLINE_CUT.format(scope=v.scope, path=v.path)) + 1 for v in paths)


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
    *,
    total_chars: int = DEFAULT_TOTAL,
    query: Searched | None = None,
) -> Block:
    """The injection block (pure: the same inputs give the same text), never longer than
    ``total_chars`` (as long as that leaves room for the frame and one notice).
    ``query``: what recall searched, when that was not the whole prompt (it is said).
    :func:`memoryd.injection_session.block_for` leaves out what a session already holds."""
    rules = rule_lines(views)
    out = ["<memory>", RULES_HEADING]
    shown, missing = _fit_rules(views, rules, _left(out, total_chars))
    out += shown or ["(none)"]
    out += [_rules_notice(views, missing, total_chars)] if missing else []
    out += _goal(views, _left(out, total_chars))
    outline_head = ["", "## Memory outline (what exists; load more with memory_recall)"]
    budget = min(outline_chars, _left(out, total_chars) - size(outline_head))
    outline: list[str] = []
    cut_roots: list[str] = []
    if outline_chars > 0 and budget >= outline_room(views):
        outline, cut_roots = fair_outline(views, budget)
    elif outline_chars > 0 and outline_lines(views):
        out.append(OUTLINE_LEFT_OUT)  # the notice takes from the room kept for notices
        cut_roots = [v.path for v in specific_first(views) if _root_outline(v)]
    out += [*outline_head, *outline] if outline else []
    searched = searched_lines(query)
    room = total_chars - size(out) - len("</memory>\n") - size(searched)
    lines, entries, memories_cut = memory_sections(hits, rules, max_chars, max_entries, room)
    out += [*lines, *searched, "</memory>"]
    cut = memories_cut or bool(cut_roots) or bool(missing) or bool(searched)
    return Block(
        "\n".join(out) + "\n", rules, entries, cut, len(missing), cut_roots,
        query_terms_left_out=query.left_out if query is not None else 0,
    )  # fmt: skip


def searched_lines(query: Searched | None) -> list[str]:
    """The notice that recall searched only some of the prompt's terms, when it did."""
    if query is None or not query.left_out:
        return []
    return ["", QUERY_CUT.format(kept=query.kept, total=query.total)]


def memory_sections(
    hits: Sequence[Shown], rules: list[str], max_chars: int, max_entries: int, room: int
) -> tuple[list[str], list[dict[str, Any]], bool]:
    """The bodies of the fresh hits, then the stale ones (in at most half of ``room``):
    their lines, their entries and whether any was cut or left out."""
    stale_lines, stale_entries, stale_cut = _stale_section(hits, max_entries, room // 2)
    fresh = [h for h in hits if not h.stale]
    body_lines, entries, body_cut = _body_section(
        fresh, rules, max_chars, max_entries, room - size(stale_lines)
    )
    return [*body_lines, *stale_lines], entries + stale_entries, body_cut or stale_cut


def size(lines: Sequence[str]) -> int:
    return sum(len(line) + 1 for line in lines)


def _left(out: Sequence[str], total: int) -> int:
    """What is left of ``total`` after ``out``, ``</memory>`` and the room kept for notices."""
    return total - size(out) - len("</memory>\n") - TAIL


def _fit_rules(
    views: Sequence[RootBlocks], rules: list[str], budget: int
) -> tuple[list[str], list[str]]:
    """The rules that fit in ``budget`` (whole, in order) beside the notice of those that
    do not, and those that do not."""
    kept, cut = cut_lines(rules, budget)
    if not cut:
        return rules, []
    notice = _rules_notice(views, rules, 10**9)  # the longest notice these rules can need
    kept, _ = cut_lines(rules, budget - len(notice) - 1)
    return kept, rules[len(kept) :]


def _rules_notice(views: Sequence[RootBlocks], missing: list[str], total: int) -> str:
    """How many rules were left out, and which ROOT.md files hold them."""
    where = [
        f"{v.path}/ROOT.md"
        for v in ordered(views)
        if any(r.endswith(f"[{v.scope}]") for r in missing)
    ]
    return RULES_CUT.format(count=len(missing), total=total, where=", ".join(dict.fromkeys(where)))


def rules_left_out(views: Sequence[RootBlocks], total_chars: int) -> int:
    """How many iron rules the block leaves out at this total (``memoryd inspect`` asks)."""
    rules = rule_lines(views)
    return len(_fit_rules(views, rules, _left(["<memory>", RULES_HEADING], total_chars))[1])


def _goal(views: Sequence[RootBlocks], budget: int) -> list[str]:
    """The filled-in "Current goal" sections (project first) within ``budget``."""
    out: list[str] = []
    for view in specific_first(views):
        if not view.goal:
            continue
        heading = [] if out else ["", GOAL_HEADING]
        lines = [*heading, f"### {view.scope} ({view.path})", *view.goal]
        kept, cut = cut_lines(lines, budget - size(out))
        if cut:
            marker = GOAL_CUT.format(path=view.path)
            kept, _ = cut_lines(lines, budget - size(out) - len(marker) - 1)
            out += [*kept, marker] if len(kept) > len(heading) + 1 else []
            break
        out += kept
    return out


def _body_section(
    hits: Sequence[Shown], rules: list[str], max_chars: int, max_entries: int, room: int
) -> tuple[list[str], list[dict[str, Any]], bool]:
    """The "Relevant memories" lines: ``max_chars`` of body text at most, and all of it
    (titles, markers, the notice of what did not fit) within ``room`` characters."""
    chosen, cut = _bodies(hits, rules, max_chars, max_entries)
    if not chosen:
        return [], [], False
    lines = ["", "## Relevant memories (best recall hits for this prompt)"]
    entries: list[dict[str, Any]] = []
    keep = room - len(BODIES_CUT) - 4  # the notice always fits
    for entry, full_text, body_cut in chosen:
        text, was_cut = full_text, body_cut
        title = f"### {entry.id} ({entry.scope} {entry.kind or 'memory'})"
        title += f": {entry.summary}" if entry.summary else ""
        marker = CUT.format(id=entry.id)
        spare = keep - size(lines) - size([title])
        if spare < 0:
            break
        if size([text]) + (len(marker) + 1 if was_cut else 0) > spare:
            text, _ = cut_body(text, spare - len(marker) - 2)
            was_cut = True
        lines += [title, *([text] if text else []), *([marker] if was_cut else [])]
        entries.append({"id": entry.id, "scope": entry.scope, "kind": entry.kind,
                        "summary": entry.summary, "cut": was_cut})  # fmt: skip
    more = len(chosen) - len(entries)
    if more:
        lines.append(BODIES_CUT.format(count=more, y="y" if more == 1 else "ies"))
    if not entries:
        lines = [lines[-1]]
    return lines, entries, cut or more > 0 or any(e["cut"] for e in entries)


def _stale_section(
    hits: Sequence[Shown], max_entries: int, room: int
) -> tuple[list[str], list[dict[str, Any]], bool]:
    """Memories whose cited code changed: one line each (what they claim, where to look)
    under their own heading, never as bodies; within ``room``, the rest counted."""
    stale = [h for h in hits if h.stale][:max_entries]
    if not stale:
        return [], [], False
    lines = ["", STALE_HEADING]
    shown: list[Shown] = []
    for entry in stale:
        line = _stale_line(entry)
        if size(lines) + len(line) + 1 > room - len(STALE_CUT) - 4:
            break
        lines.append(line)
        shown.append(entry)
    more = len(stale) - len(shown)
    if more:
        notice = STALE_CUT.format(count=more, y="y" if more == 1 else "ies")
        lines = [*lines, notice] if shown else [notice]
    entries = [
        {"id": e.id, "scope": e.scope, "kind": e.kind, "summary": e.summary, "stale": list(e.stale)}
        for e in shown
    ]
    return lines, entries, more > 0


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
