"""Check an MCP tool call's arguments against the tool's schema, in the CLI's words.

The SDK's validator coerces in lax mode (``pinned: "yes"`` became ``True``), ignores
arguments it does not know (a misspelt ``scope`` silently searched every root) and,
when it does refuse, shows the model a pydantic dump with a URL. This checks first,
strictly, and words each refusal as argparse would for the CLI: ``unrecognized
arguments``, ``the following arguments are required``, ``argument limit: invalid
integer value: 'abc'``, ``invalid choice: ... (choose from ...)``.

Two spellings are read as what they can only mean, because Claude Code turns them into
the JSON value before the call and OpenCode sends them as the model wrote them, so one
model's call worked in one client and was refused in the other (``invalid integer value:
'3'``, a refusal that reads as a contradiction): ``null`` for an optional argument is
the argument not given (models that fill in every property send it), and a string that
is exactly an integer (``"3"``) or ``"true"``/``"false"`` is that integer or boolean.
``"yes"`` is still refused.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from memoryd.errors import UsageError

_NAMES = {
    "string": "string",
    "integer": "integer",
    "number": "number",
    "boolean": "boolean (true or false)",
    "array": "list",
    "object": "object",
}
_INTEGER = re.compile(r"-?[0-9]{1,18}")
_BOOLEANS = {"true": True, "false": False}


def check(tool: str, schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> dict[str, Any]:
    """``arguments`` as the tool takes them (see the module's two spellings), or
    :class:`UsageError` naming the first problem with them."""
    properties: Mapping[str, Any] = schema.get("properties", {})
    takes = f"{tool} takes " + ", ".join(properties) if properties else f"{tool} takes no arguments"
    unknown = [name for name in arguments if name not in properties]
    if unknown:
        raise UsageError(f"{tool}: unrecognized arguments: {', '.join(unknown)}", hint=takes)
    required = schema.get("required", [])
    given = {
        name: _spelled(properties[name], value)
        for name, value in arguments.items()
        if value is not None or name in required or _takes_null(properties[name])
    }
    missing = [name for name in required if given.get(name) is None]
    if missing:
        raise UsageError(
            f"{tool}: the following arguments are required: {', '.join(missing)}", hint=takes
        )
    for name, value in given.items():
        problem = _value_problem(properties[name], value)
        if problem:
            raise UsageError(f"{tool}: argument {name}: {problem}", hint=takes)
    return given


def _takes_null(spec: Mapping[str, Any]) -> bool:
    return spec.get("type") == "null" or any(o.get("type") == "null" for o in spec.get("anyOf", []))


def _spelled(spec: Mapping[str, Any], value: Any) -> Any:
    """A string that is exactly an integer or a boolean, as that value, where the
    argument takes one and not a string."""
    if not isinstance(value, str):
        return value
    kinds = {spec.get("type"), *(o.get("type") for o in spec.get("anyOf", []))}
    if "string" in kinds:
        return value
    if "integer" in kinds and _INTEGER.fullmatch(value):
        return int(value)
    if "boolean" in kinds and value in _BOOLEANS:
        return _BOOLEANS[value]
    return value


def _value_problem(spec: Mapping[str, Any], value: Any) -> str | None:
    options = spec.get("anyOf")
    if options is not None:
        if value is None and any(o.get("type") == "null" for o in options):
            return None
        typed = [o for o in options if o.get("type") != "null"]
        spec = {**spec, **typed[0]} if len(typed) == 1 else spec
    kind = spec.get("type")
    if kind is not None and not _is(kind, value):
        return f"invalid {_NAMES.get(kind, kind)} value: {value!r}"
    if "enum" in spec and value not in spec["enum"]:
        choices = ", ".join(repr(c) for c in spec["enum"])
        return f"invalid choice: {value!r} (choose from {choices})"
    low, high = spec.get("minimum"), spec.get("maximum")
    number = isinstance(value, int) and not isinstance(value, bool)
    if number and ((low is not None and value < low) or (high is not None and value > high)):
        return f"must be between {low} and {high}, got {value}"
    if isinstance(value, str) and len(value.strip()) < spec.get("minLength", 0):
        return "must not be empty"
    items = spec.get("items")
    if isinstance(value, list) and items:
        for item in value:
            problem = _value_problem(items, item)
            if problem:
                return f"an item: {problem}"
    return None


def _is(kind: str, value: Any) -> bool:
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    checks: dict[str, type | tuple[type, ...]] = {
        "string": str, "boolean": bool, "array": list, "object": dict,
    }  # fmt: skip
    expected = checks.get(kind)
    return expected is None or isinstance(value, expected)
