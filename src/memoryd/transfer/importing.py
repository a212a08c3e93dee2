"""An import: read a source, pass every candidate through remember's gate, write what passes.

:func:`plan` decides everything and writes nothing: that list is what ``--dry-run``
prints and what a UI shows before the user confirms, and :func:`run` writes exactly
its ``write`` items. The gate is remember's, piece by piece: the kind and summary
checked as ``memoryd remember`` checks them, an id memoryd would never read refused, an
oversized memory refused, a secret refused and reported (never written), a memory whose
terms an existing one covers skipped and counted as a duplicate, and no iron rule (the
readers already turn rules into proposals). Candidates of the same import are checked
against each other too, through an in-memory copy of the index's duplicate search.

A second import of the same source writes nothing: a memory it wrote before carries
the same ``source:`` (a jsonl record, which has an id of its own, the same id and text),
and is counted as already imported. Nothing of the source is ever written to; a source
file that cannot be parsed is one line in the report, and the rest is imported.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memoryd import locate, safepath
from memoryd.agent import gate, remember, upkeep
from memoryd.app import App
from memoryd.config.sections import RootConfig
from memoryd.errors import MemorydError, SecretRefused
from memoryd.fsutil import atomic_write
from memoryd.memory import Memory, new_memory, render
from memoryd.transfer import sources
from memoryd.transfer.candidate import Candidate, Unreadable

if TYPE_CHECKING:
    from memoryd.index.db import IndexDB

WRITE, ALREADY, DUPLICATE, SECRET, REFUSED, ELSEWHERE = (
    "write", "already", "duplicate", "secret", "refused", "elsewhere",
)  # fmt: skip
OUTCOMES = (WRITE, ALREADY, DUPLICATE, SECRET, REFUSED, ELSEWHERE)
SCOPES = ("global", "project")
WITHHELD = "(summary withheld: it holds the secret)"


@dataclass
class Planned:
    """What the import does with one candidate, and why."""

    candidate: Candidate
    outcome: str
    id: str | None = None
    kind: str | None = None
    reason: str = ""
    path: Path | None = None
    memory: Memory | None = None  # the memory to write (outcome ``write``)

    def as_dict(self) -> dict[str, Any]:
        c = self.candidate
        return {
            "outcome": self.outcome, "id": self.id, "kind": self.kind or c.kind,
            "summary": c.summary, "source": c.source, "reason": self.reason,
            "path": str(self.path) if self.path else None,
        }  # fmt: skip


@dataclass
class Plan:
    """Every candidate of a source with its outcome, in the source's order."""

    source: str
    root: RootConfig
    items: list[Planned] = field(default_factory=list)
    unreadable: list[Unreadable] = field(default_factory=list)
    edits: dict[Path, bytes] = field(default_factory=dict)  # superseded_by on older memories

    def counts(self) -> dict[str, int]:
        return {name: sum(1 for i in self.items if i.outcome == name) for name in OUTCOMES}

    def writes(self) -> list[Planned]:
        return [item for item in self.items if item.outcome == WRITE]

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.source, "root": str(self.root.path), "scope": self.root.scope,
            "counts": self.counts(), "items": [item.as_dict() for item in self.items],
            "unreadable": [u.line() for u in self.unreadable],
        }  # fmt: skip


@dataclass
class Report:
    """An import that ran (or, ``dry_run``, would run): its plan and what writing said."""

    plan: Plan
    dry_run: bool
    written: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {**self.plan.as_dict(), "dry_run": self.dry_run, "written": self.written,
                "warnings": self.warnings}  # fmt: skip


def plan(
    app: App, source: str, path: Path | None = None, into: str | None = None,
    only: Sequence[str] = (),
) -> Plan:  # fmt: skip
    """What importing ``source`` from ``path`` into ``into`` (global or project; default:
    where ``remember`` would write) would do with each memory. Writes nothing: a project
    root missing inside a repository is only named (:func:`run` creates it, as remember
    would, once there is something to write)."""
    if into is not None and into not in SCOPES:
        raise MemorydError(f"unknown scope {into!r}", hint="use --into global or --into project")
    reading = sources.read(source, path, app.env, app.cwd)
    root, roots = locate.write_target(app, into, create=False)
    result = Plan(source, root, unreadable=list(reading.unreadable))
    wanted = [c for c in reading.candidates if _picked(c, only)]
    if not wanted:
        return result
    from memoryd.freshness import ensure_fresh

    on_disk = [r for r in roots if r is not root or root.path.is_dir()]  # not one planned
    db = ensure_fresh(app, roots=on_disk, recompile=True)
    try:
        gate = _Gate(app, root, roots, db)
        result.items = [gate.screen(candidate) for candidate in wanted]
    finally:
        db.close()
    _link(result, gate)
    return result


