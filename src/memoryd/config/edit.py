"""Adding or removing one root in config.yaml without rewriting the user's file.

config.yaml is written by people: its comments, key order and quoting are theirs.
Registering a root (``memoryd init --project``, a layout's setup) therefore appends
the one entry to the ``roots:`` list, and removing one deletes that entry's lines;
every other byte stays. The edited text is loaded again and must list exactly the
intended roots. When the file's shape allows no such edit (``roots`` written as a
flow list, say) nothing is written and the error gives the lines to add by hand.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memoryd.config.loader import not_utf8, parse_config
from memoryd.config.sections import (
    Config,
    RootConfig,
    SyncPolicy,
    default_policy,
    refuse_non_utf8_root,
)
from memoryd.errors import ConfigError
from memoryd.fsutil import atomic_write
from memoryd.paths import Paths

_ROOTS_LINE = re.compile(r"roots[ \t]*:[ \t]*(?P<rest>.*?)[ \t]*(?:#.*)?$")
_ITEM = re.compile(r"(?P<indent>[ ]*)-(?:[ ]|$)")

# (text) -> the root paths it lists, in order; raises ConfigError when it is not valid
Reader = Callable[[str], list[Path]]


@dataclass(frozen=True)
class Change:
    """One edit of config.yaml: the file, its text now, and the roots it must list after."""

    file: Path
    text: str  # "" when there is no file yet
    want: list[Path]
    read: Reader


def add_entry(change: Change, entry: str, implied: str) -> str:
    """``text`` with ``entry`` (one ``- path: ...`` list item) appended to ``roots:``.

    ``implied`` holds the items of the roots in force: when the file lists none (no
    ``roots:``, or an empty one, means the default global root) they are written
    with the new one, so that adding a root never drops the default.
    """
    file, text = change.file, change.text
    lines = text.splitlines(keepends=True)
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    head = _roots_line(lines)
    if head is None:
        tail = "" if not text or text.endswith("\n") else newline
        block = "roots:\n" + _indented(implied + entry, "  ")
        edited = text + tail + block.replace("\n", newline)
    else:
        match = _ROOTS_LINE.match(lines[head].rstrip("\r\n"))
        assert match is not None
        rest = match.group("rest")
        if rest == "[]":
            end_of = lines[head][len(lines[head].rstrip("\r\n")) :]
            items = _indented(entry, "  ").replace("\n", newline)
            edited = "".join([*lines[:head], "roots:" + end_of, items, *lines[head + 1 :]])
        elif rest:
            raise _refusal(file, "its 'roots:' is not a block list", entry)
        else:
            last, indent = _extent(lines, head)
            if last == head:  # "roots:" alone is null: the default global root
                items = _indented(implied + entry, "  ").replace("\n", newline)
            else:
                items = _indented(entry, indent).replace("\n", newline)
            prefix = lines[: last + 1]
            if prefix and not prefix[-1].endswith("\n"):
                prefix[-1] += newline
            edited = "".join([*prefix, items, *lines[last + 1 :]])
    _check(change, edited, entry)
    return edited


def remove_entry(change: Change, path: Path, entry: str) -> str:
    """The file's text without the ``roots:`` item ``entry`` (the root at ``path``)."""
    file = change.file
    lines = change.text.splitlines(keepends=True)
    head = _roots_line(lines)
    if head is None:
        raise _refusal(file, "it has no 'roots:' list", entry, remove=True)
    last, indent = _extent(lines, head)
    starts = [n for n in range(head + 1, last + 1) if _item_at(lines[n], indent)]
    for number, start in enumerate(starts):
        stop = starts[number + 1] if number + 1 < len(starts) else last + 1
        kept = lines[:start] + lines[stop:]
        if len(starts) == 1:  # no entry left: "roots:" alone would mean the default root
            kept[head] = _empty_roots(lines[head])
        edited = "".join(kept)
        try:
            if change.read(edited) == change.want:
                return edited
        except ConfigError:
            continue
    why = f"no entry of its 'roots:' list could be removed alone for {path}"
    raise _refusal(file, why, entry, remove=True)


def _item_at(line: str, indent: str) -> bool:
    match = _ITEM.match(line)
    return match is not None and match["indent"] == indent


def _empty_roots(line: str) -> str:
    body = line.rstrip("\r\n")
    return body.replace("roots:", "roots: []", 1) + line[len(body) :]


