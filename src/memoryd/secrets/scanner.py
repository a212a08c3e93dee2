"""The secret gate's scanner: ``scan(text) -> list[SecretFinding]``.

Pure and fast: provider rules run only when their literal keywords occur, the
generic layer (keyword assignments, URL credentials, private key blocks) judges
values by shape. A finding never carries the secret itself, only a redacted
preview (first and last few characters) and a fingerprint (a slow salted hash)
that the per-root allowlist stores instead of the value.

Deliberate false positives are allowed on their line with a comment containing
``memoryd:allow`` (``gitleaks:allow`` and ``pragma: allowlist secret`` are
honoured too), or by adding the finding's fingerprint to ``.memoryd-allowlist``
at the root of the memory tree (or the repository).
"""

from __future__ import annotations

import hashlib
import logging
import re
from bisect import bisect_right
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import asdict, dataclass, replace
from functools import lru_cache
from pathlib import Path

from memoryd.secrets.configs import config_spans
from memoryd.secrets.connstr import connection_spans
from memoryd.secrets.generic import keyword_spans, table_spans
from memoryd.secrets.paired import paired_spans
from memoryd.secrets.published import published_by_design
from memoryd.secrets.rules import RULES as _BASE_RULES
from memoryd.secrets.rules import Rule
from memoryd.secrets.signing import signing_spans
from memoryd.secrets.structs import CLI_WORDS, cli_spans, private_key_spans, url_spans
from memoryd.secrets.vendors import VENDOR_RULES

log = logging.getLogger(__name__)

ALLOWLIST_FILE = ".memoryd-allowlist"
PRAGMAS = ("memoryd:allow", "gitleaks:allow", "pragma: allowlist secret")
WINDOW_CHARS = 1024 * 1024  # a long text is scanned in windows this long...
OVERLAP_CHARS = 64 * 1024  # ...each reaching this far into the next (no secret is longer)
BINARY_PROBE_BYTES = 8192  # a NUL in the first bytes: a binary file, not scanned
RULES = _BASE_RULES + VENDOR_RULES
_RULES_BY_KEYWORD: dict[str, list[int]] = {}
for _i, _rule in enumerate(RULES):
    for _k in () if _rule.context else _rule.keywords:
        _RULES_BY_KEYWORD.setdefault(_k, []).append(_i)
_TOKEN_KEYWORDS = tuple(_RULES_BY_KEYWORD)
_CONTEXT_RULES = tuple(rule for rule in RULES if rule.context)
_PUBLISHABLE_AWARE = frozenset({"gcp-api-key", "jwt"})
_PUBLIC_NAME_RE = re.compile(r"(?i)public|publishable|\banon")
_FINGERPRINT_SALT = b"memoryd-secret-fingerprint-v1"
_FINGERPRINT_ROUNDS = 2000


@dataclass(frozen=True)
class SecretFinding:
    """One secret: where it is and how to recognise it, never what it is."""

    rule: str
    line: int  # 1-based
    start: int  # 1-based column of the first character
    end: int  # 1-based column just past the last character on that line
    preview: str  # first and last few characters only
    fingerprint: str  # salted slow hash of the value; what allowlists store

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class _Candidate:
    priority: int
    rule: str
    start: int
    end: int


def scan(text: str, *, pragmas: bool = True, allow: Collection[str] = ()) -> list[SecretFinding]:
    """Every secret in ``text``, in order. Pragma lines and ``allow`` fingerprints are skipped."""
    candidates = _dedupe(
        _Candidate(c.priority, c.rule, c.start + at, c.end + at)
        for at, end in windows(text)
        for c in _candidates(text[at:end] if (at, end) != (0, len(text)) else text)
    )
    if not candidates:
        return []
    line_starts = _line_starts(text)
    findings = []
    for cand in candidates:
        finding = _finding(text, line_starts, cand)
        if allow and finding.fingerprint in allow:
            continue
        if pragmas and _has_pragma(text, line_starts, finding.line):
            continue
        findings.append(finding)
    return findings


