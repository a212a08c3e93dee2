"""The lean ``memoryd recall``: the common case answered with almost no imports.

An agent runs ``memoryd recall`` many times a session, and most of what the full CLI
imports (argparse, logging, pathlib, dataclasses, PyYAML, the config's classes, the
reconcile) is not needed to answer it: a bare Python that opens the index and runs
the query costs a fifth of what the full path did. This path parses the usual command
lines itself, reads config.yaml's snapshot (:mod:`memoryd.config.snapshot`), checks
that the index is fresh (a daemon holds its lock, or every file's fingerprint matches
its row), and then fetches, ranks, explains and counts hits with the same functions
as the full path (:mod:`memoryd.index.fetch`, :mod:`~memoryd.index.ranking`,
:mod:`~memoryd.index.snippet`, :mod:`~memoryd.index.hits`, :mod:`~memoryd.index.hitview`).

:func:`answer` takes the command line, the environment and the working folder and returns
the exit code and the texts, so the daemon can give a client exactly this answer over its
socket (:mod:`memoryd.daemon.recall_server`); :func:`run` prints them. Whenever anything
is not the common case, both return None before they have written or changed anything,
and the full CLI answers instead: an option it does not
parse, help, a usage error, no snapshot (config.yaml new, changed or broken, or written
for other folders), no ``MEMORYD_HOME`` on a system other than Linux (platformdirs
decides there), a root that is missing or of another layout, an index that is not
checked or of another version, a file changed since it was indexed, a hit that is a
conflict copy, may cite code or has frontmatter that does not parse, an unreadable
``.state.json``, any exception. So every error text and every rare option stays the full
CLI's, and tests/test_lean_recall.py holds both paths to the same bytes.
"""

from __future__ import annotations

import os
import sqlite3
import time

from memoryd.config import snapshot as config_snapshot
from memoryd.homedirs import folders

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any, TextIO

    from memoryd.index.fetch import Found

VALUE_OPTIONS = ("--limit", "--kind", "--scope", "--markers", "--project")
SCOPES = ("global", "project")
MARKS = ("plugin", "layered")
BUSY_TIMEOUT_MS = 10_000


class Fallback(Exception):
    """Not the common case: the full CLI answers."""


class _Root:
    __slots__ = ("given", "layout", "listed", "path", "scope")

    def __init__(self, path: str, layout: str, scope: str, listed: bool, given: str) -> None:
        self.path, self.layout, self.scope, self.listed, self.given = (
            path, layout, scope, listed, given
        )  # fmt: skip


class _Unloaded:
    """What :mod:`memoryd.index.hitview` reads of the row of a plugin file over
    ``search.max_file_bytes`` (its body is not indexed: the text and JSON say so)."""

    __slots__ = ("size",)
    layout = "plugin"  # no layout, type or scope id to show
    type = None
    scope_id = None
    oversized = True

    def __init__(self, size: int) -> None:
        self.size = size


class _Hit:
    """A recalled memory, with what :mod:`memoryd.index.hitview` shows (a plugin row)."""

    __slots__ = (
        "body", "id", "kind", "load_when", "parts", "path", "root", "row", "scope", "score",
        "snippet", "summary", "terms",
    )  # fmt: skip

    def __init__(self, values: Sequence[Any]) -> None:
        (self.path, self.root, self.scope, self.id, self.kind, self.summary,
         load_when, self.body) = values  # fmt: skip
        self.row: _Unloaded | None = None  # plugin rows: only an oversized one needs it
        self.load_when = tuple(load_when.split("\n")) if load_when else ()
        self.score = 0.0
        self.parts: dict[str, float] = {}
        self.terms: dict[str, int] = {}
        self.snippet = ""

    layout = "plugin"  # the lean path answers for plugin roots only

    @property
    def oversized(self) -> bool:
        return self.row is not None  # only an oversized hit gets its row (_Unloaded)

    def conflict(self) -> dict[str, str]:
        return {}  # a conflict copy goes down the full path


