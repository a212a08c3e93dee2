"""Provider secrets without a prefix, recognised by the companion id written next to them.

An AWS secret access key is 40 base64 characters, a Twilio auth token 32 hex digits:
shapes a checksum or a git SHA also has. Next to their own ids (``AKIA…``/``ASIA…``,
Twilio's ``AC…`` account SID, Alibaba's ``LTAI…``, Tencent's ``AKID…``) they are the
other half of a credential pair, whatever the syntax: an ``aws configure`` transcript,
the IAM CSV download, ``Client("AC…", "…")``, "key id / secret" in prose. A value of the
secret's shape within a few lines of the id is reported.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from memoryd.secrets.values import KNOWN_EXAMPLES, is_hex, is_identifier, is_repetitive, shannon

Span = tuple[str, int, int]
_LINES_BEFORE, _LINES_AFTER = 2, 3


def _mixed(min_entropy: float) -> Callable[[str], bool]:
    def check(value: str) -> bool:
        if value in KNOWN_EXAMPLES or is_repetitive(value) or is_identifier(value):
            return False
        classes = (any(c.isupper() for c in value), any(c.islower() for c in value),
                   any(c.isdigit() for c in value))  # fmt: skip
        return all(classes) and shannon(value) >= min_entropy

    return check


def _random(value: str) -> bool:
    """Letters and digits of high entropy, not a word or a sequence (SKs come in any case)."""
    has_both = any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
    if not has_both or is_repetitive(value) or is_identifier(value):
        return False
    return shannon(value) >= (3.0 if is_hex(value) else 3.5)


def _hex(value: str) -> bool:
    has_both = any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
    return has_both and not is_repetitive(value) and shannon(value) >= 3.0


@dataclass(frozen=True)
class Pair:
    rule: str
    keywords: tuple[str, ...]  # case-sensitive literals, one of which the id starts with
    id_re: re.Pattern[str]
    secret_re: re.Pattern[str]
    check: Callable[[str], bool]


PAIRS = (
    Pair(
        "aws-secret-access-key",
        ("AKIA", "ASIA", "ABIA", "ACCA"),
        re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}(?![A-Z0-9])"),
        re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"),
        _mixed(4.0),
    ),
    Pair(
        "twilio-auth-token",
        ("AC",),
        re.compile(r"(?<![A-Za-z0-9])AC[0-9a-f]{32}(?![A-Za-z0-9])"),
        re.compile(r"(?<![A-Za-z0-9])[0-9a-f]{32}(?![A-Za-z0-9])"),
        _hex,
    ),
    Pair(
        "alibaba-access-key-secret",
        ("LTAI",),
        re.compile(r"(?<![A-Za-z0-9])LTAI[A-Za-z0-9]{12,20}(?![A-Za-z0-9])"),
        re.compile(r"(?<![A-Za-z0-9])[A-Za-z0-9]{30}(?![A-Za-z0-9])"),
        _mixed(4.0),
    ),
    Pair(
        "tencent-secret-key",
        ("AKID",),
        re.compile(r"(?<![A-Za-z0-9])AKID[A-Za-z0-9]{32}(?![A-Za-z0-9])"),
        re.compile(r"(?<![A-Za-z0-9])[A-Za-z0-9]{32}(?![A-Za-z0-9])"),
        _mixed(4.0),
    ),
    Pair(  # Huawei, Baidu, Qiniu, Volcengine consoles: "AK: …  SK: …"
        "access-key-secret",
        ("AK", "AccessKey"),
        re.compile(
            r"(?<![A-Za-z0-9])(?:AK|AccessKey(?:[ _]?ID)?)(?:[ \t]*[:：=][ \t]*|[ \t]+)"
            r"[A-Za-z0-9_\-]{16,40}"
            r"(?![A-Za-z0-9])"
        ),
        re.compile(
            r"(?<![A-Za-z0-9])(?:SK|SecretKey|SecretAccessKey)[ \t]*[:：=]?[ \t]*"
            r"(?P<v>[A-Za-z0-9/+_\-]{24,64})(?![A-Za-z0-9/+_\-])"
        ),
        _random,
    ),
)


def paired_spans(text: str) -> Iterator[Span]:
    """Secrets of a pair's shape within a few lines of the pair's id."""
    for pair in PAIRS:
        if not any(k in text for k in pair.keywords):
            continue
        for found in pair.id_re.finditer(text):
            if found.group().endswith("EXAMPLE"):
                continue
            lo, hi = _window(text, found.start())
            for match in pair.secret_re.finditer(text, lo, hi):
                group = "v" if "v" in pair.secret_re.groupindex else 0
                start, end = match.span(group)
                if start < found.end() and found.start() < end:
                    continue  # the id itself
                if pair.check(match.group(group)):
                    yield (pair.rule, start, end)


def _window(text: str, pos: int) -> tuple[int, int]:
    lo = pos
    for _ in range(_LINES_BEFORE + 1):
        lo = text.rfind("\n", 0, lo - 1) + 1 if lo > 0 else 0
    hi = pos
    for _ in range(_LINES_AFTER + 1):
        nxt = text.find("\n", hi + 1)
        hi = len(text) if nxt == -1 else nxt
        if nxt == -1:
            break
    return lo, hi