def scan_path(
    path: Path, root: Path | None = None, *, allow: Collection[str] | None = None
) -> list[SecretFinding]:
    """Scan one file, honouring pragmas and the allowlist of ``root`` (found upwards if None).

    ``allow`` passes an already loaded allowlist (a caller scanning many files of one root).
    """
    text = read_text(path)
    if text is None:
        return []
    if allow is None:
        allow = allowlist_for(path, root)
    return scan_file_text(path.name, text, allow)


def scan_file_text(name: str, text: str, allow: Collection[str] = ()) -> list[SecretFinding]:
    """The text of a file called ``name``. An allowlist is read for its entries alone: a
    value pasted in place of a fingerprint leaks, a comment naming a finding
    (``# generic-password facts/env.md:8``) is not one."""
    if name.rsplit("/", 1)[-1] == ALLOWLIST_FILE:
        text = _COMMENT_RE.sub(lambda m: " " * len(m.group()), text)  # columns kept
    return scan(text, allow=allow)


_COMMENT_RE = re.compile(r"#[^\n]*")


def allowlist_for(path: Path, root: Path | None = None) -> frozenset[str]:
    """The allowlist of ``root``, or the one found upwards from ``path`` if None."""
    allow_root = root if root is not None else find_allowlist_root(path)
    return load_allowlist(allow_root) if allow_root is not None else frozenset()


NAME_LINE = 0  # the ``line`` of a finding in a file's name, not in its text
# What any rule needs in a name: a run of 16 characters no separator cuts (every token is
# that long), or an assignment, URL or prose character (key=value, user:pw@host, spaces).
_NAME_WORTH_SCANNING_RE = re.compile(r"[^/_\-.\s]{16,}|[=:@\s]")


def scan_name(name: str, allow: Collection[str] = ()) -> list[SecretFinding]:
    """Secrets in a file's (relative) name: ``facts/<token>.md`` puts the token in every
    tree, commit message and compiled index that names the file. Each folder is read as a
    line of its own; the findings have ``line`` :data:`NAME_LINE` and columns in ``name``."""
    if not _NAME_WORTH_SCANNING_RE.search(name):
        return []  # a slug of short words (facts/the-build-uses-python-3-12.md)
    found = []
    starts = _line_starts(name.replace("/", "\n"))
    for f in scan(name.replace("/", "\n"), pragmas=False, allow=allow):
        offset = starts[f.line - 1]
        found.append(replace(f, line=NAME_LINE, start=offset + f.start, end=offset + f.end))
    return found


def redact_name(name: str, findings: Iterable[SecretFinding]) -> str:
    """``name`` with each of its secrets (findings of :func:`scan_name`) shown as the preview."""
    for f in sorted(findings, key=lambda f: f.start, reverse=True):
        name = name[: f.start - 1] + f.preview + name[f.end - 1 :]
    return name


def read_text(path: Path) -> str | None:
    """The file as text, or None for a binary file. A big file is read whole: a secret
    at the end of a 5 MB log is still a secret (the scan takes windows of it)."""
    return decode(path.read_bytes())


_UTF16_BOMS = {b"\xff\xfe": "utf-16-le", b"\xfe\xff": "utf-16-be"}


def decode(data: bytes) -> str | None:
    """Text as the scanner reads it, or None for a binary file. UTF-16 with its byte order
    mark (what Windows PowerShell's ``>`` writes, an ``.env`` among them) is text too,
    though every other byte of it is a NUL."""
    codec = _UTF16_BOMS.get(data[:2])
    if codec is not None and not data.startswith(b"\xff\xfe\0\0"):  # not UTF-32
        return data[2:].decode(codec, errors="replace")
    if b"\0" in data[:BINARY_PROBE_BYTES]:
        return None
    return data.decode("utf-8", errors="replace")


