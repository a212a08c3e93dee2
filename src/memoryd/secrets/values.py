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

from memoryd.secrets.published import PUBLISHED_VALUES


def wordset(text: str) -> frozenset[str]:
    """The whitespace-separated words of ``text`` (keeps long vocabularies readable)."""
    return frozenset(text.split())


_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

# Whole values that documentation and tutorials use as stand-ins.
DOC_VALUES = wordset(
    """
    password pass pwd passwd secret secrets changeme changeit example default sample demo dummy
    foobar foo bar baz hunter2 none null nil empty todo tbd fixme xxx na n/a true false undefined
    required optional string str value mypassword yourpassword supersecret secretpassword
    mysecretpassword my-secret-pw mysecret token apikey api_key your_token your_api_key foobared
    your-api-key yourtoken mytoken secretkey secret_key placeholder redacted hidden masked
    """
)
# Well-known throwaway defaults of local setups (images, tutorials, dev databases).
WEAK_DEFAULTS = wordset(
    """
    passw0rd p@ssw0rd p@ssword pass123 pass1234 password1 password123 admin admin123
    administrator root toor guest test test123 testing tester secret123 letmein welcome qwerty
    123456 1234567 12345678 123456789 1234567890 111111 000000 abc123 postgres postgresql mysql
    redis mongo mongodb rabbitmq user username rootpassword adminpassword dev development local
    localhost docker vagrant ubuntu pi raspberry oracle sa sapassword minioadmin minio elastic
    changeme123 wordpress keycloak airflow superset grafana jenkins
    """
)
DEFAULT_VALUES = DOC_VALUES | WEAK_DEFAULTS

# Values that are known public examples (vendor docs); never a live credential.
KNOWN_EXAMPLES = PUBLISHED_VALUES

_PLACEHOLDER_RE = re.compile(
    r"(?ix) x{4,} | \*{3,} | \u2022{2,} | \.\.\. | \u2026 | <[^<>\n]{0,60}>"
    r" | \{\{ | \$\{ | \$\( | %\( | \#\{ | <%  | \bchange[_-]?me\b"
    r" | replace[_-]?(?:me|with|this) | your[_-]?[a-z] | your[_-]\d"
    r" | placeholder | redacted | example | dummy | \binsert[_-]"
    r" | [_-]here\b | \bhere$ | (?-i:[a-z0-9]Here$)"  # PasteYourTokenHere
    r" | ^(?:sample|demo|test|fake|mock)[_-] | [_-](?:sample|placeholder)$"
    r" | ^\[[^\]]*\]$ | ^\{[^}]*\}$ | ^\([^)]*\)$ | ^%[a-z_]+%$ | ^@[a-z_]+@$"
    r" | ^(?:enc|vault|ssm|secret|secrets|env|op|awskms|gcpkms|azurekv|ref|sops)[:(\[]"
    r" | ^\$ansible_vault | ^!vault"
)
_REFERENCE_RE = re.compile(
    r"""(?x)
    ^\$(?:[{(]|[A-Za-z_]\w*$|\d$) | ^[{\[(]           # a variable; structure
    | ^\$[A-Za-z_]\w*\[                              # PHP's $_ENV['X'], $config['db']
    | ^[}\])>]                                        # the end of a template: }}@host
    | ^![\w!/:]+$ | ^@[\w.\-/]+$                      # a YAML tag; an @reference
    | \w\(                                             # a function call: getenv(...)
    | ^[A-Za-z_][\w]*\[                               # subscript: os.environ[...]
    | ^[A-Za-z]:\\                                    # a Windows path
    | ^[a-z][a-z0-9+.-]*://                           # a URL (its credentials: own rule)
    | ^(?:sha\d+|md5|sha)[:-]                         # digests, SRI hashes
    | ^arn:                                           # an AWS resource name
    | ^(?:id|src|source|env|type|target|required)=[^,\s]*(?:,|$)  # --secret id=x,env=Y
    | ^AAAA[BCE][0-9A-Za-z]{8} | ^(?:ssh|ecdsa|sk-ssh)-  # an SSH public key
    """
)
# An attribute path (settings.X, a.b(), TypeScript's non-null process.env.X!) when its parts
# are names; walnut.copper46 is not.
_ATTRIBUTE_RE = re.compile(
    r"^(?![a-z]+\.[a-z]+\d{2,}$)[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:[(\[].*|!)?$"
)
_EMAIL_RE = re.compile(r"^[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+$")
_UPPER_NAME_RE = re.compile(r"^[A-Z][A-Z0-9_]*$")
_SNAKE_NAME_RE = re.compile(r"^[a-z_][a-z0-9_\-]*$")
_PATH_RE = re.compile(r"^(?:~|\.\.?)?/[\w.\-/]*$")
_SEPARATED_NAME_RE = re.compile(r"^(?:[a-z]+(?:[_.\-][a-z]+)+|[A-Z]+(?:[_.\-][A-Z]+)+)$")
_LOWER_NAME_RE = re.compile(r"^[a-z_.\-]+$")
_NAME_CHARS_RE = re.compile(r"^[A-Za-z0-9_.\-/:]+$")
_NAME_PARTS_RE = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
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