def run(
    app: App, source: str, path: Path | None = None, into: str | None = None, *,
    dry_run: bool = False, only: Sequence[str] = (),
) -> Report:  # fmt: skip
    """Import ``source``: the plan's ``write`` items are written, then the root's compiled
    files and the index brought up to date once. ``dry_run``: the plan only."""
    made = plan(app, source, path, into, only)
    report = Report(made, dry_run)
    if dry_run:
        return report
    root = made.root
    if made.writes() and not root.path.is_dir():  # a project's first memories: made now
        root, _roots = locate.write_target(app, into)
    changed: list[Path] = []
    for item in made.writes():
        assert item.path is not None and item.memory is not None and item.id is not None
        atomic_write(item.path, render(item.memory))
        changed.append(item.path)
        report.written.append(item.id)
    for edited, data in made.edits.items():
        atomic_write(edited, data)
        changed.append(edited)
    if changed:
        report.warnings = upkeep.refresh(app, root, changed)
    return report


def _picked(candidate: Candidate, only: Sequence[str]) -> bool:
    """Is ``candidate`` one the user picked (``--only TEXT``: its summary or source holds
    one of the texts, case ignored)? Every candidate when nothing is picked."""
    if not only:
        return True
    hay = f"{candidate.summary}\n{candidate.source or ''}".lower()
    return any(text.lower() in hay for text in only)


class _Gate:
    """remember's checks for one import: the root's memories read once, the index opened
    once, and the candidates already accepted remembered for the duplicate check."""

    def __init__(self, app: App, root: RootConfig, roots: list[RootConfig], db: IndexDB) -> None:
        self.app, self.root, self.roots, self.db = app, root, roots, db
        self.existing: dict[str, Memory] = {}
        self.sources: set[str] = set()
        for file, memory in locate.all_memories(root):
            self.existing[memory.id or locate.path_id(root, file)] = memory
            if isinstance(memory.meta.get("source"), str):
                self.sources.add(memory.meta["source"])
        self.taken: set[str] = set(self.existing)
        self.accepted: dict[str, Planned] = {}
        self.batch = _Batch(app.config.search.duplicate_coverage)
        self.project = root.path.parent.name if root.scope == "project" else None

    def screen(self, c: Candidate) -> Planned:
        if c.kind == remember.RULE:  # iron rules are written only by people
            c = replace(c, kind=remember.PROPOSAL)
        if c.id is None and c.source is not None and c.source in self.sources:
            return Planned(c, ALREADY, reason="imported before (same source)")
        if self.project and c.project and c.project != self.project:
            return Planned(c, ELSEWHERE, reason=f"filed under project {c.project!r}")
        request = remember.Request(
            kind=c.kind, summary=c.summary, body=c.body, load_when=c.load_when,
            pinned=c.pinned, supersedes=c.supersedes, force=True,
        )  # fmt: skip
        try:
            remember.check_request(request)
            memory_id = self._id(c)
            if isinstance(memory_id, Planned):
                return memory_id
            path = safepath.inside(self.root.path, memory_id, ".md")
            gate.refuse_unseen(self.root.path, memory_id, path)
            memory = self._memory(c, request, memory_id)
            data = render(memory)
            gate.refuse_oversized(data, self.app.config.search.max_file_bytes)
            gate.refuse_secrets(self.root, path, data, agent=False)
        except SecretRefused as exc:
            if upkeep.secrets(c.summary, self.root.path):  # never repeat the secret itself
                c = replace(c, summary=WITHHELD)
            return Planned(c, SECRET, kind=c.kind, reason=_findings(exc.message))
        except MemorydError as exc:
            return Planned(c, REFUSED, kind=c.kind, reason=exc.message)
        text = remember.content_text(request)
        terms = upkeep.terms(text)
        duplicate = self._duplicate(text, terms)
        if duplicate:
            return Planned(c, DUPLICATE, memory_id, c.kind, duplicate)
        self.taken.add(memory_id)
        self.batch.add(memory_id, terms)
        if c.id is None and c.source is not None:  # a memory with an id is known by it
            self.sources.add(c.source)
        item = Planned(c, WRITE, memory_id, c.kind, path=path, memory=memory)
        self.accepted[memory_id] = item
        return item

    def _id(self, c: Candidate) -> str | Planned:
        """The id a candidate is written under: its own (jsonl), else one made from its
        name or summary that no memory of the root and no earlier candidate has."""
        if c.id is None:
            slug = remember.slugify(c.name or c.summary)
            category = remember.category_for(c.kind)
            return remember.unique_id(self.root.path, category, slug, self.taken)
        memory_id = locate.normal_id(c.id)
        head, _, rest = memory_id.partition("/")
        if not rest:
            memory_id = f"{remember.category_for(c.kind)}/{memory_id}"
        elif head == remember.category_for(remember.RULE):  # no iron rule from an import
            memory_id = f"{remember.category_for(remember.PROPOSAL)}/{rest}"
        old = self.existing.get(memory_id)
        if old is not None:
            if old.summary == c.summary and old.body.rstrip("\n") == c.body.rstrip("\n"):
                return Planned(c, ALREADY, memory_id, c.kind, "imported before (same id and text)")
            return Planned(
                c, REFUSED, memory_id, c.kind,
                f"a different memory with id {memory_id!r} exists in {self.root.path}",
            )  # fmt: skip
        if memory_id in self.taken:
            return Planned(c, REFUSED, memory_id, c.kind, "another line of the import has this id")
        return memory_id

    def _memory(self, c: Candidate, request: remember.Request, memory_id: str) -> Memory:
        """The memory as remember builds it, with the source's times, ``source:`` and the
        fields only an export carries; the body exactly as the source has it."""
        stamp = c.created or c.updated or remember.now_ms()
        meta = dict(remember.build_memory(request, memory_id, c.kind, stamp).meta)
        meta["updated"] = c.updated or stamp
        if c.supersedes:
            meta["supersedes"] = c.supersedes
        if c.source is not None:
            meta["source"] = c.source
        for key, value in c.extra.items():
            meta.setdefault(key, value)
        return new_memory(meta, c.body + "\n" if c.body else "")

    def _duplicate(self, text: str, terms: set[str]) -> str:
        """Why ``text`` (of these ``terms``) is a duplicate (an existing memory or an earlier
        candidate covers its terms), or ``""``."""
        found = gate.duplicate_of(self.app, self.roots, text, db=self.db)
        if found is not None:
            row, share = found
            return f"{row.id!r} ({row.scope}) already covers {share:.0%} of its terms"
        near = self.batch.covering(terms)
        if near is not None:
            other, share = near
            return f"{other!r} of this import already covers {share:.0%} of its terms"
        return ""


