"""What is wrong with a memory's fields, each problem in words with the field it names.

:func:`validate` checks a parsed :class:`memoryd.memory.Memory` against what memoryd
reads (types, one-line summary, the id of its path, a kind spelled as a folder, a field
spelled another way, dates); the memory model stays lenient (a wrong type reads as
absent) and the index and inspect report what this finds. Its own module, beside the
model, because these rules and their words grow on their own.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from memoryd.memory import (
    FIELDS,
    KIND_FOLDERS,
    KIND_OF_FOLDER,
    MIN_EPOCH_MS,
    SPELLING,
    Memory,
    Problem,
    epoch_ms,
)

_FIELD_OF_SPELLING = {name.replace("_", ""): name for name in FIELDS}


def validate(memory: Memory, expected_id: str | None = None) -> list[Problem]:
    """Every problem of this memory: parse problems, then field problems.

    Each field is looked up once, and a value of the usual type (an int, a bool, a list
    of strings) is passed without a closer look: every file of a cold index is validated.
    """
    problems = list(memory.problems)
    meta = memory.meta
    get = meta.get
    for name in ("id", "kind", "summary", "highlight", "superseded_by"):
        value = get(name, _ABSENT)
        if value is not _ABSENT and not isinstance(value, str):
            problems.append(_type_problem(name, "a string", value))
    problems.extend(_kind_problems(get("kind")))
    summary = get("summary")
    if isinstance(summary, str) and "\n" in summary.strip():
        problems.append(Problem("field.summary", "summary should be one line"))
    for name in ("created", "updated"):
        value = get(name, _ABSENT)
        if value is not _ABSENT and (type(value) is not int or 0 < value < MIN_EPOCH_MS):
            problems.extend(_check_epoch_ms(name, meta))
    for name in ("pinned", "sync"):
        value = get(name, _ABSENT)
        if value is not _ABSENT and type(value) is not bool:  # bool has no subclasses
            problems.append(_type_problem(name, "true or false", value))
    for name in ("load_when", "supersedes"):
        value = get(name, _ABSENT)
        if value is _ABSENT or (type(value) is list and all(map(isinstance, value, _STR))):
            continue
        ok_list = isinstance(value, list) and all(isinstance(v, str) for v in value)
        if not ok_list and not (name == "supersedes" and isinstance(value, str)):
            problems.append(_type_problem(name, "a list of strings", value))
    problems.extend(
        Problem(f"{SPELLING}.{key}", f"'{key}:' is not read: memoryd reads '{field}:'")
        for key in meta
        if key not in FIELDS and (field := read_as(key)) is not None
    )
    own_id = get("id")
    if expected_id is not None and isinstance(own_id, str) and own_id != expected_id:
        problems.append(
            Problem("field.id", f"id {own_id!r} does not match its path (expected {expected_id!r})")
        )
    return problems


def _kind_problems(kind: Any) -> list[Problem]:
    """A kind that is a folder's name (kind: rules is no iron rule) or a known kind in
    capitals (kind: Rule is no iron rule either: kinds are compared as written)."""
    if not isinstance(kind, str):
        return []
    if kind in KIND_OF_FOLDER:
        return [
            Problem(
                "field.kind",
                f"kind {kind!r} is the name of a folder, not a kind: "
                f"write kind: {KIND_OF_FOLDER[kind]}",
            )
        ]
    if not kind.islower() and kind.lower() in KIND_FOLDERS:
        return [
            Problem(
                "field.kind",
                f"kind {kind!r} is not the kind {kind.lower()!r} (kinds are lower case): "
                f"write kind: {kind.lower()}",
            )
        ]
    return []


def read_as(key: Any) -> str | None:
    """The field memoryd reads that ``key`` spells another way (``Summary``, ``load-when``,
    ``LoadWhen``: its case, '-' or no '_'), or None: a field it reads, or another key."""
    if type(key) is not str or key in FIELDS:
        return None
    return _FIELD_OF_SPELLING.get(key.lower().replace("_", "").replace("-", ""))


_ABSENT = object()  # a field the frontmatter does not have (None is a value: null)
_STR = itertools.repeat(str)  # isinstance's second argument, for map()


def _check_epoch_ms(name: str, meta: Mapping[Any, Any]) -> list[Problem]:
    if name not in meta:
        return []
    value = meta[name]
    if not isinstance(value, int) or isinstance(value, bool):
        if epoch_ms(value) is not None:
            return []
        if isinstance(value, str):  # "yesterday", or a date that does not exist: 2023-02-30
            return [
                Problem(
                    f"field.{name}",
                    f"{name} {value!r} is not a date: write epoch milliseconds or an ISO 8601 "
                    "date (2024-03-05)",
                )
            ]
        return [_type_problem(name, "epoch milliseconds or an ISO 8601 date (2024-03-05)", value)]
    if 0 < value < MIN_EPOCH_MS:
        return [
            Problem(
                f"field.{name}",
                f"{name} looks like epoch seconds ({value}); write milliseconds ({value * 1000})",
            )
        ]
    return []


def _type_problem(name: str, expected: str, value: Any) -> Problem:
    return Problem(f"field.{name}", f"{name} should be {expected}, got {type(value).__name__}")
