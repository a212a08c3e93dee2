"""A fast reader for the frontmatter memoryd itself writes, with PyYAML as the judge.

Nearly every memory's frontmatter is a flat mapping of plain words, integers
and short lists (``kind: fact``, ``updated: 1778757443477``,
``load_when: [deploy, 部署]``). Building that through PyYAML's constructors costs
more than everything else a cold index does with the file, so
:func:`load_simple` reads exactly that shape and returns ``None`` for anything
else, and the caller then asks PyYAML. Whatever it does return equals what
``yaml.safe_load`` returns for the same text (a hypothesis test holds it to
that): every scalar that YAML 1.1 could read as anything but a string or a
decimal integer (``yes``, ``0o17``, ``1:20``, ``2024-01-01``, ``~``, ``.5``),
every quote, comment, anchor, tag or continuation line is left to PyYAML.
"""

from __future__ import annotations

import re
from typing import Any

_KEY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_INT_RE = re.compile(r"-?(?:0|[1-9][0-9]*)\Z")
# Words YAML 1.1 resolves to a bool or null, in any case (the fast path gives up on them).
_SPECIAL = frozenset({"yes", "no", "true", "false", "on", "off", "y", "n", "null"})
_FLOW_BREAKERS = frozenset("[]{},\"':")


def load_simple(text: str) -> dict[str, Any] | None:
    """The mapping in ``text`` when it is a flat mapping of simple values, else None."""
    if "\r" in text or "\t" in text or "#" in text:
        return None
    meta: dict[str, Any] = {}
    items: list[Any] | None = None  # the block list being read
    indent = ""  # its items' indentation: none or two spaces, as its first item sets
    for line in text.split("\n"):
        if not line:
            continue
        if items is not None:
            if not items:
                indent = "  " if line.startswith("  - ") else ""
            if line.startswith(f"{indent}- "):
                value = _scalar(line[len(indent) + 2 :].strip(" "))
                if value is None:
                    return None
                items.append(value)
                continue
        parsed = _entry(line)
        if parsed is None or parsed[0] in meta:
            return None
        key, value = parsed
        items = value if type(value) is list else None  # "key:" may start a block list
        meta[key] = value
    return _nulls(meta)


def _entry(line: str) -> tuple[str, Any] | None:
    """``key: value`` at the start of a line (an empty value may begin a block list)."""
    key, colon, rest = line.partition(":")
    if not colon or len(key) > 100 or not _KEY_RE.match(key) or key.lower() in _SPECIAL:
        return None
    if rest and rest[0] != " ":
        return None
    rest = rest.strip(" ")  # YAML strips spaces only, not other white space
    if not rest:
        return key, []  # a block list follows, or the value is null (see _nulls)
    if rest[0] == "[":
        values = _flow(rest)
        return None if values is None else (key, _Flow(values))
    value = _scalar(rest)
    return None if value is None else (key, value)


def _flow(text: str) -> list[Any] | None:
    """The values of a ``[a, b]`` list of simple values (None: not that)."""
    if not text.endswith("]"):
        return None
    inner = text[1:-1].strip(" ")
    values = [_scalar(part.strip(" "), flow=True) for part in inner.split(",")] if inner else []
    return None if any(v is None for v in values) else values


class _Flow(list[Any]):
    """A list written inline: never continued by block items."""


def _scalar(text: str, flow: bool = False) -> str | int | None:
    """A plain word or decimal integer, or None when YAML might read it otherwise."""
    if not text:
        return None
    if len(text) < 19 and _INT_RE.match(text):
        return int(text)
    if not text[0].isalpha() or text.lower() in _SPECIAL or not text.isprintable():
        return None
    if ": " in text or text.endswith(":") or " #" in text:
        return None
    if flow and not _FLOW_BREAKERS.isdisjoint(text):
        return None
    if "  " in text:
        return None  # YAML keeps inner runs of spaces in plain scalars; be sure of it
    return text


def _nulls(meta: dict[str, Any]) -> dict[str, Any]:
    """Empty values with no block list under them are null; inline lists become lists."""
    out: dict[str, Any] = {}
    for key, value in meta.items():
        if isinstance(value, _Flow):
            out[key] = list(value)
        elif isinstance(value, list) and not value:
            out[key] = None
        else:
            out[key] = value
    return out
