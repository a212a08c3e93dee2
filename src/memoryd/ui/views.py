"""The page's JSON answers, each one a call of the library functions the CLI commands use.

Search is ``memoryd recall`` (hit counts are not bumped: looking is not recalling), the
agent's view is ``memoryd context``, the memory list and the problems are
``memoryd inspect``, conflicts and their buttons are ``memoryd conflicts`` and
``memoryd resolve``, and the sync buttons are ``memoryd sync``. Nothing is computed here
that the library already knows; this module only gathers and shapes it for the page.

Every path a request names is checked twice: its root must be one memoryd knows (a
configured root, or the project root the page was started in), and the file must stay
inside that root (:func:`memoryd.safepath.inside`).
"""

from __future__ import annotations

import base64
import dataclasses
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from memoryd.app import App
from memoryd.config.sections import SCOPES, RootConfig
from memoryd.errors import MemorydError, PathError, UsageError
from memoryd.team import ACCEPTED_BY, PROVENANCE, STATUS

log = logging.getLogger(__name__)

MAX_QUERY = 2000
MAX_FILE = 1_000_000  # a memory page shows at most this many bytes of a file
MAX_CHAIN = 20
# frontmatter fields that say where a memory came from, when its writer recorded them (a
# team memory's provenance too: memoryd.team)
ORIGIN = ("source", "extracted_from", "transcript", *PROVENANCE, ACCEPTED_BY, STATUS)
Params = Mapping[str, str]
View = Callable[[App, Params], Any]


class Views:
    """The API the page calls; one library call at a time (the app and index are shared)."""

    def __init__(self, app: App) -> None:
        self.app = app
        self._lock = threading.Lock()

    def get(self, name: str, params: Params) -> Any:
        return self._call(READS, name, params)

    def post(self, name: str, params: Params) -> Any:
        return self._call(WRITES, name, params)

    def _call(self, table: Mapping[str, View], name: str, params: Params) -> Any:
        view = table.get(name)
        if view is None:
            raise LookupError(name)
        with self._lock:
            return view(self.app, params)

    @staticmethod
    def is_write(name: str) -> bool:
        return name in WRITES


# -- reads ----------------------------------------------------------------------------


def overview(app: App, params: Params) -> dict[str, Any]:
    """The header: device, daemon, roots (what every view refers to)."""
    from memoryd.daemon.status import read_status

    view = read_status(app.paths)
    return {
        "device": app.config.device,
        "cwd": str(app.cwd),
        "daemon": {"running": view.running and not view.stale, "pid": view.running_pid},
        "roots": [_root_json(r) for r in known_roots(app)],
    }


def search(app: App, params: Params) -> dict[str, Any]:
    """What ``memoryd recall QUERY`` returns from this folder, with each score's parts."""
    from memoryd.freshness import ensure_fresh, search_roots
    from memoryd.index import recall
    from memoryd.index.hits import read_hits

    query = _query(params, "q")
    limit = _int(params, "limit", None, 1, 100)
    roots = search_roots(app.config, app.cwd)
    with ensure_fresh(app, roots=roots, recompile=True) as db:
        hits = recall(db, app.config, query, roots, limit=limit, bump=False)
    counts = {str(r.path): read_hits(r.path) for r in roots}
    results = []
    for hit in hits:
        item = hit.to_json()
        item["rel"] = _rel(hit.root, hit.path)
        item["ref"] = file_ref(item["rel"])
        item["hit_count"] = counts.get(str(hit.root), {}).get(hit.id, 0)
        results.append(item)
    return {"query": query, "roots": [str(r.path) for r in roots], "hits": results}


def context(app: App, params: Params) -> dict[str, Any]:
    """The exact block ``memoryd context PROMPT`` prints, its size and what was cut."""
    from memoryd.agent.context import gather
    from memoryd.injection import OUTLINE_CUT

    prompt = params.get("q", "")
    if len(prompt) > MAX_QUERY:
        raise UsageError(f"the prompt is longer than {MAX_QUERY} characters")
    block = gather(app, prompt)
    data = block.as_dict()
    data["entries"] = [{**e, **_where_is(app, e["id"])} for e in data["entries"]]
    data.update(
        chars=len(block.text),
        budget=dataclasses.asdict(app.config.injection),  # every injection.* setting in force
        outline_cut=OUTLINE_CUT in block.text,
    )
    return data


