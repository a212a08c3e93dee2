"""Fake credentials built from pieces at run time, so no literal looks like a real one.

Deterministic (seeded by name) so failures are reproducible; never valid anywhere.
"""

from __future__ import annotations

import base64
import json
import random
import string
import zlib

from memoryd.secrets.values import base62

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
LOWER_ALNUM = string.ascii_lowercase + string.digits


def _classes(value: str) -> int:
    groups = (string.ascii_lowercase, string.ascii_uppercase, string.digits)
    return sum(any(c in group for c in value) for group in groups)


def rand(seed: str, n: int, alphabet: str = ALNUM) -> str:
    """``n`` random characters from ``alphabet``, mixing its character classes."""
    rng = random.Random(seed)
    while True:
        value = "".join(rng.choice(alphabet) for _ in range(n))
        if n < 8 or _classes(value) >= min(2, _classes(alphabet)):
            return value


def with_crc(prefix: str, seed: str) -> str:
    body = rand(seed, 30)
    return f"{prefix}_{body}{base62(zlib.crc32(body.encode()), 6)}"


def github(seed: str = "gh", kind: str = "ghp") -> str:
    return with_crc(kind, seed)


def npm(seed: str = "npm") -> str:
    return with_crc("npm", seed)


def bad_checksum(token: str) -> str:
    last = token[-1]
    return token[:-1] + ("A" if last != "A" else "B")


def jwt(claims: dict[str, object], seed: str = "jwt") -> str:
    def enc(obj: dict[str, object]) -> str:
        raw = json.dumps(obj, separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    return f"{enc({'alg': 'HS256', 'typ': 'JWT'})}.{enc(claims)}.{rand(seed, 43, ALNUM + '-_')}"


def pem(kind: str = "RSA", seed: str = "pem", escaped: bool = False) -> str:
    body = base64.b64encode(random.Random(seed).randbytes(300)).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    sep = "\\n" if escaped else "\n"
    head = f"-----BEGIN {kind} PRIVATE KEY-----".replace("  ", " ")
    tail = f"-----END {kind} PRIVATE KEY-----".replace("  ", " ")
    return sep.join([head, *lines, tail])
