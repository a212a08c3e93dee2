"""The per-turn injection block read from the disk: what `memoryd context` prints.

:mod:`memoryd.injection` builds the block from its inputs (pure); this reads them: each
root's compiled ROOT.md blocks and goal, and the best recall hits for the prompt, with
the stale citations of each hit checked against the caller's working tree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from memoryd.injection import Block, RootBlocks, Shown
from memoryd.injection_session import Given, block_for
from memoryd.oversize import not_loaded

if TYPE_CHECKING:
    from pathlib import Path

    from memoryd.app import App
    from memoryd.index.search import Hit


def gather(
    app: App, query: str, max_chars: int | None = None, max_entries: int | None = None,
    *, given: Given | None = None,
) -> Block:  # fmt: skip
    """Read the roots' compiled blocks and the best hits for ``query``, then build the block
    (``given``: what the session already holds, left out)."""
    from memoryd import locate
    from memoryd.agent import upkeep
    from memoryd.agent.query import prompt_query
    from memoryd.compile import markers

    settings = app.config.injection
    chars = settings.max_chars if max_chars is None else max_chars
    entries = settings.max_entries if max_entries is None else max_entries
    roots = locate.active_roots(app.config, app.cwd)
    hits: list[Shown] = []
    searched = prompt_query(query) if query.strip() and entries > 0 else None
    with upkeep.freshen(app, roots) as db:  # opened once: every open checks the database
        views = [
            RootBlocks(r.scope, str(r.path), markers.root_blocks(r.path), upkeep.root_goal(r))
            for r in roots
        ]
        if searched is not None:
            found = upkeep.search(
                app, roots, searched.text, limit=entries * 2, count_hits=False, db=db
            )
            found = [h for h in found if not is_conflict_file(h.path, h.root)]
            cap = app.config.search.max_file_bytes
            hits = [Shown(h.id, h.scope, h.kind, h.summary, shown_body(h, cap)) for h in found]
            hits = _checked(app, hits, [h.path for h in found])
    block = block_for(
        views, hits, chars, entries, settings.outline_chars,
        total_chars=settings.max_total_chars, query=searched, given=given,
    )  # fmt: skip
    late = _ahead(app, roots)
    if late:  # writes that stay on this device: the agent says so rather than assume synced
        block = replace(block, text=block.text.replace("</memory>\n", late + "</memory>\n"))
    missing = [(r.scope, str(r.path)) for r in roots if not r.path.is_dir()]
    return replace(block, missing=missing) if missing else block


def _ahead(app: App, roots: Sequence[Any]) -> str:
    """A line per root ahead of its remote for longer than ``sync.ahead_warn_s``."""
    from memoryd.sync.state import ahead_line, all_states, now_ms

    states = {state.root: state for state in all_states(app.paths)}
    lines = []
    for root in roots:
        state = states.get(str(root.path))
        said = ahead_line(state, root.sync.ahead_warn_s, now_ms()) if state else None
        lines += [f"(memoryd: {said}; the user can run 'memoryd status')\n"] if said else []
    return "".join(lines)


def is_conflict_file(path: Path, root: Path) -> bool:
    """A conflict copy or CONFLICTS.md: a version waiting for ``resolve``, or the list of
    them, never a memory to follow (``memoryd conflicts`` and recall still show them)."""
    from memoryd.index.layout import is_copy
    from memoryd.roots import CONFLICTS_FILE

    relative = path.relative_to(root).as_posix()
    return relative == CONFLICTS_FILE or is_copy(relative)


def shown_body(hit: Hit, cap: int) -> str:
    """A hit's body, or for a file over the size cap (whose body is not indexed) the line
    saying so: an empty body read as a memory that holds nothing more than its summary."""
    if hit.oversized and hit.row is not None:
        return not_loaded(hit.path, hit.row.size, cap)
    return hit.body


def _checked(app: App, shown: list[Shown], paths: list[Any]) -> list[Shown]:
    """``shown`` with the stale citations of each memory that may cite (see cites.may_cite)."""
    from memoryd.cites import may_cite

    if not any(may_cite(path) for path in paths):
        return shown
    from memoryd.agent.citing import Checker, stale_reasons

    checker = Checker(app.cwd)
    return [
        replace(entry, stale=tuple(stale_reasons(checker.of_file(path))))
        for entry, path in zip(shown, paths, strict=True)
    ]
