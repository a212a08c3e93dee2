"""``memoryd recall QUERY``: search the global root and this project's root."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from memoryd.app import App
from memoryd.commands import add_json
from memoryd.config.sections import SCOPES


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser("recall", help="search memories (global root + this project's root)")
    parser.add_argument("query", nargs="+", help="words to look for (any language)")
    parser.add_argument("--limit", type=int, default=None, metavar="N", help="at most N results")
    parser.add_argument("--kind", default=None, metavar="K", help="only memories of this kind")
    parser.add_argument("--scope", choices=SCOPES, default=None)
    parser.add_argument(
        "--type",
        default=None,
        metavar="T",
        help="layered/claude layouts: only this type (memory, checkpoint, progress, notes, "
        "free; user, feedback, project, reference)",
    )
    parser.add_argument(
        "--scope-id", default=None, metavar="ID", help="layered/claude layouts: only this scope id"
    )
    parser.add_argument(
        "--everywhere",
        action="store_true",
        help="layered/claude layouts: every project's and session's folders, not only this "
        "project's, this session's and the global ones",
    )
    parser.add_argument(
        "--markers",
        choices=("plugin", "layered"),
        default="plugin",
        help="how snippets mark matches: «plugin» or <<layered>>",
    )
    parser.add_argument(
        "--project", default=None, metavar="DIR", help="search this project instead of the cwd's"
    )
    add_json(parser)
    parser.set_defaults(handler=run)


def run(app: App, args: argparse.Namespace) -> int:
    from memoryd.errors import UsageError
    from memoryd.freshness import ensure_fresh, search_roots
    from memoryd.index import hitview, recall
    from memoryd.index.tokenizer import query_terms
    from memoryd.layouts.visible import visible_for

    if args.limit is not None and args.limit < 1:
        raise UsageError("--limit must be at least 1", hint="for example --limit 5")
    query = " ".join(args.query)
    if not query_terms(query):
        raise UsageError(
            f"the query {query!r} has no word to search for",
            hint="give one or more words, e.g. memoryd recall sqlite lockfile",
        )
    project = app.cwd / Path(args.project) if args.project else None
    roots = search_roots(app.config, app.cwd, project)
    wanted = [root for root in roots if args.scope in (None, root.scope)]
    if not all(root.path.is_dir() for root in wanted):  # locate is not on the lean path
        from memoryd.locate import refuse_missing

        refuse_missing(app, wanted, "nothing was searched")
    # another layout's folders: this project's and session's only, unless asked for more
    everywhere = args.everywhere or args.scope_id
    visible = None if everywhere else visible_for(project or app.cwd, app.env)
    hidden = False  # nothing here, but other projects' or sessions' folders match
    with ensure_fresh(app, roots=roots, recompile=True) as db:
        hits = recall(db, app.config, query, roots, limit=args.limit, kind=args.kind,
                      scope=args.scope, type=args.type, scope_id=args.scope_id,
                      markers=args.markers, visible=visible)  # fmt: skip
        if not hits and visible is not None and any(r.layout != "plugin" for r in roots):
            hidden = bool(recall(db, app.config, query, roots, limit=1, kind=args.kind,
                                 scope=args.scope, type=args.type, bump=False))  # fmt: skip
    verdicts = _verdicts(app, hits)
    data = [_with_cites(h.to_json(), verdicts[h.path]) for h in hits]
    app.emit(
        args.json, data, lambda: hitview.text(hits, verdicts, app.config.search.max_file_bytes)
    )
    _warn_malformed(app, hits)
    if app.lost is not None and args.project is None:
        app.note(f"memoryd: warning: {app.lost}")
    if not hits:
        shown = [r for r in roots if args.scope in (None, r.scope)]  # what was searched
        where = ", ".join(str(r.path) for r in shown) or "no roots"
        others = [] if hidden else _other_projects(app, args, query, roots)
        if others:
            app.note(f"no memory matches {query!r} (searched {where}), but {_elsewhere(others)}")
        elif hidden:
            app.note(
                f"no memory of this project matches {query!r} (searched {where}), but "
                "other projects' or sessions' Claude Code or MiMo Code memories do: "
                "add --everywhere to see them"
            )
        else:
            app.note(hitview.no_match(query, [str(r.path) for r in shown]))
    from memoryd.config import snapshot as config_snapshot
    from memoryd.index.schema import APPLICATION_ID, USER_VERSION

    index = (APPLICATION_ID, USER_VERSION)
    config_snapshot.write(app.paths, app.env, index)  # the next recall can take the lean path
    return 0


def _warn_malformed(app: App, hits: list[Any]) -> None:
    """A line for each hit whose frontmatter does not parse: it was found by its text
    alone (its kind, summary and pin are not read), and only inspect said so."""
    for hit in hits:
        for problem in hit.problems:
            if problem.code.startswith("frontmatter."):
                app.note(
                    f"memoryd: warning: {hit.path}: {problem.message}; "
                    "fix the YAML between the '---' lines at the top of the file"
                )


def _other_projects(
    app: App, args: argparse.Namespace, query: str, searched: list[Any]
) -> list[Any]:
    """The other registered project roots where ``query`` finds something (none of them
    shown): asked only when nothing here matched, so the user is not sent rewording a query
    that is fine. They are brought up to date first, as a recall there would."""
    from memoryd.freshness import ensure_fresh
    from memoryd.index import recall

    if args.scope == "global":
        return []
    others = [
        r for r in app.config.roots
        if r.scope == "project" and r.layout == "plugin" and r not in searched and r.path.is_dir()
    ]  # fmt: skip
    if not others:
        return []
    with ensure_fresh(app, roots=others, recompile=True) as db:
        return [
            r for r in others
            if recall(db, app.config, query, [r], limit=1, kind=args.kind, bump=False)
        ]  # fmt: skip


def _elsewhere(others: list[Any]) -> str:
    """Where else the query matches, and how to search there."""
    named = ", ".join(str(r.path) for r in others[:3]) + (", ..." if others[3:] else "")
    project = f"--project {others[0].path.parent}"
    if len(others) == 1:
        return f"another project's root does ({named}): search it with {project}"
    return f"{len(others)} other projects' roots do ({named}): search one with {project}"


def _verdicts(app: App, hits: list[Any]) -> dict[Path, list[Any]]:
    """Each hit's citations checked (the machinery loads only when a hit may cite)."""
    from memoryd.cites import may_cite

    verdicts: dict[Path, list[Any]] = {h.path: [] for h in hits}
    cited = [h for h in hits if may_cite(h.path)]
    if cited:
        from memoryd.agent.citing import Checker

        checker = Checker(app.cwd)
        verdicts.update({h.path: checker.of_file(h.path) for h in cited})
    return verdicts


def _with_cites(data: dict[str, Any], verdicts: list[Any]) -> dict[str, Any]:
    """A hit's JSON with its citations checked: ``stale`` says whether any failed."""
    if verdicts:
        data["cites"] = [v.to_json() for v in verdicts]
        data["stale"] = any(v.stale for v in verdicts)
    return data