class _Index:
    __slots__ = ("conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn


def run(argv: Sequence[str], env: Mapping[str, str], out: TextIO, err: TextIO) -> int | None:
    """Answer ``memoryd recall ARGV...`` (the words after ``recall``) on ``out`` and
    ``err``, or return None having done nothing, for the full CLI to answer."""
    try:
        cwd = os.getcwd()
    except OSError:  # a folder deleted under the shell: the full path's error
        return None
    try:
        answered = answer(argv, env, cwd)
    except KeyboardInterrupt:  # as memoryd.cli reports it
        err.write("memoryd: interrupted\n")
        if "--json" in argv:
            import json

            out.write(json.dumps({"error": "interrupted", "hint": None, "exit": 130}) + "\n")
        return 130
    if answered is None:
        return None
    code, text, note = answered
    if text:
        out.write(text)
    if note:
        err.write(note)
    return code


class Kept:
    """Index connections kept open between answers, one per index file (the daemon's).

    A new connection parses the schema and starts with an empty page cache, which at 100k
    memories costs more than the query. A kept one is used again only while the file is
    the one that passed ``quick_check`` when it was opened (the ``.checked`` identity);
    the schema checks of :func:`_open` still run for every answer, since a reset can land
    in the WAL without touching the main file. Use it from one thread; :meth:`close` ends it.
    """

    def __init__(self) -> None:
        self.held: dict[str, tuple[str, sqlite3.Connection]] = {}

    def close(self) -> None:
        for _identity, conn in self.held.values():
            conn.close()
        self.held.clear()


def answer(
    argv: Sequence[str], env: Mapping[str, str], cwd: str,
    check: Callable[[str, str], bool] | None = None, kept: Kept | None = None,
) -> tuple[int, str, str] | None:  # fmt: skip
    """(exit code, stdout, stderr) of ``memoryd recall ARGV...`` run in ``cwd`` with the
    environment ``env``, hits counted; or None having done nothing (the full CLI answers).

    The recall socket's server (:mod:`memoryd.daemon.recall_server`) calls this with a
    client's command line, folder and environment, ``check``: asked with stdout and
    the note before any hit is counted, False declines (a text the client's streams
    could not write), and ``kept``: its open connections (:class:`Kept`).
    """
    try:
        args = _parse(argv)
        hits, text, note = _answer(args, env, cwd, kept)
        if text and not text.endswith("\n"):
            text += "\n"
        if check is not None and not check(text, note):
            return None
    except Exception:  # Fallback, or anything unforeseen: the full path knows what to say
        return None
    return 0, text, _bump(hits) + note


def _parse(argv: Sequence[str]) -> dict[str, Any]:
    """The command line, when it is one this path parses exactly as argparse would."""
    args: dict[str, Any] = {"json": False, "words": []}
    words: list[str] = args["words"]
    ended = False  # the words are one run: argparse takes only the first run of them
    items = iter(argv)
    for item in items:
        if not item.startswith("-"):
            if ended:
                raise Fallback
            words.append(item)
            continue
        if words:
            ended = True
        if item == "--json":
            args["json"] = True
            continue
        if item not in VALUE_OPTIONS:
            raise Fallback  # help, --, abbreviations, the other layouts' options, ...
        value = next(items, None)
        if value is None or value.startswith("-"):
            raise Fallback
        args[item[2:]] = value
    if not words:
        raise Fallback
    if "limit" in args:
        limit = int(args["limit"])
        if limit < 1:
            raise Fallback
        args["limit"] = limit
    if args.get("scope", "global") not in SCOPES or args.get("markers", "plugin") not in MARKS:
        raise Fallback
    return args


def _answer(
    args: Mapping[str, Any], env: Mapping[str, str], cwd: str, kept: Kept | None = None
) -> tuple[list[_Hit], str, str]:
    from memoryd.index.tokenizer import read_query

    query = " ".join(args["words"])
    forms, dates = read_query(query)
    if not forms:
        raise Fallback  # the usage error is the full path's
    dirs = folders(env)
    if dirs is None:
        raise Fallback  # platformdirs decides, or the full path's error
    config_dir, cache_dir, state_dir = dirs
    snapshot = config_snapshot.read(cache_dir, os.path.join(config_dir, "config.yaml"))
    if snapshot is None:
        raise Fallback
    if snapshot.get("located") != config_snapshot.located(env, config_dir, cache_dir, state_dir):
        raise Fallback  # written for other folders or another environment
    if snapshot["search"].get("semantic"):
        raise Fallback  # the embedding stage loads a model: the full path's
    project = os.path.join(cwd, args["project"]) if "project" in args else None
    roots = _search_roots(snapshot, cwd, project)
    if any(r.layout != "plugin" or not os.path.isdir(r.path) for r in roots):
        raise Fallback
    file = os.path.join(cache_dir, "index.sqlite3")
    conn = _open(file, snapshot) if kept is None else _kept(kept, file, snapshot)
    try:
        _fresh(conn, roots, [r for r in roots if r.listed], os.path.join(state_dir, "daemon.lock"))
        hits = _recall(conn, snapshot, forms, roots, args, dates=dates, once=kept is None)
    finally:
        if kept is None:
            conn.close()
    if args["json"]:
        import json

        from memoryd.index.hitview import to_json

        text = json.dumps([to_json(h) for h in hits], ensure_ascii=False, indent=2, default=str)
    else:
        from memoryd.index.hitview import text as as_text

        cap = snapshot["search"]["max_file_bytes"]
        text = as_text(hits, {h.path: [] for h in hits}, cap)
    note = ""
    if not hits:
        from memoryd.index.hitview import no_match

        searched = {r.given for r in roots}
        if any(s == "project" and g not in searched for g, _, _, s in snapshot["roots"]):
            raise Fallback  # another project's root may match: the full path says so
        scope = args.get("scope")
        note = no_match(query, [r.path for r in roots if scope in (None, r.scope)]) + "\n"
    return hits, text, note


def _search_roots(snapshot: Mapping[str, Any], cwd: str, project: str | None) -> list[_Root]:
    """memoryd.rootfs.search_roots on the snapshot's roots."""
    from memoryd.rootfs import search_roots

    listed = []
    for given, resolved, layout, scope in snapshot["roots"]:
        if os.path.realpath(given) != resolved:
            raise Fallback  # a link on the way moved: the full path resolves it again
        listed.append(_Root(resolved, layout, scope, True, given))
    if len({r.path for r in listed}) != len(listed):
        raise Fallback
    return search_roots(
        listed, cwd, project, _path_of, lambda own: _Root(own, "plugin", "project", False, own)
    )


def _path_of(root: _Root) -> str:
    return root.path


def _open(file: str, snapshot: Mapping[str, Any]) -> sqlite3.Connection:
    """The index, when it is one the full path would open as it is (checked, current)."""
    _checked(file)
    return _connect(file, snapshot)


def _connect(file: str, snapshot: Mapping[str, Any]) -> sqlite3.Connection:
    """A connection to ``file`` (already :func:`_checked`), when its schema is current."""
    conn = sqlite3.connect(file, isolation_level=None)
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        _current(conn, snapshot)
    except BaseException:
        conn.close()
        raise
    return conn


def _kept(kept: Kept, file: str, snapshot: Mapping[str, Any]) -> sqlite3.Connection:
    """:func:`_open`'s answer, from ``kept`` while the file is the one it was opened on."""
    identity = _checked(file)
    held = kept.held.get(file)
    if held is not None and held[0] == identity:
        _current(held[1], snapshot)
        return held[1]
    conn = _connect(file, snapshot)
    if held is not None:
        held[1].close()
    kept.held[file] = (identity, conn)
    return conn


def _checked(file: str) -> str:
    """The identity of ``file`` when it is the file that last passed ``quick_check``."""
    try:
        st = os.stat(file)
        with open(file + ".checked", "rb") as handle:  # a text file would load a codec
            checked = handle.read().decode("ascii")
    except (OSError, ValueError) as exc:
        raise Fallback from exc
    if checked != f"{st.st_size} {st.st_mtime_ns} {st.st_ctime_ns} {st.st_ino}\n":
        raise Fallback  # not the file that last passed quick_check
    return checked


def _current(conn: sqlite3.Connection, snapshot: Mapping[str, Any]) -> None:
    """Fall back unless the index is memoryd's, of the snapshot's version, in WAL mode."""
    (app_id,), (version,), (journal,) = (
        conn.execute(f"PRAGMA {name}").fetchone()
        for name in ("application_id", "user_version", "journal_mode")
    )
    expected = (snapshot["application_id"], snapshot["user_version"], "wal")
    if (app_id, version, journal) != expected:
        raise Fallback


def _fresh(conn: sqlite3.Connection, roots: list[_Root], listed: list[_Root], lock: str) -> None:
    """Fall back unless a reconcile of ``roots`` would change nothing
    (:mod:`memoryd.index.staleness`'s rules, as memoryd.freshness.ensure_fresh applies them)."""
    from memoryd.index.staleness import foreign_rows, to_check
    from memoryd.runlock import running_pid

    daemon = running_pid(lock) is not None
    empty = daemon and conn.execute("SELECT 1 FROM memories LIMIT 1").fetchone() is None
    wanted = to_check(roots, lambda root: root.listed, daemon=daemon, empty=empty)
    if not wanted:
        return
    for root in wanted:
        _unchanged(conn, root)
    keep = {r.path for r in [*listed, *wanted]}  # reconcile's foreign-root sweep
    if foreign_rows(conn, keep, first=True):
        raise Fallback


def _unchanged(conn: sqlite3.Connection, root: _Root) -> None:
    """Fall back unless every file of ``root`` has a row with its fingerprint
    (:func:`~memoryd.index.staleness.fresh_row`) and no row lacks a file (reconcile's
    no-change case)."""
    from memoryd.index.staleness import FINGERPRINT_SQL, fresh_row
    from memoryd.rootfs import walk_files

    unlisted: list[str] = []
    files = walk_files(root.path, unlisted=unlisted)
    known = {row[0]: row for row in conn.execute(FINGERPRINT_SQL.format(more=""), (root.path,))}
    if unlisted or len(files) != len(known):
        raise Fallback
    stat, row_of = os.stat, known.get
    for path in files:
        row = row_of(path)
        if row is None:  # a new file (or a name that is not UTF-8: never indexed, reported)
            raise Fallback
        st = stat(path)
        if not fresh_row(row, st.st_size, st.st_mtime_ns):
            raise Fallback


def _recall(
    conn: sqlite3.Connection,
    snapshot: Mapping[str, Any],
    forms: dict[str, str],
    roots: list[_Root],
    args: Mapping[str, Any],
    *,
    dates: Sequence[tuple[int, int]] = (), once: bool = True,
) -> list[_Hit]:
    """memoryd.index.search.recall for plugin roots, with the same functions (``once``: for
    one recall, so hits.hit_reader reads the counts asked for, not every count)."""
    from types import SimpleNamespace  # (memoryd.index loaded types)

    from memoryd.index.hits import hit_lookup, hit_reader
    from memoryd.index.pick import pick
    from memoryd.index.snippet import MARKERS, explain

    settings = SimpleNamespace(**snapshot["search"])  # ranking reads attributes
    limit: int = args.get("limit") or settings.limit
    scope = args.get("scope")
    roots = [r for r in roots if scope is None or r.scope == scope]
    if not roots:
        return []
    filters = {"kind": args.get("kind"), "type": None, "scope_id": None}
    counts = {r.path: (hit_reader if once else hit_lookup)(r.path, strict=True) for r in roots}
    kept = pick(
        _Index(conn), forms, roots, filters, limit, settings, counts, int(time.time() * 1000),
        dates=dates, admit=_plugin_only,
    )  # fmt: skip
    marks = MARKERS[args.get("markers", "plugin")]
    hits = []
    for total, f, parts in kept:
        c = f.candidate  # it holds the whole row (memoryd.index.fetch)
        hit = _Hit((c.path, c.root, c.scope, c.id, c.kind, c.summary, c.load_when, c.body))
        if ".conflict-" in hit.path[len(hit.root) :] or _may_cite(hit.path):
            raise Fallback  # conflict copies and citations: the full path shows them
        if c.problems and '"frontmatter.' in c.problems:
            raise Fallback  # frontmatter that does not parse: the full path warns of it
        if c.oversized:
            hit.row = _Unloaded(c.size or 0)  # (None only in a candidate made by hand)
        hit.score, hit.parts = total, parts
        hit.terms, hit.snippet = explain(forms, hit, marks)
        hits.append(hit)
    return hits


def _plugin_only(found: Sequence[Found]) -> None:
    if any(f.candidate.layout != "plugin" for f in found):
        raise Fallback  # the full path filters other layouts' rows by project and session


def _may_cite(path: str) -> bool:
    from memoryd.cites import may_cite

    return may_cite(path)  # type: ignore[arg-type]


def _bump(hits: list[_Hit]) -> str:
    """Count the hits (:func:`memoryd.index.hits.bump_each`, as the full path does); the
    full path's warning lines for the roots where that failed."""
    if not hits:
        return ""
    from memoryd.index.hits import bump_each

    return "".join(f"memoryd: WARNING: {warning}\n" for warning in bump_each(hits))
