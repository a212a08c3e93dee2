"""Shape tests for candidate secret values: is this random, or a placeholder?

Pure functions of a string. They let the scanner say "a value assigned to
``password`` that looks like a password" rather than "anything after the word
password", so that prose, variable references, templates and documentation
placeholders stay quiet.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import math
import re
import zlib
from collections import Counter
from functools import lru_cache


def wordset(text: str) -> frozenset[str]:
    """The whitespace-separated words of ``text`` (keeps long vocabularies readable)."""
    return frozenset(text.split())


_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

# Whole values that documentation, tutorials and local setups use as stand-ins.
DEFAULT_VALUES = wordset(
    """
    password passw0rd p@ssw0rd p@ssword pass pass123 pass1234 password1 password123 pwd
    admin admin123 administrator root toor guest test test123 testing tester secret secret123
    secrets changeme changeit letmein welcome qwerty 123456 1234567 12345678 123456789
    1234567890 111111 000000 abc123 postgres postgresql mysql redis mongo mongodb rabbitmq
    example default sample demo dummy foobar foo bar baz hunter2 user username none null nil
    empty todo tbd fixme xxx na n/a true false undefined required optional string str value
    mypassword yourpassword supersecret secretpassword mysecretpassword my-secret-pw mysecret
    rootpassword adminpassword dev development local localhost docker vagrant ubuntu pi
    raspberry oracle sa sapassword minioadmin minio elastic changeme123 token apikey api_key
    your_token your_api_key your-api-key yourtoken mytoken secretkey secret_key
    """
)

# Values that are known public examples (vendor docs); never a live credential.
KNOWN_EXAMPLES = frozenset(
    {
        "AKIAIOSFODNN7EXAMPLE",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
        "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        # Azurite / storage emulator well-known development key
        "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
        # jwt.io's sample token signature
        "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    }
)

_PLACEHOLDER_RE = re.compile(
    r"(?ix) x{4,} | \*{3,} | \u2022{2,} | \.\.\. | \u2026 | <[^<>\n]{0,60}>"
    r" | \{\{ | \$\{ | \$\( | %\( | \#\{ | <%  | \bchange[_-]?me\b"
    r" | replace[_-]?(?:me|with|this) | your[_-]?[a-z]"
    r" | placeholder | redacted | example | dummy | \binsert[_-]"
    r" | [_-]here\b | \bhere$ | ^(?:sample|demo|test|fake|mock)[_-] | [_-](?:sample|placeholder)$"
    r" | ^\[[^\]]*\]$ | ^\{[^}]*\}$ | ^\([^)]*\)$ | ^%[a-z_]+%$ | ^@[a-z_]+@$"
    r" | ^(?:enc|vault|ssm|secret|secrets|env|op|awskms|gcpkms|azurekv|ref|sops)[:(\[]"
    r" | ^\$ansible_vault | ^!vault"
)
_REFERENCE_RE = re.compile(
    r"""(?x)
    ^[$&*@!]                                          # shell/template variable, YAML alias or tag
    | ^[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)+(?:\(.*)?$  # attribute path: settings.SECRET, a.b()
    | ^[A-Za-z_][\w.]*\(                              # function call: getenv(...)
    | ^[A-Za-z_][\w]*\[                               # subscript: os.environ[...]
    | ^(?:/|~/|\./|\.\./|[A-Za-z]:\\)                 # a path
    | ^[a-z][a-z0-9+.-]*://                           # a URL (its credentials: own rule)
    | ^(?:sha\d+|md5|sha)[:-]                         # digests, SRI hashes
    | ^arn:                                           # an AWS resource name
    """
)
_IDENTIFIER_RE = re.compile(
    r"""(?x)
    ^[A-Za-z][a-z]+(?:[A-Z][a-z]+)*$              # camelCase / PascalCase / a word
    | ^[a-z][a-z0-9]*(?:[_-][a-z0-9]+)+$          # snake_case / kebab-case
    | ^[A-Z][A-Z0-9]*(?:[_-][A-Z0-9]+)+$          # CONST_CASE
    | ^[A-Z]+$
    """
)
_UUID_RE = re.compile(r"^[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$")
_HEX_RE = re.compile(r"^[0-9a-fA-F]+$")
_VOWELS = frozenset("aeiouAEIOU")


def shannon(value: str) -> float:
    """Shannon entropy in bits per character."""
    if not value:
        return 0.0
    counts = Counter(value)
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def is_repetitive(value: str) -> bool:
    """Runs, sequences and repeated chunks: ``aaaa``, ``abcdef123456``, ``abcabcabc``."""
    n = len(value)
    if n < 6:
        return len(set(value)) <= 2
    steps = sum(1 for a, b in itertools.pairwise(value) if ord(b) - ord(a) in (0, 1))
    if steps / (n - 1) > 0.5:
        return True
    grams = {value[i : i + 3] for i in range(n - 2)}
    return len(grams) / (n - 2) < 0.6


def is_placeholder(value: str) -> bool:
    """Documentation stand-ins, masks, templates and well-known defaults."""
    low = value.lower()
    if low in DEFAULT_VALUES or value in KNOWN_EXAMPLES:
        return True
    if _PLACEHOLDER_RE.search(value):
        return True
    return len(set(low)) <= 2


def is_reference(value: str) -> bool:
    """Code that *names* a secret instead of containing it."""
    return bool(_REFERENCE_RE.search(value))


def is_identifier(value: str) -> bool:
    """A variable name or English-like word, not a random string."""
    if not _IDENTIFIER_RE.match(value):
        return False
    letters = [c for c in value if c.isalpha()]
    if len(letters) >= 12 and value.isalpha() and (value.islower() or value.isupper()):
        vowels = sum(1 for c in letters if c in _VOWELS) / len(letters)
        return vowels >= 0.25  # random lowercase runs have few vowels
    return True


def char_classes(value: str) -> int:
    lower = any(c.islower() for c in value)
    upper = any(c.isupper() for c in value)
    digit = any(c.isdigit() for c in value)
    other = any(not c.isalnum() for c in value)
    return lower + upper + digit + other


def is_uuid(value: str) -> bool:
    return bool(_UUID_RE.match(value))


def is_hex(value: str) -> bool:
    return bool(_HEX_RE.match(value))


def looks_random(value: str, min_len: int = 16, min_entropy: float = 3.0) -> bool:
    """A machine-generated token: long, varied, not a placeholder, not a sequence."""
    if len(value) < min_len or is_placeholder(value) or is_repetitive(value):
        return False
    if shannon(value) < min_entropy:
        return False
    if is_hex(value):
        return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
    return char_classes(value) >= 2 or not is_identifier(value)


def looks_like_password(value: str, min_len: int = 6) -> bool:
    """A human-chosen or generated password (not a word, a default, or a reference)."""
    if len(value) < min_len or len(value) > 200 or any(c.isspace() for c in value):
        return False
    if is_placeholder(value) or is_reference(value) or is_repetitive(value):
        return False
    if value.isdigit():
        return len(value) >= 8
    if is_identifier(value) and not any(c.isdigit() for c in value):
        return False
    has_digit = any(c.isdigit() for c in value)
    has_symbol = any(not c.isalnum() for c in value)
    mixed = any(c.islower() for c in value) and any(c.isupper() for c in value)
    return has_digit or has_symbol or (mixed and len(value) >= 8)


def looks_like_token(value: str, min_len: int = 16) -> bool:
    """An API key or token assigned to a key name: random-looking and long enough."""
    if any(c.isspace() for c in value) or is_reference(value) or is_placeholder(value):
        return False
    if is_uuid(value):
        return not is_repetitive(value.replace("-", ""))
    if value.isdigit():
        return False
    return looks_random(value, min_len=min_len, min_entropy=3.0)


# --- checksums ---------------------------------------------------------------


def base62(number: int, width: int) -> str:
    digits = []
    while number:
        number, rem = divmod(number, 62)
        digits.append(_BASE62[rem])
    return "".join(reversed(digits)).rjust(width, "0")


@lru_cache(maxsize=256)
def crc32_token_ok(token: str) -> bool:
    """GitHub classic and npm tokens: ``prefix_`` + 30 random + base62(CRC32(random)) in 6."""
    body = token.split("_", 1)[1]
    if len(body) != 36:
        return False
    random_part, check = body[:30], body[30:]
    return base62(zlib.crc32(random_part.encode("ascii")), 6) == check


def decode_b64url(part: str) -> bytes | None:
    try:
        return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
    except (binascii.Error, ValueError):
        return None
