"""A hand-written frontmatter's YAML mistake, told in memoryd's words with its fix.

PyYAML's messages name a parser state ("mapping values are not allowed in this
context"); a person needs the line and the edit. Its own module, beside the memory model
(:mod:`memoryd.memory`) that reports it as a ``frontmatter.yaml`` problem, because the
text is long and changes for its own reasons (a new common mistake), not the model's.
"""

from __future__ import annotations

import re

# A top-level ``key:`` line of a frontmatter (memory.py finds keys written twice with it).
TOP_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)[ \t]*:(?:[ \t]|$)")


def yaml_problem(exc: Exception, yaml_text: str) -> str:
    """What is wrong with hand-written YAML, in memoryd's words where PyYAML's are
    obscure, with the line of the file (the frontmatter starts on its second line).

    The two commonest mistakes get their fix: an unquoted value holding ``": "``
    (``summary: fix: do X``: PyYAML says "mapping values are not allowed in this
    context") and a tab in the indentation ("found character that cannot start any
    token"); config.yaml's errors say the same of tabs (memoryd.config.loader)."""
    mark = getattr(exc, "problem_mark", None)
    reason = " ".join(str(getattr(exc, "problem", None) or type(exc).__name__).split())
    if mark is None:
        return f"malformed YAML: {reason}"
    lines = yaml_text.splitlines()
    line = lines[mark.line] if mark.line < len(lines) else ""
    where = f"malformed YAML on line {mark.line + 2}"
    indent = line[: len(line) - len(line.lstrip(" \t"))]
    at = line[mark.column : mark.column + 1]  # the C loader does not name the character
    if "\t" in indent or at == "\t" or "tab" in reason or "'\\t'" in reason:
        return f"{where}: YAML does not allow tabs; indent with spaces"
    key, colon, value = line.partition(":")
    if not colon or not TOP_KEY.match(line):
        return f"{where}: {reason}"
    key, value = key.strip(), value.split(" #")[0].strip(" ")  # a comment stays outside
    plain = '"' not in value and "\\" not in value  # else single quotes: no escapes there
    quoted = f'"{value}"' if plain else "'" + value.replace("'", "''") + "'"
    if reason.startswith("mapping values are not allowed"):
        return (
            f"{where}: the value of {key!r} holds ': ' without quotes, which YAML "
            f"reads as another key; put it in quotes: {key}: {quoted}"
        )
    if value[:1] in _RESERVED and reason.startswith(_RESERVED_REASONS):
        return (
            f"{where}: the value of {key!r} starts with {value[0]!r}, which YAML reserves "
            f"unquoted; put it in quotes: {key}: {quoted}"
        )
    return f"{where}: {reason}"


# What a plain value cannot start with (YAML's indicators, but quotes, '|' and '>', which
# begin a value of their own), and PyYAML's words for text that goes on after one.
_RESERVED = frozenset("`@%*&![{")
_RESERVED_REASONS = (
    "found character that cannot start any token",
    "did not find expected key",
    "found undefined alias",
    "could not determine a constructor",
    "expected <block end>",
    "found unexpected end of stream",
)


def duplicate_keys(yaml_text: str) -> list[tuple[str, str]]:
    """Each top-level key written twice, with what to say of it: PyYAML keeps the last
    value without a word, so a person's first ``summary:`` (or ``pinned: true``) was
    silently not the memory's."""
    lines: dict[str, list[int]] = {}
    for number, line in enumerate(yaml_text.splitlines(), start=2):  # lines of the file
        match = TOP_KEY.match(line)
        if match:
            lines.setdefault(match.group(1), []).append(number)
    return [
        (
            key,
            f"{key!r} is written {len(at)} times (lines "
            f"{', '.join(map(str, at[:-1]))} and {at[-1]}): YAML keeps only the last",
        )
        for key, at in lines.items()
        if len(at) > 1
    ]
