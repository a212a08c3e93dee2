"""The generic layer: secrets assigned to a secret-sounding name, keys, URLs.

Three detectors that need no provider prefix:

* keyword assignments in every usual syntax (``KEY=v``, ``key: v``, JSON,
  ``export``, ``--flag v``, XML, Markdown tables, Chinese ``密码：v``, prose
  ``the password is v``), judged by what the name means and what the value
  looks like;
* credentials inside URLs of any scheme (``scheme://user:password@host``);
* PEM/OpenSSH/PGP/PuTTY private key blocks with a real body.

Every detector yields ``(rule, start, end)`` spans into the text.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import re
import string
from collections.abc import Iterator

from memoryd.secrets.kinds import CJK_KIND, classify_key, is_secret_value
from memoryd.secrets.values import (
    KNOWN_EXAMPLES,
    char_classes,
    is_identifier,
    looks_like_password,
    wordset,
)

Span = tuple[str, int, int]

KEYWORD_RE = re.compile(
    r"(?i)pass|pwd|pw|secret|token|key|auth|cred|密码|口令|密钥|秘钥|令牌|私钥|授权码|凭证|凭据"
)
_KEYWORD_LOWER_RE = re.compile(KEYWORD_RE.pattern.removeprefix("(?i)"))
_KEY_CHARS = frozenset(string.ascii_letters + string.digits + "_.-")
_KEY_RIGHT_RE = re.compile(r"[A-Za-z0-9_.\-]{1,64}")
_OP_RE = re.compile(
    r"""(?x)
    [\\"'\]*_`]{0,4}                                  # closing quote, bracket, markdown emphasis
    (?:[ \t]+(?:string|String|\[\]byte)(?=[ \t]*=))?     # Go: var dbPassword string = "…"
    (?:[ \t]*\([^()\n]{0,30}\))?                       # password (prod): ...
    (?P<ctx>[ \t]+(?:for|of|on|at|in)(?:[ \t]+[\w.@/\-]+){1,4}?)?  # password for the admin: ...
    [*_`]{0,3}
    (?:
        [ \t]*[:：][*_]{0,3}[ \t]*(?P<nl>\n[ \t]*(?:```[\w\-]*[ \t]*\n[ \t]*)?)(?=\S)
      | [ \t]*(?P<op>=>|:::=|::=|:=|==|\?=|\.=|\+=|=|:(?![:/])|：|\|)[*_]{0,3}[ \t]*
      | [ \t]+(?:is|was|are)(?:[ \t]+now)?[ \t]*[:：]?[ \t]+
      | [ \t]+(?:(?:is|was)[ \t]+)?(?:now[ \t]+)?(?:(?:set|changed|reset)[ \t]+)?to[ \t]+
      | [ \t]*(?:的?值?(?:是|为|為)|(?:设置|设|改|换|更新)(?:成|为|為)了?)[:：]?[ \t]*
      | [ \t]+[-–—][ \t]+
    )
    """
)
_WS_OP_RE = re.compile(r"[ \t]+")
_STOP_WORDS = wordset(
    "the a an this that its my your our their his her new old same one each every no any which "
    "what with and or of for to in on is are was be by from as at"
)
_FLAG_OP_RE = re.compile(r"(?:=|[ \t]+)(?!-)")
_COMMAND_FLAG_RE = re.compile(
    r"^--?(?:list|export|import|edit|recv|send|gen|generate|delete|show|print|sign|verify|"
    r"search|refresh|change|default|quick|fetch|lsign|check|armor|with)-"
)
_SCHEME_RE = re.compile(r"(?i)(?:bearer|token|bot|digest|apikey|sso-key)[ \t]+")
_BASIC_RE = re.compile(r"(?i)basic[ \t]+([A-Za-z0-9+/]{6,}={0,2})")
_UNQUOTED_RE = re.compile(r"[^\s\"'`<>\x80-\U0010ffff]+")
# ``Password=x;Database=y``, ``password=x&ssl=true``: the next field starts the next pair.
_NEXT_KEY_RE = re.compile(r"^[A-Za-z_][\w.\-]*[=:]$")
_ONE_CASE_NAME_RE = re.compile(r"^(?:[a-z_][a-z0-9_.\-]*|[A-Z_][A-Z0-9_.\-]*)[=:]$")
_CONTINUATION_RE = re.compile(r"[;&,|](?=[A-Za-z_][\w.\-]*=)|[|]")


def keyword_spans(text: str, lower: str | None = None) -> Iterator[Span]:
    """Values assigned to a secret-sounding name, in any of the usual syntaxes."""
    lower = text.lower() if lower is None else lower
    # Lower-casing keeps offsets for almost all text; when it does not, match case-blind.
    hits = (
        _KEYWORD_LOWER_RE.finditer(lower) if len(lower) == len(text) else KEYWORD_RE.finditer(text)
    )
    done_until = -1
    for hit in hits:
        if hit.start() < done_until:
            continue
        found = _assignment_at(text, hit)
        if found is None:
            continue
        key_end, span = found
        done_until = key_end
        if span is not None:
            yield span


def _assignment_at(text: str, hit: re.Match[str]) -> tuple[int, Span | None] | None:
    if hit.group() in CJK_KIND:
        return _cjk_assignment(text, hit)
    start, end = _expand_key(text, hit.start(), hit.end())
    if _in_resource_name(text, start):
        return end, None
    key = text[start:end].rstrip(".-")
    end = start + len(key)
    if start > 0 and text[start - 1] == "<" and text.startswith(">", end):
        kind = classify_key(key)
        close = text.find("<", end + 1, end + 300)
        if kind is None or close == -1 or not text.startswith(f"</{key}>", close):
            return end, None
        return end, _judge(kind, text, end + 1, close)
    quoted = _quoted_pair(text, start, end, key)
    if quoted is not None:
        return end, quoted
    flag = key.startswith("-")
    if flag and _COMMAND_FLAG_RE.match(key):
        return end, None  # gpg --list-secret-keys, --edit-key: an action on keys, not a value
    op = (_FLAG_OP_RE if flag else _OP_RE).match(text, end)
    ws = None if op or flag else _WS_OP_RE.match(text, end)
    if op is None and ws is None:
        return end, None  # cheap test first: most mentions of "token" assign nothing
    kind = classify_key(_with_previous_word(text, start, key))
    if kind is None or (ws is not None and (kind != "password" or _is_pass_verb(key))):
        return end, None
    if op is None:
        assert ws is not None
        return end, _value_span(kind, text, ws.end(), strict=True)
    groups = op.groupdict()
    if groups.get("op") == "|" and not _line_starts_with(text, start, "|"):
        return end, None
    return end, _value_span(kind, text, op.end(), own_line=bool(groups.get("nl")))


# ``setProperty("db.password", "…")`` (a call's first two arguments) and NuGet's or
# web.config's ``<add key="ClearTextPassword" value="…"/>``: a quoted name, then its value.
_CALL_PAIR_RE = re.compile(r"""(?P<q>["'])[ \t]*,[ \t]*(?=["'])""")
_XML_PAIR_RE = re.compile(r"""(?P<q>["'])[ \t]+value[ \t]*=[ \t]*(?=["'])""")


def _quoted_pair(text: str, start: int, end: int, key: str) -> Span | None:
    if start < 2 or text[start - 1] not in "\"'":
        return None
    before = text[start - 2]
    pair = _CALL_PAIR_RE.match(text, end) if before == "(" else None
    if pair is None and text[max(0, start - 6) : start - 1].endswith("key="):
        pair = _XML_PAIR_RE.match(text, end)
    if pair is None or pair.group("q") != text[start - 1]:
        return None
    kind = classify_key(key)
    return _value_span(kind, text, pair.end()) if kind is not None else None


def _cjk_assignment(text: str, hit: re.Match[str]) -> tuple[int, Span | None]:
    kind = CJK_KIND[hit.group()]
    op = _OP_RE.match(text, hit.end())
    if op is not None:
        return hit.end(), _value_span(kind, text, op.end(), own_line=bool(op.group("nl")))
    ws = _WS_OP_RE.match(text, hit.end())
    if ws is not None and kind == "password":
        return hit.end(), _value_span(kind, text, ws.end(), strict=True)
    return hit.end(), None


def _in_resource_name(text: str, start: int) -> bool:
    """``arn:aws:secretsmanager:…:secret:prod/db``: the word is part of a name, not a key."""
    if start == 0 or text[start - 1] not in ":/":
        return False
    word_start = start
    while word_start > 0 and not text[word_start - 1].isspace() and start - word_start < 200:
        word_start -= 1
    token = text[word_start:start]
    return "arn:" in token or "://" in token or token.startswith("projects/")


def _is_pass_verb(key: str) -> bool:
    """``pass`` followed by a space is the verb: "pass allow_yanked=False", "pass -R/dir"."""
    return key.lower().rstrip("-_").endswith("pass")


def _with_previous_word(text: str, start: int, key: str) -> str:
    """``API key`` / ``root password``: a one-word name takes the word before it."""
    if not key.isalnum() or start < 2 or text[start - 1] != " ":
        return key
    lo = start - 1
    while lo > 0 and start - lo < 24 and text[lo - 1].isascii() and text[lo - 1].isalnum():
        lo -= 1
    previous = text[lo : start - 1]
    if not previous or previous.lower() in _STOP_WORDS:
        return key
    return f"{previous}_{key}"


def _expand_key(text: str, start: int, end: int) -> tuple[int, int]:
    lo = start
    while lo > 0 and start - lo < 64 and text[lo - 1] in _KEY_CHARS:
        lo -= 1
    right = _KEY_RIGHT_RE.match(text, end)
    return lo, (right.end() if right else end)


def _line_starts_with(text: str, pos: int, prefix: str) -> bool:
    line_start = text.rfind("\n", 0, pos) + 1
    return text[line_start:pos].lstrip().startswith(prefix)


def _value_span(
    kind: str, text: str, pos: int, own_line: bool = False, strict: bool = False
) -> Span | None:
    """The value at ``pos`` (quoted or bare), if it looks like a secret for ``kind``."""
    if pos >= len(text):
        return None
    basic = _BASIC_RE.match(text, pos)
    if basic:
        return _judge_basic(text, basic)
    scheme = _SCHEME_RE.match(text, pos)
    if scheme and kind in ("token", "key"):
        pos = scheme.end()
    if text.startswith("\\", pos):
        pos += 1
    quote = text[pos] if pos < len(text) else ""
    if quote in "\"'`":
        close = text.find(quote, pos + 1, pos + 400)
        newline = text.find("\n", pos + 1, pos + 400)
        if close == -1 or (newline != -1 and newline < close):
            return None
        end = close - 1 if text[close - 1] == "\\" else close
        return _judge(kind, text, pos + 1, end, strict)
    match = _UNQUOTED_RE.match(text, pos)
    if match is None:
        return None
    value = match.group()
    if own_line and (value.endswith(":") or not _rest_is_blank(text, match.end())):
        return None  # "password:" heading a YAML mapping or a sentence, not a value
    if _NEXT_KEY_RE.match(value) and (_ONE_CASE_NAME_RE.match(value) or is_identifier(value[:-1])):
        return None  # "password= token=": the next key, not a value
    cut = _CONTINUATION_RE.search(value)
    if cut:
        value = value[: cut.start()]
    stripped = value.rstrip(".,;)]}:")
    value = stripped if stripped else value
    return _judge(kind, text, pos, pos + len(value), strict)


def _rest_is_blank(text: str, pos: int) -> bool:
    newline = text.find("\n", pos)
    return not text[pos : newline if newline != -1 else len(text)].strip()


def _judge(kind: str, text: str, start: int, end: int, strict: bool = False) -> Span | None:
    value = text[start:end]
    if value.lower().startswith("base64:"):
        value, start = value[7:], start + 7
    if not value or not is_secret_value(kind, value):
        return None
    if strict and (len(value) < 8 or value.startswith("-") or not _strong(value)):
        return None
    return (_rule_for(kind), start, end)


def _strong(value: str) -> bool:
    """``password X`` without an operator: three character classes, or long letters and digits."""
    if char_classes(value) >= 3:
        return True
    has_both = any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
    return has_both and len(value) >= 10 and not is_identifier(value)


def _rule_for(kind: str) -> str:
    return "generic-password" if kind == "password" else "generic-secret"


def _judge_basic(text: str, match: re.Match[str]) -> Span | None:
    if match.group(1) in KNOWN_EXAMPLES:
        return None
    try:
        decoded = base64.b64decode(match.group(1), validate=True).decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None
    _user, sep, password = decoded.partition(":")
    if not sep or not looks_like_password(password, min_len=4):
        return None
    return ("basic-auth-header", match.start(1), match.end(1))


# --- Markdown tables -----------------------------------------------------------

_TABLE_RULE_RE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")


def table_spans(text: str) -> Iterator[Span]:
    """A Markdown table whose header names a secret column: every cell under that header."""
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    row = 0
    while row < len(lines) - 2:
        if "|" not in lines[row] or not _TABLE_RULE_RE.match(lines[row + 1]):
            row += 1
            continue
        kinds = [_header_kind(cell) for cell, _start in _cells(lines[row])]
        row += 2
        while row < len(lines) and "|" in lines[row]:
            if any(kinds):
                yield from _row_spans(lines[row], starts[row], kinds)
            row += 1


def _cells(line: str) -> list[tuple[str, int]]:
    """The cells of a table row with their offsets in the line."""
    bounds = [i for i, c in enumerate(line) if c == "|"]
    if not line.lstrip().startswith("|"):
        bounds.insert(0, -1)
    if not line.rstrip().endswith("|"):
        bounds.append(len(line))
    return [(line[a + 1 : b], a + 1) for a, b in itertools.pairwise(bounds)]


def _header_kind(cell: str) -> str | None:
    name = cell.strip().strip("*_`")
    for word, kind in CJK_KIND.items():
        if word in name:
            return kind
    return classify_key(re.sub(r"\s+", "_", name)) if 0 < len(name) <= 40 else None


def _row_spans(line: str, line_start: int, kinds: list[str | None]) -> Iterator[Span]:
    for (cell, offset), kind in zip(_cells(line), kinds, strict=False):
        value = cell.strip().strip("`")
        if kind is None or not value or any(c.isspace() for c in value):
            continue
        if is_secret_value(kind, value):
            start = line_start + offset + cell.index(value)
            yield (_rule_for(kind), start, start + len(value))