def memories(app: App, params: Params) -> dict[str, Any]:
    """One page of the memories of every root, filtered and sorted in the index (SQL), with
    each one's problems: its own (the index's) and the cached inspect result's."""
    from memoryd import inspect_cache
    from memoryd.freshness import freshen
    from memoryd.index.hits import read_hits

    query = _browse_query(params)
    roots = known_roots(app)
    paths = [r.path for r in roots if r.path.is_dir()]
    cached = inspect_cache.load(app.paths)
    if cached is None:
        _refresh_in_background(app)
    findings: dict[str, list[dict[str, str]]] = {}
    for finding in cached.findings if cached else []:
        findings.setdefault(finding["path"], []).append(finding)
    per_file = {Path(p): len(f) for p, f in findings.items()}
    hits = {path: read_hits(path) for path in paths}
    with _browsing:  # one request at a time on the kept connection and its listing
        browser = _browser(app)
        freshen(app, browser.db, roots=roots)  # brought up to date unless a daemon keeps it so
        found = browser.page(
            paths, query, hits=hits, findings=per_file, facets=params.get("facets") == "1"
        )
        counts = browser.counts(paths)  # the listing just made: no second scan
    rows = []
    for item in found.rows:
        file = str(Path(item["root"]) / item["path"])
        item["ref"] = file_ref(item["path"])
        item["problems"] = [
            {"message": p["message"], "fix": "", "code": p["code"]} for p in item["own_problems"]
        ] + [f for f in findings.get(file, []) if f["message"] not in _messages(item)]
        del item["own_problems"]
        rows.append(item)
    return {
        "now": int(time.time() * 1000),
        "total": found.total,
        "offset": query.offset,
        "limit": query.limit,
        "checked_ms": cached.at_ms if cached else None,
        "roots": [{**_root_json(r), "count": counts.get(str(r.path), 0)} for r in roots],
        "facets": found.facets,
        "memories": rows,
    }


_browsers: dict[tuple[str, int], Any] = {}
_browsing = threading.Lock()  # the server answers requests on threads


def _browser(app: App) -> Any:
    """One open index for the list, kept between requests (the listing table it builds
    lasts until the index changes); a new one when the index file was replaced."""
    from memoryd.index import open_index
    from memoryd.index.browse import Browser

    file = app.paths.index_db
    try:
        key = (str(file), file.stat().st_ino)
    except FileNotFoundError:  # no index yet: opening makes it
        key = None
    if key is None or key not in _browsers:
        for old in _browsers.values():
            old.db.close()
        _browsers.clear()
        browser = Browser(open_index(app.paths, check_same_thread=False))
        _browsers[(str(file), file.stat().st_ino)] = browser
        return browser
    return _browsers[key]


def _where_is(app: App, memory_id: str) -> dict[str, str]:
    """The root and file of a memory the agent's block names (for a link to its page)."""
    from memoryd.freshness import search_roots
    from memoryd.locate import find_in

    for root in search_roots(app.config, app.cwd):
        try:
            found = find_in(root, memory_id)
        except MemorydError:
            continue
        if found is not None:
            rel = _rel(root.path, found.path)
            return {"root": str(root.path), "rel": rel, "ref": file_ref(rel)}
    return {}


def _messages(item: dict[str, Any]) -> set[str]:
    return {p["message"] for p in item["own_problems"]}


_refreshing = threading.Lock()


def warm_in_background(app: App) -> None:
    """Open the index the Memories view keeps as the server starts, not when the page first
    asks: opening reads the whole file once after each checkpoint (its integrity check: 0.5 s
    of CPU at 100k memories). Nothing is reconciled or written here (the first request
    does that, as it would have); a request that comes sooner waits (``_browsing``)."""

    def run() -> None:
        try:
            with _browsing:
                _browser(app)
        except Exception:  # the page's own request says what is wrong
            log.debug("memoryd ui: the index was not opened ahead", exc_info=True)

    threading.Thread(target=run, name="memoryd-ui-warm", daemon=True).start()


