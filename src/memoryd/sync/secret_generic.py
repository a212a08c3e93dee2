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
import re
from collections.abc import Iterator
from urllib.parse import unquote

from memoryd.sync.secret_values import (
    DEFAULT_VALUES,
    crc32_token_ok,
    is_placeholder,
    is_reference,
    is_repetitive,
    looks_like_password,
    looks_like_token,
    looks_random,
    wordset,
)

Span = tuple[str, int, int]

KEYWORD_RE = re.compile(
    r"(?i)pass|pwd|secret|token|key|auth|cred|密码|口令|密钥|秘钥|令牌|私钥|授权码|凭证|凭据"
)
_CJK_KIND = {
    "密码": "password", "口令": "password", "密钥": "secret", "秘钥": "secret", "私钥": "secret",
    "凭证": "secret", "凭据": "secret", "授权码": "secret", "令牌": "token",
}  # fmt: skip
_KEY_CHAR = re.compile(r"[A-Za-z0-9_.\-]")
_CJK_LEFT = re.compile(r"[\w\u4e00-\u9fff]")
_WORD_SPLIT = re.compile(r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")

_PASSWORD_WORDS = frozenset({"password", "passwd", "pwd", "pass", "passphrase", "passcode", "pw"})
_SECRET_WORDS = frozenset({"secret", "credential", "credentials", "creds", "cred"})
_TOKEN_WORDS = frozenset({"token", "apikey", "auth", "authorization", "bearer"})
_COMPOUND_SUFFIXES = (
    ("password", "password"), ("passwd", "password"), ("pwd", "password"),
    ("passphrase", "password"), ("secret", "secret"), ("secretkey", "secret"),
    ("privatekey", "secret"), ("token", "token"), ("apikey", "token"), ("accesskey", "token"),
    ("authkey", "token"), ("masterkey", "secret"), ("signingkey", "secret"),
    ("encryptionkey", "secret"),
)  # fmt: skip
_PASS_PREFIXES = wordset(
    "db root admin user my app sql pg redis ftp smtp mail wifi sudo login ssh vnc rdp web api sys"
)
# Words that turn a secret-sounding name into metadata about the secret.
_META_WORDS = wordset(
    """
    id ids name names type types length len size min max count url uri urls endpoint path paths
    file files filename dir folder hash hashed digest policy rotation rotate reset expiry expires
    expiration expire expired ttl timeout field fields label hint prompt format regex pattern
    header headers prefix suffix limit limits env var vars ref refs version enabled enable disabled
    required mode strategy provider manager helper location source command cmd script generator
    validator validation strength rule rules placeholder example template budget usage used cost
    costs price per window bucket rate ratio index position pos offset kind class schema input
    output button form page dialog component flow lifetime age scope scopes audience issuer
    algorithm alg method store storage service server host port user username login account
    email format encoding hint question length issued count counter number num chars budget
    """
)
# Qualifiers before "key"/"token" that make it something public or structural.
_NOT_SECRET_QUALIFIERS = wordset(
    """
    primary foreign sort partition cache idempotency redis s3 object map dict lookup index composite
    unique public pub publishable site hot shortcut keyboard registry row range routing group item
    dedup dedupe lock join natural surrogate shard sharding cursor pagination next page continuation
    translation i18n locale message event metric tag attr attribute column table json yaml max min
    num csrf xsrf anon anonymous fake dummy example sample mock placeholder
    """
)
_OP_RE = re.compile(
    r"""(?x)
    [\\"'\]*_`]{0,4}                                   # closing quote, bracket, markdown emphasis
    (?:[ \t]*\([^()\n]{0,30}\))?                       # password (prod): ...
    (?:
        [ \t]*(?P<op>=>|:=|==|=|:(?![:/])|：|\|)[*_]{0,3}[ \t]*
      | [ \t]+(?:is|was|are)[ \t]*[:：]?[ \t]+
      | [ \t]*(?:是|为|為)[:：]?[ \t]*
      | [ \t]+[-–—][ \t]+
    )
    """
)
_FLAG_OP_RE = re.compile(r"(?:=|[ \t]+)")
_SCHEME_RE = re.compile(r"(?i)(?:bearer|token|bot|digest|apikey|sso-key)[ \t]+")
_BASIC_RE = re.compile(r"(?i)basic[ \t]+([A-Za-z0-9+/]{6,}={0,2})")
_UNQUOTED_RE = re.compile(r"[^\s\"'`<>\x80-\U0010ffff]+")
# ``Password=x;Database=y``, ``password=x&ssl=true``: the next field starts the next pair.
_CONTINUATION_RE = re.compile(r"[;&,|](?=[A-Za-z_][\w.\-]*=)|[|]")
_CHECKSUM_PREFIX_RE = re.compile(r"^(?:gh[pousr]|npm)_[A-Za-z0-9]{36}$")


def keyword_spans(text: str) -> Iterator[Span]:
    """Values assigned to a secret-sounding name, in any of the usual syntaxes."""
    done_until = -1
    for hit in KEYWORD_RE.finditer(text):
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
    word = hit.group()
    if word in _CJK_KIND:
        return _cjk_assignment(text, hit)
    start, end = _expand_key(text, hit.start(), hit.end())
    key = text[start:end].rstrip(".-")
    end = start + len(key)
    kind = classify_key(key)
    if kind is None:
        return end, None
    flag = key.startswith("-")
    xml = start > 0 and text[start - 1] == "<" and text.startswith(">", end)
    if xml:
        close = text.find("<", end + 1, end + 300)
        value_start, value_end = end + 1, close if close != -1 else end + 1
        return end, _judge(kind, text, value_start, value_end)
    op = _FLAG_OP_RE.match(text, end) if flag else _OP_RE.match(text, end)
    if op is None:
        return end, None
    if op.groupdict().get("op") == "|" and not _line_starts_with(text, start, "|"):
        return end, None
    return end, _value_span(kind, text, op.end())


def _cjk_assignment(text: str, hit: re.Match[str]) -> tuple[int, Span | None]:
    op = _OP_RE.match(text, hit.end())
    if op is None:
        return hit.end(), None
    return hit.end(), _value_span(_CJK_KIND[hit.group()], text, op.end())


def _expand_key(text: str, start: int, end: int) -> tuple[int, int]:
    lo = start
    while lo > 0 and start - lo < 64 and _KEY_CHAR.match(text[lo - 1]):
        lo -= 1
    hi = end
    while hi < len(text) and hi - end < 64 and _KEY_CHAR.match(text[hi]):
        hi += 1
    return lo, hi


def _line_starts_with(text: str, pos: int, prefix: str) -> bool:
    line_start = text.rfind("\n", 0, pos) + 1
    return text[line_start:pos].lstrip().startswith(prefix)


def classify_key(key: str) -> str | None:
    """``password``, ``secret``, ``token`` or ``key`` for a secret-sounding name, else None.

    Reads the name's words from the right: ``db_password`` is a password,
    ``password_hash`` and ``max_tokens`` are not; up to two unknown trailing
    words (``token_prod``) are skipped.
    """
    words = [w.lower() for w in _WORD_SPLIT.split(key.strip("-$\"'")) if w]
    if not words or len(words) > 8:
        return None
    for skipped, i in enumerate(range(len(words) - 1, -1, -1)):
        if words[i] in _META_WORDS or skipped > 2:
            return None
        kind = _word_kind(words[i], words[:i])
        if kind is not None:
            return kind
    return None


def _word_kind(word: str, before: list[str]) -> str | None:
    if any(b in _NOT_SECRET_QUALIFIERS for b in before):
        return None
    if word in _PASSWORD_WORDS:
        return "password"
    if word in _SECRET_WORDS:
        return "secret"
    if word in _TOKEN_WORDS:
        return "token"
    if word == "key":
        return "token" if before else "key"
    return _compound_kind(word)


def _compound_kind(word: str) -> str | None:
    for suffix, kind in _COMPOUND_SUFFIXES:
        if word.endswith(suffix) and len(word) > len(suffix):
            head = word[: -len(suffix)]
            if head in _NOT_SECRET_QUALIFIERS or head.endswith(("max", "min", "public", "csrf")):
                return None
            return kind
    if word.endswith("pass") and word[:-4] in _PASS_PREFIXES:
        return "password"
    return None


def _value_span(kind: str, text: str, pos: int) -> Span | None:
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
        return _judge(kind, text, pos + 1, end)
    match = _UNQUOTED_RE.match(text, pos)
    if match is None:
        return None
    value = match.group()
    cut = _CONTINUATION_RE.search(value)
    if cut:
        value = value[: cut.start()]
    stripped = value.rstrip(".,;)]}:")
    value = stripped if stripped else value
    return _judge(kind, text, pos, pos + len(value))


def _judge(kind: str, text: str, start: int, end: int) -> Span | None:
    value = text[start:end]
    if value.lower().startswith("base64:"):
        value, start = value[7:], start + 7
    if not value or not is_secret_value(kind, value):
        return None
    return (f"generic-{'password' if kind == 'password' else 'secret'}", start, end)


def _judge_basic(text: str, match: re.Match[str]) -> Span | None:
    try:
        decoded = base64.b64decode(match.group(1), validate=True).decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None
    _user, sep, password = decoded.partition(":")
    if not sep or not looks_like_password(password, min_len=4):
        return None
    return ("basic-auth-header", match.start(1), match.end(1))


def is_secret_value(kind: str, value: str) -> bool:
    """Whether ``value`` looks like a real secret for a name of ``kind``."""
    if _CHECKSUM_PREFIX_RE.match(value) and not crc32_token_ok(value):
        return False  # a GitHub/npm look-alike whose checksum fails: a made-up example
    if kind == "password":
        return looks_like_password(value)
    if kind == "secret":
        return looks_like_password(value, min_len=8) or looks_like_token(value)
    if kind == "key":  # a bare "key": only clearly random values
        return looks_random(value, min_len=20, min_entropy=3.5) and not is_reference(value)
    return looks_like_token(value)


# --- credentials in URLs -------------------------------------------------------

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
    low = password.lower()
    if len(password) < 3 or is_placeholder(password) or password.startswith(("$", "%", "{")):
        return True
    if low in DEFAULT_VALUES or is_repetitive(password):
        return True
    if _DOC_HOST_RE.search(host):
        return True
    local = bool(_LOCAL_HOST_RE.match(host))
    return local and (low == user.lower() or len(password) < 6)


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
