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
import string
from collections.abc import Iterator
from functools import lru_cache

from memoryd.sync.secret_values import (
    KNOWN_EXAMPLES,
    char_classes,
    crc32_token_ok,
    is_hex,
    is_placeholder,
    is_reference,
    looks_like_password,
    looks_like_token,
    looks_random,
    wordset,
)

Span = tuple[str, int, int]

KEYWORD_RE = re.compile(
    r"(?i)pass|pwd|secret|token|key|auth|cred|密码|口令|密钥|秘钥|令牌|私钥|授权码|凭证|凭据"
)
_KEYWORD_LOWER_RE = re.compile(KEYWORD_RE.pattern.removeprefix("(?i)"))
_CJK_KIND = {
    "密码": "password", "口令": "password", "密钥": "secret", "秘钥": "secret", "私钥": "secret",
    "凭证": "secret", "凭据": "secret", "授权码": "secret", "令牌": "token",
}  # fmt: skip
_KEY_CHARS = frozenset(string.ascii_letters + string.digits + "_.-")
_KEY_RIGHT_RE = re.compile(r"[A-Za-z0-9_.\-]{1,64}")
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
    algorithm algo alg method error errors exception fingerprint fp thumbprint checksum
    sha sha1 sha256 md5 commit revision rev tag tags node nodes attr attrs identifier
    store storage service
    server host port user username login account
    email format encoding hint question length issued count counter number num chars budget
    """
)
# Qualifiers that make any secret-sounding name public, a limit, or a stand-in.
_NOT_SECRET_QUALIFIERS = wordset(
    """
    public pub publishable site max min num csrf xsrf anon anonymous fake dummy example sample
    mock placeholder
    """
)
# Qualifiers before "key"/"token" that make it a data-structure or protocol key.
_NOT_KEY_QUALIFIERS = wordset(
    """
    primary foreign sort partition cache idempotency redis s3 object map dict lookup index
    composite unique hot shortcut keyboard registry row range routing group item dedup dedupe lock
    join natural surrogate shard sharding cursor pagination next page continuation translation i18n
    locale message event metric tag attr attribute column table json yaml
    """
)
# Heads of one-word names that end in "key" and hold a secret: accountkey, storagekey...
_KEY_HEADS = wordset(
    """
    api access secret private auth master encryption signing client app account storage shared
    service license deploy webhook session hmac consumer admin root
    """
)
_OP_RE = re.compile(
    r"""(?x)
    [\\"'\]*_`]{0,4}                                  # closing quote, bracket, markdown emphasis
    (?:[ \t]*\([^()\n]{0,30}\))?                       # password (prod): ...
    (?P<ctx>[ \t]+(?:for|of|on|at|in)(?:[ \t]+[\w.@/\-]+){1,4}?)?  # password for the admin: ...
    [*_`]{0,3}
    (?:
        [ \t]*[:：][*_]{0,3}[ \t]*(?P<nl>\n[ \t]*(?:```[\w\-]*[ \t]*\n[ \t]*)?)(?=\S)
      | [ \t]*(?P<op>=>|:=|==|=|:(?![:/])|：|\|)[*_]{0,3}[ \t]*
      | [ \t]+(?:is|was|are)[ \t]*[:：]?[ \t]+
      | [ \t]*(?:的?值?(?:是|为|為)|设置?为|改为|改成了?|设为)[:：]?[ \t]*
      | [ \t]+[-–—][ \t]+
    )
    """
)
_WS_OP_RE = re.compile(r"[ \t]+")
_STOP_WORDS = wordset(
    "the a an this that its my your our their his her new old same one each every no any which "
    "what with and or of for to in on is are was be by from as at"
)
_FLAG_OP_RE = re.compile(r"(?:=|[ \t]+)")
_SCHEME_RE = re.compile(r"(?i)(?:bearer|token|bot|digest|apikey|sso-key)[ \t]+")
_BASIC_RE = re.compile(r"(?i)basic[ \t]+([A-Za-z0-9+/]{6,}={0,2})")
_UNQUOTED_RE = re.compile(r"[^\s\"'`<>\x80-\U0010ffff]+")
# ``Password=x;Database=y``, ``password=x&ssl=true``: the next field starts the next pair.
_CONTINUATION_RE = re.compile(r"[;&,|](?=[A-Za-z_][\w.\-]*=)|[|]")
# Keys meant to ship in browsers and apps: Stripe/Supabase publishable, Mapbox public tokens.
_PUBLISHABLE_RE = re.compile(r"^(?:pk_(?:live|test)_|sb_publishable_|pk\.eyJ)")
_USER_PASS_RE = re.compile(r"^[\w.@+\-]{1,64}:([^\s:/]{1,128})$")
_B64_RE = re.compile(r"^[A-Za-z0-9+/]{8,}={0,2}$")
_CHECKSUM_PREFIX_RE = re.compile(r"^(?:gh[pousr]|npm)_[A-Za-z0-9]{36}$")


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
    if hit.group() in _CJK_KIND:
        return _cjk_assignment(text, hit)
    start, end = _expand_key(text, hit.start(), hit.end())
    key = text[start:end].rstrip(".-")
    end = start + len(key)
    if start > 0 and text[start - 1] == "<" and text.startswith(">", end):
        kind = classify_key(key)
        close = text.find("<", end + 1, end + 300)
        if kind is None or close == -1 or not text.startswith(f"</{key}>", close):
            return end, None
        return end, _judge(kind, text, end + 1, close)
    flag = key.startswith("-")
    op = (_FLAG_OP_RE if flag else _OP_RE).match(text, end)
    ws = None if op or flag else _WS_OP_RE.match(text, end)
    if op is None and ws is None:
        return end, None  # cheap test first: most mentions of "token" assign nothing
    kind = classify_key(_with_previous_word(text, start, key))
    if kind is None or (ws is not None and (kind != "password" or _ends_with_pass(key))):
        return end, None
    if op is None:
        assert ws is not None
        return end, _value_span(kind, text, ws.end(), strict=True)
    groups = op.groupdict()
    if groups.get("op") == "|" and not _line_starts_with(text, start, "|"):
        return end, None
    return end, _value_span(kind, text, op.end(), own_line=bool(groups.get("nl")))


def _cjk_assignment(text: str, hit: re.Match[str]) -> tuple[int, Span | None]:
    kind = _CJK_KIND[hit.group()]
    op = _OP_RE.match(text, hit.end())
    if op is not None:
        return hit.end(), _value_span(kind, text, op.end(), own_line=bool(op.group("nl")))
    ws = _WS_OP_RE.match(text, hit.end())
    if ws is not None and kind == "password":
        return hit.end(), _value_span(kind, text, ws.end(), strict=True)
    return hit.end(), None


def _ends_with_pass(key: str) -> bool:
    """``pass`` alone is usually the verb ("pass -R/path to the linker")."""
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


@lru_cache(maxsize=4096)
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
        if word == "pass" and before and before[-1] not in _PASS_PREFIXES:
            return None  # first_pass, shrink_pass: a pass of an algorithm
        return "password"
    if word in _SECRET_WORDS:
        return "secret"
    if word in _TOKEN_WORDS or word == "key":
        if any(b in _NOT_KEY_QUALIFIERS for b in before):
            return None
        return "token" if before or word != "key" else "key"
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
    if word.endswith("key") and word[:-3] in _KEY_HEADS:
        return "token"
    return None


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
    if strict and (len(value) < 8 or char_classes(value) < 3 or value.startswith("-")):
        return None
    return (f"generic-{'password' if kind == 'password' else 'secret'}", start, end)


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


def is_secret_value(kind: str, value: str) -> bool:
    """Whether ``value`` looks like a real secret for a name of ``kind``."""
    if _CHECKSUM_PREFIX_RE.match(value) and not crc32_token_ok(value):
        return False  # a GitHub/npm look-alike whose checksum fails: a made-up example
    if _encodes_placeholder(value) or _PUBLISHABLE_RE.match(value):
        return False
    pair = _USER_PASS_RE.match(value)
    if pair and kind in ("token", "secret"):  # auth: user:password
        return looks_like_password(pair.group(1))
    if kind == "password":
        return looks_like_password(value)
    if kind == "secret":
        return looks_like_password(value, min_len=8) or looks_like_token(value)
    if kind == "key":  # a bare "key": only clearly random values, and not a digest
        if is_hex(value):
            return False
        return looks_random(value, min_len=20, min_entropy=3.5) and not is_reference(value)
    return looks_like_token(value)


def _encodes_placeholder(value: str) -> bool:
    """``cGFzc3dvcmQ=`` (base64 of ``password``) in a Kubernetes Secret is still a placeholder."""
    if len(value) % 4 or not _B64_RE.match(value):
        return False
    try:
        decoded = base64.b64decode(value, validate=True).decode("ascii")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return False
    if not decoded.isprintable():
        return False
    return " " in decoded.strip() or is_placeholder(decoded.strip())  # prose or a stand-in