def _refresh_in_background(app: App) -> None:
    """No cached inspect result (no daemon has stored one yet): run inspect once, off the
    request, so the next page shows its findings."""
    from memoryd.inspect_cache import refresh

    if not _refreshing.acquire(blocking=False):
        return

    def run() -> None:
        try:
            refresh(app)
        except Exception:  # a bug in a check: the log keeps it, the list still answers
            log.exception("memoryd ui: inspect for the memories list failed")
        finally:
            _refreshing.release()

    threading.Thread(target=run, name="inspect-cache", daemon=True).start()


def _browse_query(params: Params) -> Any:
    from memoryd.index.browse import FLAGS, MAX_LIMIT, SORTS, Query

    sort = params.get("sort") or "id"
    if sort not in SORTS:
        raise UsageError(f"sort must be one of {', '.join(SORTS)}, got {sort!r}")
    flag = params.get("flag") or None
    if flag is not None and flag not in FLAGS:
        raise UsageError(f"flag must be one of {', '.join(FLAGS)}, got {flag!r}")
    scope = _scope(params)
    text = params.get("q", "")
    if len(text) > MAX_QUERY:
        raise UsageError(f"the filter is longer than {MAX_QUERY} characters")
    return Query(
        text=text,
        kind=params.get("kind"),
        folder=params.get("folder"),
        scope=scope,
        flag=flag,
        sort=sort,
        desc=params.get("desc") == "1",
        offset=_int(params, "offset", 0, 0, 10**9) or 0,
        limit=_int(params, "limit", 50, 1, MAX_LIMIT) or 50,
    )


def memory(app: App, params: Params) -> dict[str, Any]:
    """One memory's page: frontmatter, body, problems, git history, supersedes chain."""
    from memoryd.memory import parse
    from memoryd.ui.history import file_history
    from memoryd.validation import validate

    root, path, rel = _file(app, params)
    raw = path.read_bytes()
    parsed = parse(raw[:MAX_FILE])
    return {
        "root": str(root.path),
        "scope": root.scope,
        "path": rel,
        "ref": file_ref(rel),
        "id": parsed.id or _id(rel),
        "meta": _shown_meta(parsed.meta),
        "frontmatter": _frontmatter_text(raw[:MAX_FILE]),
        "body": parsed.body,
        "size": len(raw),
        "cut": len(raw) > MAX_FILE,
        "problems": [{"code": p.code, "message": p.message} for p in validate(parsed)],
        "history": [c.as_dict() for c in file_history(root.path, rel)],
        "commits": root.sync.commit,  # else nothing ever commits a file that is not in git
        "origin": {k: str(parsed.meta[k]) for k in ORIGIN if k in parsed.meta},
        **_team(root, parsed.meta),
        "chain": supersedes_chain(root, parsed.id or _id(rel), parsed, rel),
    }


def _team(root: RootConfig, meta: Mapping[str, Any]) -> dict[str, Any]:
    """A team memory's provenance line (``memoryd inspect``'s) and whether it waits for a
    person's accept; nothing for a personal root's memory."""
    if not root.is_team:
        return {}
    from memoryd.team import described, is_proposed

    return {"team": root.team, "by": described(meta), "proposed": is_proposed(meta)}


