"""A fast reader for frontmatter in the shapes people and tools write, with PyYAML as the judge.

Nearly every memory's frontmatter is a flat mapping of words, quoted strings,
integers, booleans and short lists (``kind: fact``, ``summary: "a: b"``,
``updated: 1778757443477``, ``pinned: false``, ``load_when: ["deploy", 部署]``),
often with a ``# comment``. Building that through PyYAML's constructors costs
more than everything else a cold index does with the file, so
:func:`load_simple` reads exactly those shapes and returns ``None`` for anything
else, and the caller then asks PyYAML. Whatever it does return equals what
``yaml.safe_load`` returns for the same text, types included (a hypothesis test
holds it to that): every scalar that YAML 1.1 could read as anything but a
string, a decimal integer, a boolean or null (``y``, ``0o17``, ``1:20``,
``2024-01-01``, ``.5``), every escape in a double-quoted string, every anchor,
tag, key in quotes or continuation line is left to PyYAML.

PyYAML is asked through :func:`pyyaml_load`: ``yaml.safe_load`` but for a date or
time that does not exist (``created: 2023-02-30``, ``2024-13-45``), which stays the
text it is instead of failing the whole frontmatter: one mistyped date must not
cost a memory its id, kind, summary and pin (validation reports the field).
"""

from __future__ import annotations

import functools
import re
from typing import Any

_KEY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_INT_RE = re.compile(r"-?(?:0|[1-9][0-9]*)\Z")
# YAML 1.1's booleans and nulls exactly as PyYAML resolves them (three casings each).
_WORDS: dict[str, Any] = {
    w: value
    for words, value in (
        ("yes true on", True),
        ("no false off", False),
        ("null ~", None),
    )
    for word in words.split()
    for w in (word, word.capitalize(), word.upper())
}
# Other words YAML may read as something else in some casing: left to PyYAML.
_SPECIAL = frozenset({"yes", "no", "true", "false", "on", "off", "y", "n", "null"})
_LONGEST_SPECIAL = max(map(len, _SPECIAL))
_FLOW_BREAKERS = frozenset("[]{},\"':#")
_NO = object()  # "not a shape read here" (None is a value: null)


def pyyaml_load(text: str) -> Any:
    """``yaml.safe_load(text)`` (the C loader when PyYAML has it), an impossible date or
    time kept as its text. Raises what PyYAML raises for text that is not YAML."""
    import yaml

    return yaml.load(text, Loader=_lenient_loader())  # a safe loader: SafeLoader's classes


