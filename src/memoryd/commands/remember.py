"""``memoryd remember`` and ``memoryd accept``: write a memory; turn a proposal into a rule."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from memoryd.app import App
from memoryd.commands import add_json
from memoryd.config.sections import SCOPES

PROPOSED_NOTE = (
    "note: proposed to the team: only this device sees it until a person accepts it "
    "(memoryd accept {id})"
)


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser(
        "remember",
        help="write a new memory (refuses secrets, duplicates and existing ids)",
        description="Write <root>/<category>/<slug>.md, then update the index and compiled files.",
    )
    parser.add_argument(
        "body", nargs="?", default=None, metavar="BODY", help="the text, or - for stdin"
    )
    parser.add_argument(
        "--kind", required=True, help="rule, preference, decision, pitfall, fact, ..."
    )
    parser.add_argument("--summary", required=True, help="one line: what to remember")
    parser.add_argument("--id", help="the id (category/name); default: a slug of the summary")
    parser.add_argument(
        "--load-when", action="append", default=[], metavar="WORD",
        help="a routing trigger (repeatable, or several separated by commas)",
    )  # fmt: skip
    parser.add_argument("--highlight", help="the one striking detail")
    parser.add_argument("--pinned", action="store_true", help="never decays in ranking")
    parser.add_argument("--supersedes", metavar="ID", help="the memory this one replaces")
    parser.add_argument("--scope", choices=SCOPES, help="default: project if any")
    parser.add_argument(
        "--force", action="store_true",
        help="write even if it duplicates one, or its new kind looks like a typo of one",
    )  # fmt: skip
    parser.add_argument(
        "--cite", action="append", default=[], metavar="PATH[:A-B]",
        help="a file (and lines) of this project the memory describes (repeatable); "
        "checked whenever the memory is recalled",
    )  # fmt: skip
    parser.add_argument(
        "--agent", action="store_true",
        help="the caller is an agent: kind rule becomes rule-proposal (implied when an agent's "
        "environment marker such as CLAUDECODE or OPENCODE is set)",
    )  # fmt: skip
    add_json(parser)
    parser.set_defaults(handler=run)

    accept = sub.add_parser(
        "accept", help="turn a rule-proposal into an iron rule, or accept a team proposal"
    )
    accept.add_argument("id", metavar="ID")
    accept.add_argument("--scope", choices=SCOPES)
    add_json(accept)
    accept.set_defaults(handler=run_accept)


def run(app: App, args: argparse.Namespace) -> int:
    from memoryd.agent.caller import agent_marker
    from memoryd.agent.remember import Request, remember

    body = _stdin() if args.body == "-" else _given(args.body)
    request = Request(
        kind=args.kind, summary=args.summary, body=body, id=args.id,
        load_when=tuple(args.load_when), highlight=args.highlight, pinned=args.pinned,
        supersedes=args.supersedes, scope=args.scope, force=args.force,
        agent=args.agent or agent_marker(app.env) is not None, cites=tuple(args.cite),
    )  # fmt: skip
    outcome = remember(app, request)
    if outcome.downgraded:
        app.note(
            "note: iron rules are written only by people; saved as a rule-proposal "
            f"(a person accepts it with 'memoryd accept {outcome.id}')"
        )
    if outcome.proposed:
        app.note(PROPOSED_NOTE.format(id=outcome.id))
    for warning in outcome.warnings:
        app.note(f"memoryd: warning: saved, but ROOT.md was not updated: {warning}")
    text = f"remembered {outcome.id} ({outcome.scope}): {outcome.path}"
    if outcome.supersedes:
        text += f"\n  supersedes {outcome.supersedes}"
    app.emit(args.json, outcome.as_dict(), text)
    return 0


def run_accept(app: App, args: argparse.Namespace) -> int:
    from memoryd.agent.accept import accept
    from memoryd.agent.caller import refuse_agent
    from memoryd.locate import normal_id

    memory_id = normal_id(args.id)
    refuse_agent(
        app.env, f"accept {memory_id!r}", "turns a proposal into an iron rule",
        f"memoryd accept {memory_id}",
    )  # fmt: skip
    outcome = accept(app, args.id, scope=args.scope)
    for warning in outcome.warnings:
        app.note(f"memoryd: warning: accepted, but ROOT.md was not updated: {warning}")
    if outcome.kind == "rule":
        text = f"accepted {normal_id(args.id)} as {outcome.id}: it is now an iron rule"
    else:
        text = f"accepted {outcome.id}: every device of the team sees it after its next sync"
    app.emit(args.json, outcome.as_dict(), text)
    return 0


def _given(body: str | None) -> str:
    """BODY as given, or none; refused when text was piped or redirected in without ``-``:
    it would be dropped, and the memory written without the text the user meant."""
    from memoryd.errors import UsageError

    if body is None and _waiting_input():
        raise UsageError(
            "stdin holds text, but no BODY of - says to read it, so it would be lost",
            hint="add - to read the body from stdin: ... | memoryd remember --kind K --summary S -",
        )
    return body or ""


def _waiting_input() -> bool:
    """Whether stdin is a file or pipe with text already waiting (never blocks: a pipe
    nothing was written to yet, as an agent's tool may leave open, counts as none)."""
    import os
    import select
    import stat

    try:
        fd = sys.stdin.fileno()
        mode = os.fstat(fd).st_mode
        if stat.S_ISREG(mode):
            return os.fstat(fd).st_size > os.lseek(fd, 0, os.SEEK_CUR)
        if stat.S_ISFIFO(mode):
            return bool(select.select([fd], [], [], 0)[0]) and bool(os.read(fd, 1))
    except (AttributeError, OSError, ValueError):  # no stdin, or one with no file (tests)
        pass
    return False


def _stdin() -> str:
    """The body piped in, as UTF-8; a byte that is not UTF-8 kept as a lone surrogate (as in
    argv), for remember to refuse with one clear line rather than fail on decoding."""
    return sys.stdin.buffer.read().decode("utf-8", "surrogateescape")
