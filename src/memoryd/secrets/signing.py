"""Framework signing secrets: whoever holds one can forge sessions, cookies and tokens.

Django/Flask ``SECRET_KEY``, Rails/Phoenix ``secret_key_base``, Laravel ``APP_KEY``
(``base64:`` and 32 bytes), Symfony ``APP_SECRET``, ``JWT_SECRET`` and friends
(``NEXTAUTH_SECRET``, ``SESSION_SECRET``), a nested ``jwt: secret:`` in YAML, and the
literal key handed to ``jwt.sign(...)`` / ``jwt.encode(...)``. Generated keys use the
whole printable range (Django's alphabet includes ``$(`` and ``%``), so the value is
judged on its own terms: long and random, not a call, a variable or a stand-in.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from memoryd.secrets.values import is_identifier, is_repetitive, shannon

Span = tuple[str, int, int]
RULE = "signing-secret"

_NAME_RE = re.compile(
    r"(?<![a-z0-9])(?:secret_key_base|secret_key|secretkey|secret_token|app_key|app_secret|"
    r"jwt[._-]?secret(?:[._-]?key)?|jwt[._-]?signing[._-]?key|jwt[._-]?key|nextauth_secret|auth_secret|"
    r"session_secret|cookie_secret)(?![a-z0-9])"
)  # on the lower-cased text
_VALUE = r"(?:b?(?P<q>[\"'`])(?P<qv>[^\"'`\n]{1,300})(?P=q)|(?P<v>[^\s\"'`]{1,300}))"
_ASSIGN_RE = re.compile(
    r"[\"'`\]]{0,2}[ \t]*(?:(?:=>|:=|=|,|[ \t]+(?:is|是|为))[ \t]*|[:：][ \t]*(?:\n[ \t]*)?)"
    + _VALUE  # a value on the next line only after a colon: ``KEY=`` is empty
)
_JWT_CALL_RE = re.compile(
    r"\bjwt\.(?:sign|encode)\(\s*(?:\{[^{}\n]*\}|[\w.\[\]'\"]+)\s*,\s*" + _VALUE
)
_JWT_KWARG_RE = re.compile(
    r"\bjwt\.(?:sign|encode)\([^()\n]*?\b(?:key|secret|secret_or_private_key)[ \t]*=[ \t]*" + _VALUE
)
_LITERAL_RE = re.compile(r"(?P<q>[\"'`])(?P<qv>[^\"'`\n]{16,300})(?P=q)(?P<v>)?")
_JWT_HEAD_RE = re.compile(r"jwt[\w\-]*:[ \t]*\n")
_JWT_YAML_RE = re.compile(
    r"(?im)^(?P<ind>[ \t]*)[\w\-]*jwt[\w\-]*:[ \t]*\n(?:(?P=ind)[ \t]+[\w\-]+:[^\n]*\n){0,4}?"
    r"(?P=ind)[ \t]+(?:secret|key|secret[_-]?key|signing[_-]?key)[ \t]*:[ \t]*" + _VALUE
)
_STAND_IN_RE = re.compile(
    r"(?i)change[_-]?me|your[_-]|example|placeholder|replace|here$|x{4,}|\.\.\.|dummy|sample|"
    r"todo|not[_-]?secret|^(?:test|dev|local)[_-]|secret[_-]?key"
)
_REFERENCE_RE = re.compile(
    r"^(?:\$\{|\$\(|\{\{|\{%|<%|%\(|%env|#\{)|^\$[A-Za-z_]\w*$|^@[\w.\-/]+$|^![\w!/:]+$|"
    r"^(?:~|\.\.?)?/[\w.\-/]*$|^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$|"
    r"^[A-Za-z_][\w.]*(?:[(\[]$|\(.*\)$|\[.*\]$)|"  # a call (not a Django key's "ab(")
    r"^[a-z][a-z0-9+.\-]*://|^arn:|^(?:enc|vault|ssm|secrets?|env|op|awskms|gcpkms|azurekv|ref|sops)[:(\[]"
)


def signing_spans(text: str, lower: str | None = None) -> Iterator[Span]:
    lower = text.lower() if lower is None else lower
    if len(lower) != len(text):
        lower = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    names = list(_NAME_RE.finditer(lower))
    matches = [m for n in names if (m := _ASSIGN_RE.match(text, n.end()))]
    for name in names:  # a fallback literal: env("APP_KEY", "…"), ENV.fetch("X") { "…" }
        line_end = text.find("\n", name.end())
        matches += _LITERAL_RE.finditer(text, name.end(), line_end if line_end != -1 else len(text))
    if "jwt." in text:
        matches += _JWT_CALL_RE.finditer(text)
        matches += _JWT_KWARG_RE.finditer(text)
    if _JWT_HEAD_RE.search(lower):
        matches += _JWT_YAML_RE.finditer(text)
    for match in matches:
        group = "qv" if match.group("qv") is not None else "v"
        start, end = match.start(group), match.end(group)
        value = match.group(group)
        if group == "v":
            value = value.rstrip(",;")
            if "(" not in value:
                value = value.rstrip(")")  # jwt.sign(payload, process.env.X)
            end = start + len(value)
        if value.lower().startswith("base64:"):
            value, start = value[7:], start + 7
        if is_signing_key(value):
            yield (RULE, start, end)


def is_signing_key(value: str) -> bool:
    """Long and random: not a reference, a call, a stand-in or a sequence."""
    body = value.removeprefix("django-insecure-")
    if len(body) < 16 or any(c.isspace() for c in body):
        return False
    if _REFERENCE_RE.search(value) or _STAND_IN_RE.search(body) or is_repetitive(body):
        return False
    if is_identifier(body) or re.fullmatch(r"[a-z]+(?:[_.\-][a-z0-9]+)+", body):
        return False  # super-secret-jwt-key, settings.signing_key
    return shannon(body) >= 3.3
