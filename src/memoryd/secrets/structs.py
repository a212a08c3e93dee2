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

CLI_RE = re.compile(
    r"""(?x)
    \b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b[^\n]*?[ \t]-p(?P<a>[^\s'"`]{4,})
    | \bsshpass[ \t]+-p[ \t]*['"]?(?P<b>[^\s'"`]{4,})
    | \bredis-cli\b[^\n]*?[ \t]-a[ \t]+['"]?(?P<c>[^\s'"`]{4,})
    | \bdocker[ \t]+login\b[^\n]*?[ \t](?:-p|--password)[ \t=]+['"]?(?P<e>[^\s'"`]{4,})
    | \bcurl\b[^\n]*?[ \t](?:-u|--user)[ \t=]+['"]?[^\s:'"`]+:(?P<d>[^\s'"`@]{4,})
    """
)
CLI_WORDS = ("mysql", "mariadb", "sshpass", "redis-cli", "curl", "docker")


def cli_spans(text: str) -> Iterator[Span]:
    """``mysql -pX``, ``sshpass -p X``, ``redis-cli -a X``, ``curl -u user:X``."""
    for match in CLI_RE.finditer(text):
        group = match.lastgroup or "a"
        value = match.group(group)
        if looks_like_password(value):
            yield ("cli-password", match.start(group), match.end(group))