class _Batch:
    """The duplicate search of :mod:`memoryd.index.duplicates` over the memories this import
    accepted so far (not in the index yet): the rarest terms find every memory that could
    cover the threshold's share, and their terms decide it exactly."""

    def __init__(self, share: float) -> None:
        self.share = share
        self.terms: list[set[str]] = []
        self.ids: list[str] = []
        self.postings: dict[str, list[int]] = {}

    def add(self, memory_id: str, terms: set[str]) -> None:
        for term in terms:
            self.postings.setdefault(term, []).append(len(self.ids))
        self.terms.append(terms)
        self.ids.append(memory_id)

    def covering(self, wanted: set[str]) -> tuple[str, float] | None:
        """The accepted memory holding the largest share (at least the threshold) of the
        ``wanted`` terms, and that share."""
        if not wanted or not self.ids:
            return None
        need = max(1, math.ceil(self.share * len(wanted) - 1e-9))
        rarest = sorted(wanted, key=lambda t: (len(self.postings.get(t, ())), t))
        found = {i for t in rarest[: len(wanted) - need + 1] for i in self.postings.get(t, ())}
        best = max(((len(wanted & self.terms[i]), i) for i in found), default=(0, -1))
        if best[0] < need:
            return None
        return self.ids[best[1]], best[0] / len(wanted)


def _link(result: Plan, gate: _Gate) -> None:
    """``superseded_by`` on the memory each written one supersedes: on the import's own
    (before it is written), or an edit of one already in the root, as remember does."""
    from memoryd.frontmatter_edit import edit_fields

    for item in result.writes():
        old_id = item.candidate.supersedes
        if not old_id or item.id is None:
            continue
        older = gate.accepted.get(locate.normal_id(old_id))
        if older is not None and older.memory is not None:
            meta = {**older.memory.meta, "superseded_by": item.id}
            older.memory = new_memory(meta, older.memory.body)
            continue
        found = locate.find_in(result.root, locate.normal_id(old_id))
        if found is not None and not found.memory.superseded_by:
            try:
                result.edits[found.path] = edit_fields(found.memory, {"superseded_by": item.id})
            except MemorydError as exc:
                item.reason = f"{old_id!r} was not marked superseded: {exc.message}"


def _findings(message: str) -> str:
    """The scanner's finding lines of a secret refusal (rule, redacted preview, fingerprint),
    without remember's first line."""
    lines = [line.strip() for line in message.splitlines()[1:] if line.strip()]
    found = "; ".join(line.split(": ", 1)[-1] for line in lines)
    return f"looks like a secret: {found}" if found else "looks like a secret"


def summary_lines(report: Report) -> Iterable[str]:
    """The report as the CLI prints it: one line per candidate that is not written as it
    says (and per one that is, on a dry run), then the counts."""
    counts = report.plan.counts()
    verb = "would write" if report.dry_run else "wrote"
    for problem in report.plan.unreadable:
        yield f"unreadable: {problem.line()}"
    for item in report.plan.items:
        c = item.candidate
        where = f" <- {c.source}" if c.source else ""
        if item.outcome == WRITE:
            if report.dry_run:
                yield f"{verb} {item.id} ({item.kind}): {c.summary}{where}"
        elif item.outcome in (SECRET, REFUSED):
            yield f"{item.outcome}: {c.summary}{where}: {item.reason}"
    for warning in report.warnings:
        yield f"warning: {warning}"
    root = report.plan.root
    yield (
        f"{verb} {counts[WRITE]} memories into {root.path} ({root.scope}); "
        f"{counts[DUPLICATE]} duplicates skipped, {counts[ALREADY]} already imported, "
        f"{counts[SECRET]} refused as secrets, {counts[REFUSED]} refused, "
        f"{counts[ELSEWHERE]} of other projects, {len(report.plan.unreadable)} unreadable"
    )
