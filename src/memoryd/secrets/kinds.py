"""What a secret-sounding name means, and what its value must look like.

``classify_key`` reads a name word by word from the right: ``db_password`` is a
password, ``password_hash`` and ``max_tokens`` are not. ``is_secret_value`` then
asks the value to look like that kind of secret: a password is not a word, a
default or a reference; a token is long and random.
"""

from __future__ import annotations

import base64
import binascii
import re
from functools import lru_cache

from memoryd.secrets.values import (
    crc32_token_ok,
    is_hex,
    is_placeholder,
    is_reference,
    looks_like_password,
    looks_like_token,
    looks_random,
    wordset,
)

CJK_KIND = {
    "密码": "password", "口令": "password", "密钥": "secret", "秘钥": "secret", "私钥": "secret",
    "凭证": "secret", "凭据": "secret", "授权码": "secret", "令牌": "token",
}  # fmt: skip
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
_ALGORITHM_PASSES = wordset(
    """
    first second third last next prev previous single multi one two shrink render compile compiler
    optimization opt lint check type by over under sur com byte band low high all full half final
    initial extra post pre forward backward reverse
    """
)
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
    store storage service sock socket encryption hasher hashers scheme cipher
    server host port user username login account jsonwebtoken
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
# Keys meant to ship in browsers and apps: Stripe/Supabase publishable, Mapbox public tokens.
_PUBLISHABLE_RE = re.compile(r"^(?:pk_(?:live|test)_|sb_publishable_|pk\.eyJ)")
_USER_PASS_RE = re.compile(r"^[\w.@+\-]{1,64}:([^\s:/]{1,128})$")
_B64_RE = re.compile(r"^[A-Za-z0-9+/]{8,}={0,2}$")
_CHECKSUM_PREFIX_RE = re.compile(r"^(?:gh[pousr]|npm)_[A-Za-z0-9]{36}$")


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
        if word == "pass" and before and before[-1] in _ALGORITHM_PASSES:
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
    decoded = decoded.strip()
    _user, sep, password = decoded.partition(":")
    if sep and is_placeholder(password):
        return True  # user:password, admin:changeme
    return " " in decoded or is_placeholder(decoded)  # prose or a stand-in