def _shown_meta(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The frontmatter as JSON, ``created``/``updated`` as UTC dates a person reads (memoryd
    writes them as epoch milliseconds, which the page showed raw)."""
    import datetime as dt

    from memoryd.memory import epoch_ms

    shown: dict[str, Any] = json.loads(json.dumps(meta, default=str, ensure_ascii=False))
    for name in ("created", "updated"):
        stamp = epoch_ms(meta.get(name))
        if stamp is not None and name in shown:
            when = dt.datetime.fromtimestamp(stamp / 1000, dt.UTC)
            shown[name] = when.strftime("%Y-%m-%d %H:%M:%S UTC")
    return shown


def memory_at(app: App, params: Params) -> dict[str, Any]:
    """A memory's text at one commit of its history (the memory page's "show")."""
    from memoryd.ui.history import text_at

    root, _path, rel = _file(app, params)
    commit = _required(params, "commit")
    if len(commit) != 40 or any(c not in "0123456789abcdef" for c in commit):
        raise UsageError(f"commit={commit!r} is not a full commit id")
    return {"commit": commit, "path": rel, "text": text_at(root.path, rel, commit)[:MAX_FILE]}


def conflicts(app: App, params: Params) -> dict[str, Any]:
    """Each pending conflict (``memoryd conflicts``) beside the text at its path; sync state."""
    from memoryd.sync.resolve import all_conflicts
    from memoryd.ui.diff import side_by_side

    found = []
    for c in all_conflicts(app.config):
        local = _text(c.root / c.copy)
        remote = _text(c.root / c.name.original)
        item: dict[str, Any] = dict(c.to_json())
        item.update(local=local, remote=remote, rows=side_by_side(local or "", remote or ""))
        found.append(item)
    return {"conflicts": found, "sync": sync_status(app)}


def problems(app: App, params: Params) -> dict[str, Any]:
    """What ``memoryd inspect`` reports, each problem with its fix and its memory's link;
    the result is stored for the Memories view (memoryd.inspect_cache)."""
    from memoryd.inspect_cache import store
    from memoryd.inspection import inspect

    result = inspect(app)
    found = [f.as_dict() for f in result.findings]
    store(app.paths, len(result.memories), found)
    return {"problems": [_linked(app, f) for f in found], "memories": len(result.memories)}


def _linked(app: App, finding: dict[str, str]) -> dict[str, Any]:
    """A finding with the root and ref of the memory file it is about, when it is one."""
    path = Path(finding["path"])
    for root in known_roots(app):
        if path.suffix == ".md" and path.is_relative_to(root.path) and path.is_file():
            rel = _rel(root.path, path)
            return {**finding, "root": str(root.path), "rel": rel, "ref": file_ref(rel)}
    return dict(finding)


def sync_status(app: App) -> list[dict[str, Any]]:
    """Per configured root: its sync policy and what its last cycles left in the state file."""
    from memoryd.sync.state import ahead_line, load_state, now_ms

    out = []
    for root in app.config.roots:
        state = load_state(app.paths, root.path)
        policy = root.sync
        out.append({
            "root": str(root.path),
            "scope": root.scope,
            "syncs": policy.commit or policy.pull or policy.push,
            "last_sync_ms": state.last_sync_ms or None,
            "last_attempt_ms": state.last_attempt_ms or None,
            "last_status": state.last_status,
            "last_error": state.last_error,
            "not_pushed": state.not_pushed,
            "ahead": ahead_line(state, policy.ahead_warn_s, now_ms()),  # too long: say so
            "paused": state.paused,
            "quarantined": state.quarantined,
            "notices": state.notices[-5:],
        })  # fmt: skip
    return out


# -- writes (POST with the CSRF token only) ---------------------------------------------


def resolve(app: App, params: Params) -> dict[str, Any]:
    """``memoryd resolve ID --keep local|remote|both``."""
    from memoryd.sync.resolve import KEEP, find
    from memoryd.sync.resolve import resolve as settle

    keep = params.get("keep", "")
    if keep not in KEEP:
        raise UsageError(f"keep must be one of {', '.join(KEEP)}, got {keep!r}")
    conflict = find(app.config, _required(params, "id"))
    done = settle(conflict, keep)
    return {"id": conflict.id, "root": str(conflict.root), "keep": keep, "done": done}


def resolve_all(app: App, params: Params) -> dict[str, Any]:
    """``memoryd resolve --all --keep local|remote|both [--root ROOT]``."""
    from memoryd.sync.report import pick_roots
    from memoryd.sync.resolve import KEEP
    from memoryd.sync.resolve import resolve_all as settle_all

    keep = params.get("keep", "")
    if keep not in KEEP:
        raise UsageError(f"keep must be one of {', '.join(KEEP)}, got {keep!r}")
    roots = pick_roots(app.config, Path(params["root"]) if params.get("root") else None)
    settled, left = settle_all([r.path for r in roots], keep)
    return {
        "keep": keep,
        "settled": [{"id": c.id, "root": str(c.root), "done": d} for c, d in settled],
        "left": [{"id": c.id, "root": str(c.root), "why": w} for c, w in left],
    }


def sync(app: App, params: Params) -> dict[str, Any]:
    """``memoryd sync --root ROOT [--allow-mass-delete]``: sync now, or confirm a pause."""
    from memoryd.sync.engine import sync_root
    from memoryd.sync.report import outcome_text, pick_roots

    [root] = pick_roots(app.config, Path(_required(params, "root")))
    allow = params.get("allow_mass_delete") == "true"
    outcome = sync_root(app.config, app.paths, root, allow_mass_delete=allow, force=True)
    return {"ok": outcome.ok, "outcome": outcome.to_json(), "text": outcome_text(outcome)}


def forget(app: App, params: Params) -> dict[str, Any]:
    """``memoryd forget ID --scope SCOPE``, with the command's rules."""
    from memoryd.agent.caller import agent_marker
    from memoryd.agent.forget import forget as remove

    agent = agent_marker(app.env) is not None  # the CLI's rule: an agent never forgets a rule
    gone = remove(app, _required(params, "id"), scope=_scope(params), agent=agent)
    log.info("memoryd ui: forgot %s: removed %s", gone.id, gone.path)
    return gone.as_dict()


