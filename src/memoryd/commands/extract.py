"""``memoryd extract``: try the extractor on one session by hand, writing nothing.

Prints what the daemon would send the command for a whole session, or with
``--run`` what the command answers, as the memories that would be written. It
is how a recipe is checked before the daemon relies on it.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memoryd.app import App
from memoryd.commands import add_json

if TYPE_CHECKING:
    from memoryd.extract.transcript import Conversation


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser(
        "extract",
        help="try auto-extraction on one session (a Claude Code .jsonl or an OpenCode session id); "
        "writes nothing",
    )
    parser.add_argument(
        "session", metavar="SESSION", help="a Claude Code transcript file, or an OpenCode ses_ id"
    )
    parser.add_argument(
        "--run", action="store_true", help="run extract.command and show what it would write"
    )
    add_json(parser)
    parser.set_defaults(handler=run)


def run(app: App, args: argparse.Namespace) -> int:
    from memoryd.errors import MemorydError, UsageError
    from memoryd.extract.command import ExtractorFailed
    from memoryd.extract.extractor import Extractor
    from memoryd.extract_ledger import NO_COMMAND, Ledger

    conv = _conversation(app, args.session)
    extractor = Extractor(app, Ledger(app.paths.state_dir))
    if not args.run:
        document = extractor.document(conv, conv.messages)
        app.emit(args.json, {"session": conv.key, "turns": conv.turns, "stdin": document}, document)
        return 0
    if not app.config.extract.command:
        raise UsageError(NO_COMMAND, hint="set extract.command in config.yaml (docs/agents.md)")
    try:
        _document, candidates, skipped = extractor.ask(conv, conv.messages)
    except ExtractorFailed as exc:
        tail = "".join(f"\n  stderr: {line}" for line in exc.stderr.splitlines()[-5:])
        raise MemorydError(
            f"the extractor failed: {exc.reason}{tail}",
            hint=f"try the command by hand: memoryd extract {args.session} | <command>",
        ) from exc
    data = {
        "session": conv.key,
        "turns": conv.turns,
        "memories": [c.__dict__ for c in candidates],
        "skipped": skipped,
    }
    lines = [f"{len(candidates)} memories would be written from {conv.key} ({conv.turns} turns):"]
    lines += [f"- {c.kind} ({c.scope}): {c.summary}" for c in candidates]
    lines += [f"skipped {item}" for item in skipped]
    app.emit(args.json, data, "\n".join(lines))
    return 0


def _conversation(app: App, raw: str) -> Conversation:
    from memoryd.errors import PathError
    from memoryd.extract import transcript
    from memoryd.extract.tracker import opencode_data_dir

    path = app.cwd / Path(raw).expanduser()
    if path.suffix == ".jsonl":
        found = transcript.read_claude(path) if path.is_file() else None
        if found is None:
            raise PathError(f"cannot read {path}", hint="pass an existing Claude Code .jsonl file")
        if not found.messages:  # not a transcript, or one of tool calls alone: nothing to send
            raise PathError(
                f"{path} holds no turn to extract from (no user prompt or model text)",
                hint="pass a Claude Code transcript: ~/.claude/projects/<slug>/<session>.jsonl",
            )
        return found
    data = opencode_data_dir(app.env)
    db_found = transcript.opencode_db_session(data / "opencode.db", raw)
    if db_found is not None:
        return db_found
    json_found = transcript.opencode_json_session(data / "storage", raw)
    if json_found is not None:
        return json_found
    raise PathError(
        f"{raw!r} is neither a .jsonl transcript nor an OpenCode session in {data}",
        hint="pass ~/.claude/projects/<slug>/<session>.jsonl or an OpenCode ses_ id",
    )
