"""Passwords inside connection strings and DSNs that are not ``scheme://user:pass@host``.

``jdbc:sqlserver://h;user=u;password=p``, ODBC ``Uid=u;Pwd=p;``, ADO.NET
``User Id=u;Password=p;``, libpq ``host=h user=u password=p``, a query string's
``?user=u&passwd=p`` and Go's ``user:pass@tcp(host)/db``. The key alone is not
enough (``password=`` is also a form field or a config line), so the value must sit
in a string with another connection key (server, host, database, user...) or in a
URL's query; the value itself must look like a password, not a variable or a word.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from memoryd.secrets.values import WEAK_DEFAULTS, looks_like_password, sentence_end

Span = tuple[str, int, int]
RULE = "connection-string-password"
WORDS = ("pwd", "passw", "pass=", "password")

_PARAM_RE = re.compile(
    r"(?i)(?P<sep>[;?&\s\"'({]|^)(?:password|passwd|pwd|pass)[ \t]*=[ \t]*"
    r"(?:\{(?P<braced>[^{}\n]{1,200})\}|\"(?P<dq>[^\"\n]{1,200})\"|'(?P<sq>[^'\n]{1,200})'|"
    r"(?P<value>[^;&\s\"'`<>)]{1,200}))"
)
# Other keys that make a string a connection string.
_COMPANION_RE = re.compile(
    r"(?i)(?:^|[;?&\s\"'(])(?:server|host|hostaddr|data source|datasource|database|dbname|"
    r"initial catalog|user|user id|userid|uid|username|user name|driver|dsn|port|sslmode|"
    r"provider|encrypt)[ \t]*="
)
_URL_QUERY_RE = re.compile(r"(?i)(?:https?|jdbc:[a-z0-9]+|[a-z][a-z0-9+.\-]*)://[^\s?#]*\?")
_GO_DSN_RE = re.compile(
    r"(?<![\w.@:/\-])([\w.\-]{1,64}):([^\s:/@\"'`<>]{1,128})@(?:tcp|unix|udp)\(|"
    r"(?<![\w.@:/\-])([\w.\-]{1,64}):([^\s:/@\"'`<>]{1,128})@\(?[\w.\-]+:\d{2,5}\)?/"
)


def connection_spans(text: str) -> Iterator[Span]:
    """Every ``password=``/``pwd=``/``passwd=`` value of a connection string or a URL query."""
    for match in _PARAM_RE.finditer(text):
        group = next(g for g in ("braced", "dq", "sq", "value") if match.group(g) is not None)
        value = match.group(group)
        key_start = match.start() + len(match.group("sep"))
        line_start = text.rfind("\n", 0, key_start) + 1
        line_end = text.find("\n", match.end())
        line = text[line_start : line_end if line_end != -1 else len(text)]
        before = text[line_start:key_start]
        in_query = match.group("sep") in "?&" and _URL_QUERY_RE.search(before) is not None
        if not in_query and not _COMPANION_RE.search(line):
            continue
        if group == "value" and sentence_end(text, match.end(group)):
            value = value.rstrip(".,")
        if _quiet(value):
            continue
        yield (RULE, match.start(group), match.start(group) + len(value))
    for match in _GO_DSN_RE.finditer(text):
        user_at, value_at = (1, 2) if match.group(2) is not None else (3, 4)
        value = match.group(value_at)
        if _quiet(value) or value.lower() == match.group(user_at).lower():
            continue
        yield ("url-credentials", match.start(value_at), match.end(value_at))


def _quiet(value: str) -> bool:
    return value.lower() in WEAK_DEFAULTS or not looks_like_password(value, min_len=6)