def is_placeholder(value: str, defaults: bool = True) -> bool:
    """Documentation stand-ins, masks, templates and (``defaults``) well-known local defaults."""
    low = value.lower()
    if low in (DEFAULT_VALUES if defaults else DOC_VALUES) or value in KNOWN_EXAMPLES:
        return True
    if _PLACEHOLDER_RE.search(value):
        return True
    return len(set(low)) <= 2


def is_reference(value: str) -> bool:
    """Code that *names* a secret instead of containing it."""
    if _PATH_RE.match(value) and all(_path_part(p) for p in value.split("/")):
        return True  # /run/secrets/db_password, ~/.ssh/id_ed25519
    if value[:1] in "*&" and (is_identifier(value[1:]) or _LOWER_NAME_RE.match(value[1:])):
        return True  # a YAML alias or anchor: *default_password
    if _ATTRIBUTE_RE.match(value):
        names = value.removesuffix("!").split(".")
        if value.endswith("!") and len(names) < 3 and names[0] != "this":
            return False  # Summer.Time! is a password; process.env.X!, this.key! are code
        return "(" in value or "[" in value or all(_is_name(p) for p in names)
    return bool(_REFERENCE_RE.search(value))


def _is_name(part: str) -> bool:
    return bool(_SNAKE_NAME_RE.match(part) or _UPPER_NAME_RE.match(part)) or is_identifier(part)


def is_identifier(value: str) -> bool:
    """Names made of words (``SSHPrivateKeyTypes``, ``old_refresh_token``, ``io.x/fooBar``).

    Split at case changes, digits and separators, a name is made of words with vowels
    and short acronyms; a random token breaks into vowelless runs and one-letter bits.
    """
    if not _NAME_CHARS_RE.match(value):
        return False
    parts = _NAME_PARTS_RE.findall(value)
    words = [p for p in parts if not p.isdigit()]
    if not words:
        return False
    numbers = [p for p in parts if p.isdigit()]
    if len(numbers) > 2 or sum(len(n) for n in numbers) > 6:
        return False
    if sum(1 for w in words if len(w) == 1) > 1:  # random case flips leave 1-letter bits
        return False
    letters = sum(len(w) for w in words)
    wordlike = sum(len(w) for w in words if _is_word(w))
    return letters / len(words) >= 3 and wordlike / letters >= 0.75


def _is_word(part: str) -> bool:
    if len(part) <= 2 or (part.isupper() and len(part) <= 4):
        return True  # io, Am; an acronym: SSH, API, URL
    vowels = sum(1 for c in part if c in _VOWELS)
    with_y = vowels + part.lower().count("y")
    return vowels / len(part) >= 0.2 or (len(part) >= 5 and with_y / len(part) >= 0.25)


def _path_part(part: str) -> bool:
    return len(part) <= 12 or "." in part or is_identifier(part) or bool(_LOWER_NAME_RE.match(part))


def sentence_end(text: str, pos: int) -> bool:
    """Whether a ``.`` or ``,`` just before ``pos`` ends prose rather than belongs to a value:
    the line ends there, or a new sentence (a capital, a CJK character) follows."""
    rest = text[pos : pos + 2]
    if not rest or rest[0] == "\n" or rest == " ":
        return True
    return rest[0] == " " and (rest[1].isupper() or not rest[1].isascii())


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
    if len(value) < min_len or any(c.isspace() for c in value) or _EMAIL_RE.match(value):
        return False
    if is_placeholder(value) or is_repetitive(value):
        return False
    if shannon(value) < min_entropy:
        return False
    if is_hex(value):
        return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
    return not is_identifier(value) and not _SEPARATED_NAME_RE.match(value)


def looks_like_password(value: str, min_len: int = 6) -> bool:
    """A human-chosen or generated password (not a word, a default, or a reference)."""
    if len(value) < min_len or len(value) > 200 or any(c.isspace() for c in value):
        return False
    if is_placeholder(value) or is_reference(value) or is_repetitive(value):
        return False
    if value.isdigit():
        return len(value) >= 8
    if _LOWER_NAME_RE.match(value):
        return False  # pass_fds, db_password_file: a name, not a password
    if is_identifier(value) and not any(c.isdigit() for c in value):
        return False
    has_digit = any(c.isdigit() for c in value)
    has_symbol = any(not c.isalnum() for c in value)
    mixed = any(c.islower() for c in value) and any(c.isupper() for c in value)
    return has_digit or has_symbol or (mixed and len(value) >= 10)


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