def accept(app: App, params: Params) -> dict[str, Any]:
    """``memoryd accept ID --scope SCOPE``: a person turns a rule-proposal into an iron rule,
    or accepts a proposal to the team."""
    from memoryd.agent.accept import accept as make_rule
    from memoryd.agent.caller import refuse_agent

    wanted = _required(params, "id")
    refuse_agent(
        app.env, f"accept {wanted!r}", "turns a proposal into an iron rule",
        f"memoryd accept {wanted}",
    )  # fmt: skip  # the command's refusal (commands/remember.py run_accept)
    outcome = make_rule(app, wanted, scope=_scope(params))
    log.info("memoryd ui: accepted %s as %s", wanted, outcome.id)
    return {**outcome.as_dict(), "warnings": list(outcome.warnings)}


def pin(app: App, params: Params) -> dict[str, Any]:
    """``memoryd pin ID --scope SCOPE [--off]``."""
    from memoryd.agent.pin import pin as set_pin

    wanted, on = _required(params, "id"), params.get("on") == "true"
    done = set_pin(app, wanted, scope=_scope(params), on=on)
    log.info("memoryd ui: %s %s", "pinned" if done.pinned else "unpinned", done.id)
    return done.as_dict()


def _scope(params: Params) -> str | None:
    scope = params.get("scope") or None
    if scope not in (None, *SCOPES):
        raise UsageError(f"scope must be one of {', '.join(SCOPES)}, got {scope!r}")
    return scope


READS: dict[str, View] = {
    "overview": overview,
    "search": search,
    "context": context,
    "memories": memories,
    "memory": memory,
    "memory-at": memory_at,
    "conflicts": conflicts,
    "problems": problems,
}
WRITES: dict[str, View] = {
    "resolve": resolve,
    "resolve-all": resolve_all,
    "sync": sync,
    "forget": forget,
    "accept": accept,
    "pin": pin,
}


# -- helpers ------------------------------------------------------------------------------


def known_roots(app: App) -> list[RootConfig]:
    """The configured roots, plus this folder's project root when config.yaml omits it."""
    from memoryd.locate import active_roots

    roots = list(app.config.roots)
    seen = {r.path for r in roots}
    for root in active_roots(app.config, app.cwd):
        if root.path not in seen:
            roots.append(root)
            seen.add(root.path)
    return roots