def windows(text: str) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of the windows a text is scanned in: the whole of a short text;
    a long one in windows of about :data:`WINDOW_CHARS`, starting and ending on line
    boundaries where a line allows, each overlapping the next by at least
    :data:`OVERLAP_CHARS`, so a secret shorter than that lies whole in one of them and
    each scan stays the size the detectors were measured on."""
    size, start = len(text), 0
    while True:
        end = min(size, start + WINDOW_CHARS + OVERLAP_CHARS)
        if end < size:
            cut = text.rfind("\n", start + WINDOW_CHARS, end)
            end = cut + 1 if cut != -1 else end
        yield start, end
        if end >= size:
            return
        following = text.rfind("\n", start, end - OVERLAP_CHARS) + 1
        start = following if following > start else end - OVERLAP_CHARS


# --- allowlist -------------------------------------------------------------------


def load_allowlist(root: Path) -> frozenset[str]:
    """Fingerprints listed in ``root/.memoryd-allowlist`` (first word of each line)."""
    try:
        text = (root / ALLOWLIST_FILE).read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return frozenset()
    entries = set()
    for line in text.splitlines():
        word = line.split("#", 1)[0].strip()
        if word:
            entries.add(word.split()[0].lower())
    return frozenset(entries)


def find_allowlist_root(path: Path) -> Path | None:
    """The nearest folder above ``path`` holding an allowlist, stopping at a repository top."""
    return allowlist_root_of_folder(path.resolve().parent)


def allowlist_root_of_folder(folder: Path) -> Path | None:
    for candidate in (folder, *folder.parents):
        if (candidate / ALLOWLIST_FILE).is_file():
            return candidate
        if (candidate / ".git").exists():
            return None
    return None


class AllowlistCache:
    """Allowlists for many files, looked up once per folder (one scan, not a daemon's life)."""

    def __init__(self) -> None:
        self._roots: dict[Path, Path | None] = {}
        self._lists: dict[Path, frozenset[str]] = {}

    def for_file(self, path: Path) -> frozenset[str]:
        folder = path.parent
        if folder not in self._roots:
            self._roots[folder] = allowlist_root_of_folder(folder.resolve())
        root = self._roots[folder]
        if root is None:
            return frozenset()
        if root not in self._lists:
            self._lists[root] = load_allowlist(root)
        return self._lists[root]


def allowlist_line(finding: SecretFinding, where: str) -> str:
    """The line to add to an allowlist for ``finding`` (no secret in it)."""
    return f"{finding.fingerprint}  # {finding.rule} {where}"


# --- redaction -------------------------------------------------------------------


def preview(secret: str) -> str:
    """First and last few characters; short secrets show almost nothing."""
    keep = min(4, len(secret) // 5)
    if keep == 0:
        return "*" * 4
    return f"{secret[:keep]}…{secret[-keep:]}"


@lru_cache(maxsize=4096)
def fingerprint(secret: str) -> str:
    """A salted, slow hash: stable across files and devices, useless for guessing."""
    digest = hashlib.pbkdf2_hmac(
        "sha256", secret.encode("utf-8"), _FINGERPRINT_SALT, _FINGERPRINT_ROUNDS
    )
    return digest.hex()[:20]


# --- internals -------------------------------------------------------------------


Detector = Callable[[str, str], Iterable[tuple[str, int, int]]]

# (cheap test on text and lower-cased text, detector, priority): provider 3 > structural 2 >
# generic 1 when findings overlap.
_DETECTORS: tuple[tuple[Callable[[str, str], bool], Detector, int], ...] = (
    (lambda t, lo: "://" in t and "@" in t, lambda t, lo: url_spans(t), 2),
    (lambda t, lo: "private key" in lo or "private-lines" in lo,
     lambda t, lo: private_key_spans(t), 2),
    (lambda t, lo: any(w in lo for w in CLI_WORDS), lambda t, lo: cli_spans(t), 2),
    (lambda t, lo: ("=" in t and ("pass" in lo or "pwd" in lo)) or ("@" in t and ":" in t),
     lambda t, lo: connection_spans(t), 2),
    (lambda t, lo: True, lambda t, lo: config_spans(t), 2),
    (lambda t, lo: "secret" in lo or "key" in lo or "jwt" in lo, signing_spans, 2),
    (lambda t, lo: True, lambda t, lo: paired_spans(t), 3),
    (lambda t, lo: True, keyword_spans, 1),
    (lambda t, lo: "|" in t and "---" in t, lambda t, lo: table_spans(t), 1),
)  # fmt: skip


def _candidates(text: str) -> Iterable[_Candidate]:
    """Every detector's findings, less truncated values and keys published on purpose."""
    for cand in _raw_candidates(text):
        if not _truncated(text, cand.start, cand.end) and not published_by_design(
            text, cand.start, cand.end, cand.rule
        ):
            yield cand


def _raw_candidates(text: str) -> Iterable[_Candidate]:
    lower = text.lower()
    yield from _provider_candidates(text, lower)
    for applies, detector, priority in _DETECTORS:
        if applies(text, lower):
            for rule_id, start, end in detector(text, lower):
                yield _Candidate(priority, rule_id, start, end)


_ELLIPSES = ("...", "\u2026")


def _truncated(text: str, start: int, end: int) -> bool:
    """``sk-proj-Ab3d...``: a value cut short for display is not the secret."""
    return text.startswith(_ELLIPSES, end) or text.endswith(_ELLIPSES, start, end)


def _provider_candidates(text: str, lower: str) -> Iterable[_Candidate]:
    """Token rules run only on notes with a word of 16+ characters holding their keyword.

    A token never contains whitespace, so a rule that does not match the long words
    alone (a much shorter string) cannot match the note either.
    """
    words = "\n".join(w for w in text.split() if len(w) >= 16)
    rules: list[Rule] = []
    if words:
        words_lower = words.lower()
        present = [k for k in _TOKEN_KEYWORDS if k in words_lower]
        chosen = {i for k in present for i in _RULES_BY_KEYWORD[k]}
        rules = [RULES[i] for i in sorted(chosen) if RULES[i].regex.search(words)]
    rules += [r for r in _CONTEXT_RULES if any(k in lower for k in r.keywords)]
    for rule in rules:
        for match in rule.regex.finditer(text):
            if rule.check is not None and not rule.check(match.group(rule.group)):
                continue
            start, end = match.start(rule.group), match.end(rule.group)
            if rule.id in _PUBLISHABLE_AWARE and _named_public(text, start):
                continue
            yield _Candidate(rule.priority, rule.id, start, end)


def _named_public(text: str, start: int) -> bool:
    """``NEXT_PUBLIC_FIREBASE_API_KEY=AIza…``: a key its owner named public is publishable."""
    line_start = text.rfind("\n", 0, start) + 1
    return bool(_PUBLIC_NAME_RE.search(text, line_start, start))


def _dedupe(candidates: Iterable[_Candidate]) -> list[_Candidate]:
    """Overlapping findings collapse into the most specific one (one sweep in text order)."""
    kept: list[_Candidate] = []
    for cand in sorted(candidates, key=lambda c: (c.start, -c.priority, -c.end)):
        if kept and cand.start < kept[-1].end:
            if cand.priority > kept[-1].priority:
                kept[-1] = cand
            continue
        kept.append(cand)
    return kept


def _line_starts(text: str) -> list[int]:
    starts = [0]
    pos = text.find("\n")
    while pos != -1:
        starts.append(pos + 1)
        pos = text.find("\n", pos + 1)
    return starts


def _finding(text: str, line_starts: list[int], cand: _Candidate) -> SecretFinding:
    index = bisect_right(line_starts, cand.start) - 1
    line_start = line_starts[index]
    line_end = text.find("\n", line_start)
    line_end = len(text) if line_end == -1 else line_end
    secret = text[cand.start : cand.end]
    return SecretFinding(
        rule=cand.rule,
        line=index + 1,
        start=cand.start - line_start + 1,
        end=min(cand.end, line_end) - line_start + 1,
        preview=preview(secret),
        fingerprint=fingerprint(secret),
    )


def _has_pragma(text: str, line_starts: list[int], line: int) -> bool:
    start = line_starts[line - 1]
    end = line_starts[line] - 1 if line < len(line_starts) else len(text)
    content = text[start:end]
    return any(p in content for p in PRAGMAS)
