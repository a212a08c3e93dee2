"""The one seam between the agent tools and the subsystems they lean on.

Remember, forget, accept and context call the search index, the compiler and
the secret scanner only through these functions, so each dependency has one
place where its interface is used.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from memoryd.app import App
from memoryd.config.sections import RootConfig
from memoryd.roots import ROOT_FILE

if TYPE_CHECKING:  # the index and the scanner are imported lazily, where they are used
    from memoryd.index.db import IndexDB, Row
    from memoryd.index.search import Hit
    from memoryd.secrets.scanner import SecretFinding


def refresh(app: App, root: RootConfig, changed: Iterable[Path]) -> list[str]:
    """Bring the compiled files and the index up to date with ``changed`` files of ``root``.

    Returns what kept ROOT.md from being compiled (damaged markers, say), each with its
    fix: the memory is saved, but a new iron rule does not reach ROOT.md until then.
    """
    from memoryd.compile.writer import kept_cache
    from memoryd.freshness import compile_and_index
    from memoryd.index import open_index

    paths = sorted(set(changed))
    with open_index(app.paths) as db:
        cache = kept_cache(app.paths.cache_dir)
        report = compile_and_index(db, app.config, root, paths, cache, also=paths)
    root_md = root.path / ROOT_FILE
    return [p.text() for p in report.problems if p.path == root_md]


def refresh_written(app: App, root: RootConfig, changed: Iterable[Path]) -> list[str]:
    """:func:`refresh` after a change already on disk: a failure then is one more warning.
    The memory changed, so the command says so and what failed, never exit 1 (an agent told
    a write failed retries it, and is refused as a duplicate of itself)."""
    try:
        return refresh(app, root, changed)
    except OSError as exc:
        where = exc.filename or root.path
        return [
            f"{exc.strerror}: {where}; make it writable (ls -ld {where} shows who may "
            "write there), then run 'memoryd compile'"
        ]


def search(
    app: App,
    roots: Sequence[RootConfig],
    query: str,
    *,
    limit: int,
    kind: str | None = None,
    scope: str | None = None,
    type: str | None = None,
    scope_id: str | None = None,
    count_hits: bool = True,
    db: IndexDB | None = None,
    everywhere: bool = False,
) -> list[Hit]:
    """Recall over ``roots`` (reconciled first unless a daemon keeps the index fresh).

    ``type`` and ``scope_id`` filter the layered and claude layouts' rows (as
    ``memoryd recall --type/--scope-id`` do); a plugin memory has neither, so
    either filter leaves plugin memories out.
    Unless ``scope_id`` names one (or ``everywhere``), only the caller's own project and
    session folders of those layouts are searched (:func:`memoryd.layouts.visible.visible_for`).
    ``db``: the index the caller has just freshened (see :func:`freshen`); it stays
    open, so the index is opened and checked once. Compiled files
    (ROOT.md, index.md) give the full-text index no text: recall never returns them.
    """
    from memoryd.freshness import ensure_fresh
    from memoryd.index import recall
    from memoryd.layouts.visible import visible_for

    visible = None if scope_id or everywhere else visible_for(app.cwd, app.env)
    index = ensure_fresh(app, roots=roots, recompile=True) if db is None else db
    try:
        found = recall(
            index, app.config, query, roots, limit=limit, kind=kind,
            scope=scope, type=type, scope_id=scope_id, bump=count_hits, visible=visible,
        )  # fmt: skip
    finally:
        if db is None:
            index.close()
    return found


def terms(text: str) -> set[str]:
    """The search terms of ``text`` (stop words left out), tokenized exactly as the index
    does."""
    from memoryd.index.duplicates import content_terms

    return content_terms(text)


def query_words(text: str) -> dict[str, str]:
    """The distinct search terms of a query, first seen first, each with its word as
    written: what recall searches ``text`` for."""
    from memoryd.index.tokenizer import query_words as words

    return words(text)


def covering(
    app: App, roots: Sequence[RootConfig], text: str, share: float, db: IndexDB | None = None
) -> list[tuple[Row, float]]:
    """Every current memory holding at least ``share`` of ``text``'s terms, largest share
    first: relevance alone (no decay, floor or top-k), after a reconcile as :func:`search`
    (or in ``db``, an index the caller has just freshened and keeps open)."""
    from memoryd.freshness import ensure_fresh
    from memoryd.index.duplicates import covering as find

    if db is not None:
        return find(db, roots, text, share)
    with ensure_fresh(app, roots=roots, recompile=True) as fresh:
        return find(fresh, roots, text, share)


def secrets(text: str, root: Path) -> list[SecretFinding]:
    """What the secret scanner finds in ``text`` (allow pragmas and ``root``'s allowlist honoured;
    previews are already redacted)."""
    from memoryd.secrets.scanner import load_allowlist, scan

    return scan(text, allow=load_allowlist(root))


def allowlist_file(root: Path) -> Path:
    """Where ``root``'s allowlist of fingerprints lives (it may not exist yet)."""
    from memoryd.secrets.scanner import ALLOWLIST_FILE

    return root / ALLOWLIST_FILE


def redacted_name(rel: str) -> str:
    """``rel`` with any secret in it shown as its preview (an id can hold a token too)."""
    from memoryd.secrets.scanner import redact_name, scan_name

    return redact_name(rel, scan_name(rel))


def freshen(app: App, roots: Sequence[RootConfig]) -> IndexDB:
    """Without a daemon: reconcile ``roots`` and recompile the ones whose memories changed.

    A full compile parses every file; doing it only when the reconcile saw a change keeps a
    per-prompt ``memoryd context`` cheap. (The daemon does both on every change by itself.)
    Returns the open index, for :func:`search` (the caller closes it).
    """
    from memoryd.freshness import ensure_fresh

    return ensure_fresh(app, roots=roots, recompile=True)


def root_goal(root: RootConfig) -> list[str]:
    """The filled-in "Current goal" section of ``root``'s ROOT.md (empty when there is none)."""
    from memoryd.roots import goal_lines

    try:
        text = (root.path / ROOT_FILE).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    return goal_lines(text.splitlines())