def _roots_line(lines: Sequence[str]) -> int | None:
    for number, line in enumerate(lines):
        if _ROOTS_LINE.match(line.rstrip("\r\n")):
            return number
    return None


def _extent(lines: Sequence[str], head: int) -> tuple[int, str]:
    """The last line of the ``roots:`` block list, and its items' indentation."""
    last, indent = head, ""
    found = False
    for number in range(head + 1, len(lines)):
        line = lines[number]
        body = line.strip()
        if not body or body.startswith("#"):
            continue
        item = _ITEM.match(line)
        if item and not found:
            indent, found = item["indent"], True
        if line[:1] in (" ", "\t") or (item is not None and item["indent"] == ""):
            last = number
            continue
        break
    return last, indent


def _indented(entry: str, indent: str) -> str:
    return "".join(indent + line if line.strip() else line for line in entry.splitlines(True))


def _check(change: Change, edited: str, entry: str) -> None:
    try:
        got = change.read(edited)
    except ConfigError:
        got = None
    if got != change.want:
        raise _refusal(change.file, "an edit in place would not read back as intended", entry)


def _refusal(file: Path, why: str, entry: str, remove: bool = False) -> ConfigError:
    lines = "\n".join("    " + line for line in entry.rstrip("\n").splitlines())
    action = "remove these lines from" if remove else "add these lines to"
    return ConfigError(
        f"{file} was left as it is: {why}",
        hint=f"{action} its 'roots:' list yourself, then run the command again:\n{lines}",
    )


def root_to_yaml(root: RootConfig) -> dict[str, Any]:
    """The config.yaml entry for a root (sync settings only where they differ)."""
    # the path as config.yaml gave it: a root reached through a symlink stays so in the file
    entry: dict[str, Any] = {"path": root.given, "layout": root.layout, "scope": root.scope}
    base = default_policy(root.scope)
    diff = {
        f.name: getattr(root.sync, f.name)
        for f in dataclasses.fields(SyncPolicy)
        if getattr(root.sync, f.name) != getattr(base, f.name)
    }
    if diff:
        entry["sync"] = diff
    if root.watch != "auto":
        entry["watch"] = root.watch
    if root.team:
        entry["team"] = root.team
    return entry


def register_root(paths: Paths, config: Config, root: RootConfig) -> Config:
    """Add ``root`` to config.yaml (no-op when it is already there).

    The file is edited in place (see :func:`add_entry`): the user's comments and
    order stay; when that is impossible nothing is written and the error says what
    to add by hand.
    """
    if any(r.path == root.path for r in config.roots):
        return config
    refuse_non_utf8_root(root.path)
    roots = (*config.roots, root)
    file = paths.config_file
    text = _current_text(file)
    implied = "".join(_entry_text(r) for r in config.roots)
    want = [r.path for r in roots]
    change = Change(file, text, want, _reader(file, paths))
    edited = add_entry(change, _entry_text(root), implied)
    atomic_write(file, edited.encode("utf-8"))
    return dataclasses.replace(config, roots=roots, source=file)


def unregister_root(paths: Paths, config: Config, path: Path) -> Config:
    """Remove the root at ``path`` from config.yaml (no-op when it is not there)."""
    gone = [r for r in config.roots if r.path == path]
    if not gone:
        return config
    kept = tuple(r for r in config.roots if r.path != path)
    file = paths.config_file
    want = [r.path for r in kept]
    change = Change(file, _current_text(file), want, _reader(file, paths))
    edited = remove_entry(change, path, _entry_text(gone[0]))
    atomic_write(file, edited.encode("utf-8"))
    return dataclasses.replace(config, roots=kept, source=file)


def _current_text(file: Path) -> str:
    try:
        return file.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return ""
    except UnicodeDecodeError as exc:
        raise not_utf8(file, exc) from exc


def _entry_text(root: RootConfig) -> str:
    """The root's config.yaml list item (``- path: ...``), block style."""
    import yaml

    return yaml.safe_dump(
        [root_to_yaml(root)], sort_keys=False, allow_unicode=True, default_flow_style=False
    )


def _reader(file: Path, paths: Paths) -> Reader:
    def read(text: str) -> list[Path]:
        return [r.path for r in parse_config(text, file, paths).roots]

    return read
