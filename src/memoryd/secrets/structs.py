"""Structural secrets: credentials inside URLs, private key blocks, CLI password flags.

Each detector yields ``(rule, start, end)`` spans into the text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import unquote

from memoryd.secrets.values import (
    WEAK_DEFAULTS,
    is_placeholder,
    is_repetitive,
    looks_like_password,
    looks_random,
    sentence_end,
)

Span = tuple[str, int, int]


URL_CRED_RE = re.compile(
    r"\b[A-Za-z][A-Za-z0-9+.\-]{1,30}://([^\s:/?#@\"'`<>]{0,128}):([^\s/?#\"'`<>]{1,256})"
    r"@([A-Za-z0-9.\-_]+|\[[0-9a-fA-F:.]+\])(?=[:/?#\s\"'`<>),;]|$)"
)
_LOCAL_HOST_RE = re.compile(
    r"(?i)^(?:localhost|127\.\d+\.\d+\.\d+|0\.0\.0\.0|\[::1\]|host\.docker\.internal|[a-z0-9_\-]+)$"
)
_DOC_HOST_RE = re.compile(
    r"(?i)(?:^|\.)(?:example\.(?:com|org|net)|example|test|invalid|localhost)$"
)


def url_spans(text: str) -> Iterator[Span]:
    """``scheme://user:password@host`` with a real password (URL-decoded)."""
    for match in URL_CRED_RE.finditer(text):
        user, raw, host = match.group(1), match.group(2), match.group(3)
        password = unquote(raw)
        if _quiet_url_password(user, password, host):
            continue
        yield ("url-credentials", match.start(2), match.end(2))


def _quiet_url_password(user: str, password: str, host: str) -> bool:
    """Placeholders anywhere; documentation hosts; weak defaults only on local hosts."""
    low = password.lower()
    if len(password) < 6 or ":" in password or password.startswith(("$", "%", "{", "<", "[", ":")):
        return True
    if is_placeholder(password, defaults=False) or is_repetitive(password):
        return True
    if password.isalpha() and len(password) < 8:
        return True  # user:pass, admin:secret, user:hello: tutorial pairs
    if _DOC_HOST_RE.search(host):
        return True
    if not _LOCAL_HOST_RE.match(host):
        return False
    return low in WEAK_DEFAULTS or low == user.lower() or len(password) < 6


# --- private key blocks --------------------------------------------------------

PEM_RE = re.compile(r"-----BEGIN[ A-Z0-9_\-]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_PEM_BODY_RE = re.compile(
    r"(?:\\[rn]|\s|[A-Za-z0-9+/=]|(?:Proc-Type|DEK-Info|Comment|Version):[^\n\\]*)+"
)
PUTTY_RE = re.compile(r"Private-Lines:\s*\d+\s*(?:\\n|\n)\s*([A-Za-z0-9+/=]{40,})")


def private_key_spans(text: str) -> Iterator[Span]:
    """A private key header followed by at least 64 characters of key material."""
    for match in PEM_RE.finditer(text):
        body = _PEM_BODY_RE.match(text, match.end())
        material = re.sub(r"\\[rn]|\s|(?:Proc-Type|DEK-Info|Comment|Version):[^\n\\]*", "",
                          body.group() if body else "")  # fmt: skip
        if (
            len(material) >= 64
            and not is_placeholder(material[:64])
            and not is_repetitive(material)
        ):
            yield ("private-key", match.start(), match.end())
    for match in PUTTY_RE.finditer(text):
        if looks_random(match.group(1), min_len=40, min_entropy=3.5):
            yield ("private-key", match.start(1), match.end(1))


# --- passwords on command lines ------------------------------------------------

_Q = r"""(?:"(?P<dq>[^"\n]{1,200})"|'(?P<sq>[^'\n]{1,200})'|(?P<v>[^\s'"`|;&)]{1,200}))"""
_LINE = r"[^\n]*?[ \t]"
_CONTINUED = r"(?:[^\n]|\\\n)*?[ \t]"  # a line and its backslash continuations
# (lower-case literals one of which must occur, the pattern): each runs only on its words
# (the tool's name is the pattern's first literal, so "mkdir -p" costs one failed search).
CLI_RES = tuple(
    (words, re.compile(pattern))
    for words, pattern in (
        ((" -p",), r"\b(?:mysql|mysqldump|mysqladmin|mysqlsh|mariadb|mariadb-dump)\b"
         + _LINE + r"-p" + _Q),
        (("sshpass",), r"\bsshpass[ \t]+-p[ \t]*" + _Q),
        (("redis-cli",), r"\bredis-cli\b" + _LINE + r"-a[ \t]+" + _Q),
        ((" -p", "--password"),
         r"\b(?:docker|podman|buildah|skopeo|oras|nerdctl|helm|az)\b[^\n]*?\blogin\b" + _LINE
         + r"(?:-p|--password)(?:[ \t]+|=)" + _Q),
        (("curl",), r"\bcurl\b" + _CONTINUED + r"(?:-u|--user)(?:[ \t]+|=|[ \t]*\\\n[ \t]*)"
         + r"['\"]?[^\s:'\"`<>]+:(?P<v>[^\s'\"`@<>]{4,200})"),
        (("sqlcmd", "bcp", "osql"), r"\b(?:sqlcmd|bcp|osql)\b" + _LINE + r"-P[ \t]*" + _Q),
        (("mongo",), r"\b(?:mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport)\b"
         + _LINE + r"(?:-p|--password)(?:[ \t]+|=)" + _Q),
        (("pgpassword", "mysql_pwd", "sshpass=", "rediscli_auth"),
         r"(?<![\w$])(?:PGPASSWORD|MYSQL_PWD|SSHPASS|REDISCLI_AUTH)=" + _Q),
        (("smbclient",), r"\bsmbclient\b" + _LINE + r"-U[ \t]*['\"]?[^\s%'\"]+%" + _Q),
        (("sqlplus",), r"\bsqlplus\b[ \t]+(?:-\w+[ \t]+)*[\w.\-]+/(?P<v>[^\s/'\"@]{1,200})@"),
        (("--pass",), r"[ \t]--(?:password|passwd|pass)(?:[ \t]+|=)" + _Q),
        (("pass:",), r"\bopenssl\b" + _LINE + r"-pass(?:in|out)?[ \t]+pass:" + _Q),
    )
)  # fmt: skip
CLI_WORDS = tuple(sorted({w for words, _regex in CLI_RES for w in words}))


def cli_spans(text: str) -> Iterator[Span]:
    """``mysql -pX``, ``sshpass -p X``, ``curl -u user:X``, ``PGPASSWORD=X``, ``--password X``..."""
    lower = text.lower()
    for words, regex in CLI_RES:
        if not any(w in lower for w in words):
            continue
        for match in regex.finditer(text):
            group = next(g for g in ("dq", "sq", "v") if match.groupdict().get(g) is not None)
            value = match.group(group)
            if group == "v":
                value = value.rstrip("`")
                if sentence_end(text, match.start(group) + len(value)):
                    value = value.rstrip(".,")
            if not value.startswith("-") and looks_like_password(value):
                start = match.start(group)
                yield ("cli-password", start, start + len(value))
