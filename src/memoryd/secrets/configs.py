"""Credential keys of common server and client config files, in their own syntax.

redis ``requirepass``/``masterauth`` (a directive, no ``=``), ``.netrc``
(``machine h login u password p``, on one line or several), ``.pgpass``
(``host:port:db:user:password``), ``.npmrc`` ``_auth`` (base64 of user:password)
and ``_authToken``, and Docker ``config.json`` ``"auth"`` (base64 of user:password).
The generic layer misses them because the key is not followed by an operator, the
key names nothing secret (``auth``), or there is no key at all (``.pgpass``).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterator

from memoryd.secrets.values import (
    WEAK_DEFAULTS,
    is_placeholder,
    is_reference,
    looks_like_password,
    looks_like_token,
)

Span = tuple[str, int, int]
RULE = "config-credential"

_REDIS_RE = re.compile(
    r"(?im)(?:^|[\s`：:，,;\-])(?:requirepass|masterauth)[ \t]+"
    r"(?:[\u4e00-\u9fff]{1,4}[ \t]*)?"  # requirepass 设成了 x
    r"(?:\"(?P<q>[^\"\n]*)\"|'(?P<s>[^'\n]*)'|(?P<v>[^\s\"'`，。,;]+))"
)
_REDIS_ACL_RE = re.compile(
    r"(?i)\b(?:ACL[ \t]+SETUSER|user)[ \t]+\S+[ \t]+(?:[^\n>]*?[ \t])?>(?P<v>\S+)"
)
_NETRC_RE = re.compile(
    r"(?i)\bmachine[ \t]+(?P<host>[\w.\-:]+)(?:\s+(?:login|account)[ \t]+(?P<login>\S+)){0,2}"
    r"\s+password[ \t]+"
    r"(?P<v>[^\s\"'`]+)"
)
_DOC_HOST_RE = re.compile(r"(?i)(?:^|\.)(?:example\.(?:com|org|net)|example|invalid)$")
_PGPASS_RE = re.compile(
    r"(?m)(?:^|(?<=[\s`]))(?P<host>[A-Za-z0-9.\-_*]+|\[[0-9a-fA-F:]+\]):(?:\d{1,5}|\*):[\w.\-*]+:"
    r"(?P<user>[\w.\-@*]+):(?P<v>[^\s:`]+)(?=[ \t]*$|`)"
)
_PORT_RE = re.compile(r":\d{1,5}:[^\s:]+:[^\s:]+:")
_NPM_AUTH_RE = re.compile(
    r"(?im)(?:^|[\s:])_auth[ \t]*=[ \t]*[\"']?(?P<v>[A-Za-z0-9+/]{8,}={0,2})(?=[\"']?\s|$)"
)
_NPM_TOKEN_RE = re.compile(r"(?im):_authToken[ \t]*=[ \t]*[\"']?(?P<v>[^\s\"'`]+)")
_DOCKER_AUTH_RE = re.compile(r"\"auth\"[ \t]*:[ \t]*\"(?P<v>[A-Za-z0-9+/]{8,}={0,2})\"")


def config_spans(text: str) -> Iterator[Span]:
    """Every credential of the config formats above whose cheap literal test passes."""
    lower = text.lower()
    if "requirepass" in lower or "masterauth" in lower:
        yield from _redis(text)
    if " on " in text and ">" in text:
        yield from _spans(_REDIS_ACL_RE, text, _password)
    if "machine" in lower and "password" in lower:
        yield from _netrc(text)
    if ":*:" in text or _PORT_RE.search(text):
        yield from _pgpass(text)
    if "_auth" in text:
        yield from _npmrc(text)
    if '"auth"' in text:
        yield from _spans(_DOCKER_AUTH_RE, text, _basic_pair)


def _spans(regex: re.Pattern[str], text: str, check: Callable[[str], bool]) -> Iterator[Span]:
    for match in regex.finditer(text):
        if check(match.group("v")):
            yield (RULE, match.start("v"), match.end("v"))


def _redis(text: str) -> Iterator[Span]:
    for match in _REDIS_RE.finditer(text):
        group = next(g for g in ("q", "s", "v") if match.group(g) is not None)
        if _password(match.group(group)):
            yield (RULE, match.start(group), match.end(group))


def _netrc(text: str) -> Iterator[Span]:
    for match in _NETRC_RE.finditer(text):
        if _DOC_HOST_RE.search(match.group("host")) or match.group("login") == "anonymous":
            continue  # the anonymous FTP convention: any e-mail address as the password
        if _password(match.group("v")):
            yield (RULE, match.start("v"), match.end("v"))


def _pgpass(text: str) -> Iterator[Span]:
    for match in _PGPASS_RE.finditer(text):
        value = match.group("v")
        if value.lower() != match.group("user").lower() and _password(value):
            yield (RULE, match.start("v"), match.end("v"))


def _npmrc(text: str) -> Iterator[Span]:
    yield from _spans(_NPM_AUTH_RE, text, _basic_pair)
    yield from _spans(_NPM_TOKEN_RE, text, lambda v: not is_reference(v) and looks_like_token(v))


def _password(value: str) -> bool:
    return value.lower() not in WEAK_DEFAULTS and looks_like_password(value)


def _basic_pair(value: str) -> bool:
    """Base64 of ``user:password`` with a real password."""
    try:
        decoded = base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return False
    user, sep, password = decoded.partition(":")
    if not sep or is_placeholder(password) or password.lower() == user.lower():
        return False
    return looks_like_password(password, min_len=4)
