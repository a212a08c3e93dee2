"""``memoryd context``: the block an agent harness injects into each prompt."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from memoryd.app import App
from memoryd.commands import add_json


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser(
        "context",
        help="print the memory block for a prompt (iron rules, outline, best hits)",
    )
    parser.add_argument("query", nargs="*", metavar="QUERY", help="the prompt or task")
    parser.add_argument("--max-chars", type=int, metavar="N", help="body text budget")
    parser.add_argument("--max-entries", type=int, metavar="N", help="at most N memory bodies")
    parser.add_argument(
        "--hook",
        action="store_true",
        help="read a Claude Code hook event (JSON with prompt and cwd) from stdin",
    )
    add_json(parser)
    parser.set_defaults(handler=run)


def run(app: App, args: argparse.Namespace) -> int:
    from memoryd.agent.context import gather
    from memoryd.errors import UsageError

    for name in ("max_chars", "max_entries"):
        value = getattr(args, name)
        if value is not None and value < 0:
            flag = "--" + name.replace("_", "-")
            raise UsageError(f"{flag} must not be negative, got {value}", hint=f"{flag} 0 or more")
    query = " ".join(args.query)
    if args.hook:
        query = _from_hook(app, sys.stdin.read()) or query
    block = gather(app, query, args.max_chars, args.max_entries)
    app.emit(args.json, block.as_dict(), block.text)
    return 0


def _from_hook(app: App, raw: str) -> str:
    """The prompt of a hook event; its ``cwd`` (when given) chooses the project."""
    from memoryd.errors import UsageError

    try:
        event = json.loads(raw or "{}")
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"--hook expects the hook's JSON event on stdin: {exc}",
            hint="configure the command as a UserPromptSubmit hook, or drop --hook",
        ) from exc
    if not isinstance(event, dict):
        return ""
    cwd = event.get("cwd")
    if isinstance(cwd, str) and cwd:
        app.cwd = Path(cwd)
    prompt = event.get("prompt")
    return prompt if isinstance(prompt, str) else ""