def supersedes_chain(
    root: RootConfig, memory_id: str, memory: Any, rel: str
) -> list[dict[str, Any]]:
    """The memories this one replaced (older first), itself, then the ones replacing it."""
    from memoryd.locate import find_in

    def look(ident: str) -> dict[str, Any]:
        try:
            found = find_in(root, ident)
        except MemorydError:
            found = None
        if found is None:
            return {"id": ident, "exists": False, "summary": None, "path": None, "memory": None}
        return {
            "id": ident,
            "exists": True,
            "summary": found.memory.summary,
            "path": _rel(root.path, found.path),
            "memory": found.memory,
        }

    seen = {memory_id}
    older: list[dict[str, Any]] = []
    todo = list(memory.supersedes)
    while todo and len(older) < MAX_CHAIN:
        ident = todo.pop(0)
        if ident in seen:
            continue
        seen.add(ident)
        item = look(ident)
        older.insert(0, item)
        if item["memory"] is not None:
            todo += list(item["memory"].supersedes)
    newer: list[dict[str, Any]] = []
    nxt = memory.superseded_by
    while nxt and nxt not in seen and len(newer) < MAX_CHAIN:
        seen.add(nxt)
        item = look(nxt)
        newer.append(item)
        nxt = item["memory"].superseded_by if item["memory"] is not None else None
    this = {"id": memory_id, "exists": True, "summary": memory.summary, "path": rel, "self": True}
    chain = [*older, this, *newer]
    if len(chain) == 1:
        return []
    return [{k: v for k, v in item.items() if k != "memory"} for item in chain]


def file_ref(rel: str) -> str:
    """A root-relative name as the page passes it back: its bytes, base64url.

    A file name need not be UTF-8 (``caf\\xe9.md``); the page cannot send such a name back
    as text, so links carry its bytes.
    """
    return base64.urlsafe_b64encode(os.fsencode(rel)).decode("ascii")


def from_ref(ref: str) -> str:
    try:
        return os.fsdecode(base64.urlsafe_b64decode(ref.encode("ascii")))
    except ValueError:
        raise UsageError(f"ref={ref!r} is not a file reference from this page") from None


def _root_json(root: RootConfig) -> dict[str, Any]:
    return {
        "path": str(root.path),
        "scope": root.scope,
        "layout": root.layout,
        "exists": root.path.is_dir(),
    }


def _file(app: App, params: Params) -> tuple[RootConfig, Path, str]:
    """The known root and the file inside it that the request names (else PathError)."""
    from memoryd import safepath

    wanted = _required(params, "root")
    rel = from_ref(params["ref"]) if params.get("ref") else _required(params, "path")
    for root in known_roots(app):
        if str(root.path) == wanted:
            break
    else:
        raise PathError(
            f"{wanted} is not a memory root memoryd knows",
            hint="open memories from the Memories view",
        )
    path = safepath.inside(root.path, rel)
    if not path.is_file():
        raise PathError(f"no file {rel} in {root.path}", hint="the Memories view lists them")
    return root, path, rel


def _frontmatter_text(raw: bytes) -> str:
    from memoryd.memory import CLOSING, is_fence

    text = raw.decode("utf-8", "replace").removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or not is_fence(lines[0]):
        return ""
    for n, line in enumerate(lines[1:], start=1):
        if is_fence(line, CLOSING):
            return "".join(lines[1:n])
    return ""


def _text(path: Path) -> str | None:
    try:
        return path.read_bytes()[:MAX_FILE].decode("utf-8", "replace")
    except OSError:
        return None


def _mtime_ms(path: Path) -> int | None:
    try:
        return path.stat().st_mtime_ns // 1_000_000
    except OSError:
        return None


def _rel(root: Path, path: Path) -> str:
    from memoryd.roots import relative_id

    return relative_id(root, path)


def _id(rel: str) -> str:
    from memoryd.memory import id_for_path

    return id_for_path(rel)


def _required(params: Params, name: str) -> str:
    value = params.get(name, "")
    if not value:
        raise UsageError(f"the request needs {name}=")
    return value


def _query(params: Params, name: str) -> str:
    value = params.get(name, "").strip()
    if not value:
        raise UsageError("type something to search for", hint="a word, in any language")
    if len(value) > MAX_QUERY:
        raise UsageError(f"the query is longer than {MAX_QUERY} characters")
    return value


def _int(params: Params, name: str, default: int | None, low: int, high: int) -> int | None:
    raw = params.get(name)
    if raw in (None, ""):
        return default
    try:
        value = int(raw)
    except ValueError:
        raise UsageError(f"{name} must be a whole number, got {raw!r}") from None
    if not low <= value <= high:
        raise UsageError(f"{name} must be between {low} and {high}, got {value}")
    return value