@functools.cache
def _lenient_loader() -> type[Any]:
    import yaml

    base: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    timestamp = yaml.constructor.SafeConstructor.construct_yaml_timestamp

    def timestamp_or_text(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
        try:
            return timestamp(loader, node)
        except ValueError:  # YAML's shape of a date, not a date: 2023-02-30
            return loader.construct_scalar(node)

    class LenientSafeLoader(base):  # type: ignore[valid-type,misc]  # base: either loader
        pass

    LenientSafeLoader.add_constructor("tag:yaml.org,2002:timestamp", timestamp_or_text)
    return LenientSafeLoader


def load_simple(text: str) -> dict[str, Any] | None:
    """The mapping in ``text`` when it is a flat mapping of simple values, else None."""
    flat = load_flat(text)
    return flat if flat is not None else load_lines(text)


def load_flat(text: str) -> dict[str, Any] | None:
    """:func:`load_lines` for the commonest frontmatter, in one loop, or None: one ``key:
    value`` a line, whose value is a double-quoted string without escapes, a plain word or
    words, a decimal integer, a boolean or null, or a flow list of double-quoted strings
    and plain words, and a comment only after a value that is not quoted. Anything else (a
    blank value, a block list, a quote in a comment...) is left to :func:`load_lines`:
    this only reads faster what that reads (a cold index spent a tenth of its CPU reading
    frontmatter; this takes a third less).
    """
    if not text.replace("\n", "").isprintable():  # every value printable, no \r or \t
        return None
    meta: dict[str, Any] = {}
    for line in text.split("\n"):
        key, sep, rest = line.partition(": ")
        if not sep:
            if line:
                return None
            continue  # a blank line
        if key in meta or not _plain_key(key):
            return None
        if "#" in rest:
            cut = rest.find(" #")
            if cut < 0 or rest[0] in "\"'#":
                return None
            rest = rest[:cut]
        rest = rest.strip(" ")
        value = _flat_list(rest) if rest[:1] == "[" else _flat_scalar(rest, block=True)
        if value is _NO:
            return None
        meta[key] = value
    return meta


def _flat_scalar(text: str, block: bool) -> Any:
    """A value :func:`load_flat` reads, not a list (``block``: not inside one), or _NO."""
    if not text:
        return _NO
    first = text[0]
    if first == '"':
        inner = text[1:-1]
        if len(text) < 2 or text[-1] != '"' or '"' in inner or "\\" in inner:
            return _NO
        return inner
    if first <= "9" and first.isdigit():  # a decimal integer, in a block only
        if not block or not text.isdigit() or not text.isascii() or len(text) >= 19:
            return _NO
        return int(text) if first != "0" or len(text) == 1 else _NO
    if text in _WORDS:
        return _WORDS[text]
    if (
        not first.isalpha()
        or (len(text) <= _LONGEST_SPECIAL and text.lower() in _SPECIAL)
        or "  " in text
    ):
        return _NO
    if block:
        return _NO if ": " in text or text[-1] == ":" else text
    return text if _FLOW_BREAKERS.isdisjoint(text) else _NO


def _flat_list(text: str) -> list[Any] | object:
    """A flow list of what :func:`_flat_scalar` reads, or _NO."""
    if text[-1] != "]" or "'" in text:
        return _NO
    values = [_flat_scalar(item.strip(" "), block=False) for item in text[1:-1].split(",")]
    return _NO if _NO in values else values


def load_lines(text: str) -> dict[str, Any] | None:
    """:func:`load_simple`, line by line: every shape it reads (for a caller that has
    already tried :func:`load_flat` on ``text``)."""
    if "\r" in text or "\t" in text:
        return None
    meta: dict[str, Any] = {}
    items: list[Any] | None = None  # the block list being read
    indent = ""  # its items' indentation: none or two spaces, as its first item sets
    lists: list[str] = []  # the keys whose value is a list (which _nulls must look at)
    for line in text.split("\n"):
        if not line or (line[0] in " #" and line.lstrip(" ").startswith("#")):
            continue  # a blank or comment line, at any indentation
        if items is not None:
            if not items:
                indent = "  " if line.startswith("  - ") else ""
            if line.startswith(f"{indent}- "):
                value = _value(line[len(indent) + 2 :].strip(" "))
                if value is _NO:
                    return None
                items.append(value)
                continue
        key, colon, rest = line.partition(":")
        if not colon or key in meta or not _plain_key(key):
            return None
        value = _entry_value(rest)
        if value is _NO:
            return None
        if type(value) is list or type(value) is _Flow:
            lists.append(key)
            items = value if type(value) is list else None  # "key:" may start a block list
        else:
            items = None
        meta[key] = value
    if lists:
        _nulls(meta, lists)
    return meta


@functools.lru_cache(maxsize=256)
def _plain_key(key: str) -> bool:
    """A key read here: a short identifier YAML reads as a string (keys repeat: cached)."""
    return len(key) <= 100 and bool(_KEY_RE.match(key)) and key.lower() not in _SPECIAL


def _entry_value(rest: str) -> Any:
    """The value after ``key:`` (an empty value may begin a block list), or _NO."""
    if rest and rest[0] != " ":
        return _NO
    rest = rest.strip(" ")  # YAML strips spaces only, not other white space
    if "#" in rest:
        rest = _uncomment(rest)
    if not rest:
        return []  # a block list follows, or the value is null (see _nulls)
    first = rest[0]
    if first == "[":
        values = _flow(rest)
        return _NO if values is None else _Flow(values)
    if first == '"':
        return _double(rest)
    if rest.isdigit() and rest.isascii():  # what _plain reads as a decimal integer, or _NO
        return int(rest) if len(rest) < 19 and (first != "0" or len(rest) == 1) else _NO
    return _value(rest, commented=False)


def _uncomment(text: str) -> str:
    """``text`` without a trailing ``  # comment`` (a whole-value comment leaves nothing)."""
    if text.startswith("#"):
        return ""
    if text.startswith(('"', "'")):
        end = _closing_quote(text)
        if end < 0:
            return text  # left for _value to refuse
        head, tail = text[: end + 1], text[end + 1 :]
        stripped = tail.lstrip(" ")
        return head if stripped.startswith("#") and tail != stripped else text
    cut = text.find(" #")
    return text[:cut].rstrip(" ") if cut >= 0 else text


def _closing_quote(text: str) -> int:
    """Where the string opened by ``text[0]`` closes, or -1."""
    quote, i = text[0], 1
    while True:
        i = text.find(quote, i)
        if i < 0:
            return -1
        if quote == "'" and text[i + 1 : i + 2] == "'":
            i += 2  # '' is an escaped quote inside a single-quoted string
            continue
        return i


def _flow(text: str) -> list[Any] | None:
    """The values of a ``[a, "b", true]`` list of simple values (None: not that)."""
    if not text.endswith("]"):
        return None
    inner = text[1:-1]
    if "'" not in inner and inner.strip(" "):
        # Cut at every comma: where a comma stood inside double quotes, a part that opens
        # a quote does not close it, is no value, and the careful split below decides.
        values = [_value(part.strip(" "), flow=True) for part in inner.split(",")]
        if _NO not in values:
            return values
    parts = _flow_parts(inner)
    if parts is None:
        return None
    values = [_value(part, flow=True) for part in parts]
    return None if any(v is _NO for v in values) else values


def _flow_parts(inner: str) -> list[str] | None:
    """``inner`` split at the commas outside quotes; None for a trailing or doubled comma."""
    parts: list[str] = []
    rest = inner.strip(" ")
    while rest:
        if rest.startswith(('"', "'")):
            end = _closing_quote(rest)
            if end < 0:
                return None
            part, rest = rest[: end + 1], rest[end + 1 :].lstrip(" ")
        else:
            part, _, after = rest.partition(",")
            part, rest = part.rstrip(" "), ("," + after if _ else "")
        parts.append(part)
        if rest:
            if rest[0] != ",":
                return None
            rest = rest[1:].lstrip(" ")
            if not rest:
                return None  # "[a,]": PyYAML reads it, but keep to the plain cases
    return parts


class _Flow(list[Any]):
    """A list written inline: never continued by block items."""


def _value(text: str, flow: bool = False, commented: bool = True) -> Any:
    """A scalar: quoted string, plain word, decimal integer, boolean or null (else _NO).
    ``commented``: a trailing comment may still be on it (not yet cut off)."""
    if commented and not flow and "#" in text:
        text = _uncomment(text)
    if text[:1] == '"':
        return _double(text)
    if text[:1] == "'":
        return _single(text)
    if text in _WORDS:
        return _WORDS[text]
    return _plain(text, flow)


def _double(text: str) -> Any:
    """A double-quoted string without escapes (an escape is PyYAML's to read)."""
    inner = text[1:-1]
    if len(text) < 2 or text[-1] != '"' or '"' in inner or "\\" in inner:
        return _NO
    return inner if inner.isprintable() else _NO


def _single(text: str) -> Any:
    """A single-quoted string: ``''`` stands for one quote, nothing else is special."""
    if len(text) < 2 or text[-1] != "'" or _closing_quote(text) != len(text) - 1:
        return _NO
    inner = text[1:-1]
    return inner.replace("''", "'") if inner.isprintable() else _NO


def _plain(text: str, flow: bool) -> str | int | object:
    """A plain word or decimal integer, or _NO when YAML might read it otherwise."""
    if not text:
        return _NO
    if not text[0].isalpha():  # a decimal integer starts with a digit or "-", not a letter
        return int(text) if len(text) < 19 and _INT_RE.match(text) else _NO
    if (len(text) <= _LONGEST_SPECIAL and text.lower() in _SPECIAL) or not text.isprintable():
        return _NO
    if ": " in text or text.endswith(":") or " #" in text:
        return _NO
    if flow and not _FLOW_BREAKERS.isdisjoint(text):
        return _NO
    if "  " in text:
        return _NO  # YAML keeps inner runs of spaces in plain scalars; be sure of it
    return text


def _nulls(meta: dict[str, Any], keys: list[str]) -> None:
    """Empty values with no block list under them are null; inline lists become lists
    (in place, at the list-valued ``keys``: the mapping keeps its order)."""
    for key in keys:
        value = meta[key]
        if type(value) is _Flow:
            meta[key] = list(value)
        elif not value:
            meta[key] = None
