"""What a citation is, as text: pure functions, no file system.

A memory's ``cites:`` frontmatter lists citations, each one string::

    src/net/retry.py:40-58#3f2a9c1b7d4e      lines 40 to 58 of a file
    src/net/retry.py#0c1d2e3f4a5b            the whole file
    src/net/retry.py:40                      line 40, fingerprint not filled in yet
    github.com/me/app::src/net/retry.py:40-58#3f2a9c1b7d4e

The path is relative to the project's git top level, with ``/`` separators. A
citation in a global memory starts with the repository it belongs to and ``::``
(see :func:`repo_identity`), so it is checked only in that project. The
fingerprint is the first 12 hex digits of the SHA-256 of the cited text
*normalised*: decoded as UTF-8 (undecodable bytes replaced), each line without
its line end and trailing white space, the lines joined with ``\\n``. So a file
converted to CRLF, or a line that lost trailing spaces, still matches; any other
change to the cited lines does not.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from memoryd.errors import UsageError

HASH_LEN = 12
_CITE = re.compile(
    r"(?:(?P<repo>[^\s:]+(?::[^\s:]+)*)::)?"
    r"(?P<path>[^\s#:][^\s#]*?)"
    r"(?::(?P<start>[1-9][0-9]*)(?:-(?P<end>[1-9][0-9]*))?)?"
    rf"(?:#(?P<hash>[0-9a-f]{{{HASH_LEN}}}))?"
)


@dataclass(frozen=True)
class Citation:
    """One cited file (and lines) in a memory's text."""

    path: str  # relative to the git top level, '/'-separated
    start: int | None = None  # first cited line (1-based); None: the whole file
    end: int | None = None  # last cited line, inclusive
    hash: str | None = None  # fingerprint of the cited text; None: not filled in
    repo: str | None = None  # the repository, for a citation in a global memory

    @property
    def where(self) -> str:
        """``path:A-B`` (or the path alone): what a person opens."""
        if self.start is None:
            return self.path
        return f"{self.path}:{self.start}" + (f"-{self.end}" if self.end != self.start else "")

    def text(self) -> str:
        """The citation as ``cites:`` holds it."""
        head = f"{self.repo}::" if self.repo else ""
        return head + self.where + (f"#{self.hash}" if self.hash else "")

    def moved(self, start: int, end: int, path: str | None = None) -> Citation:
        return replace(self, path=path or self.path, start=start, end=end)


def parse(text: str) -> Citation:
    """A citation from its text; a :class:`UsageError` naming the syntax when it is not one."""
    match = _CITE.fullmatch(text.strip()) if isinstance(text, str) else None
    if match is None or _bad_path(match["path"]):
        raise UsageError(
            f"not a citation: {text!r}",
            hint="write PATH, PATH:LINE or PATH:FIRST-LAST, relative to the project's top "
            "folder (memoryd fills in the #fingerprint)",
        )
    start = int(match["start"]) if match["start"] else None
    end = int(match["end"]) if match["end"] else start
    if start is not None and end is not None and end < start:
        raise UsageError(
            f"not a citation: {text!r} ends before it starts",
            hint=f"write {match['path']}:{end}-{start}",
        )
    return Citation(match["path"], start, end, match["hash"], match["repo"])


def parse_all(value: object) -> tuple[list[Citation], list[str]]:
    """The citations of a ``cites:`` value, and the entries that are not citations."""
    items = value if isinstance(value, list) else [] if value is None else [value]
    good: list[Citation] = []
    bad: list[str] = []
    for item in items:
        try:
            good.append(parse(item) if isinstance(item, str) else _not_text(item))
        except UsageError:
            bad.append(str(item))
    return good, bad


def _not_text(item: object) -> Citation:
    raise UsageError(f"not a citation: {item!r}")


def _bad_path(path: str) -> bool:
    parts = path.split("/")
    return path.startswith("/") or "\\" in path or any(p in ("", ".", "..") for p in parts)


def lines_of(data: bytes) -> list[str]:
    """A file's lines, normalised as fingerprints see them."""
    return [line.rstrip() for line in data.decode("utf-8", "replace").splitlines()]


def fingerprint(lines: Sequence[str]) -> str:
    import hashlib  # OpenSSL: kept off a recall whose hits cite nothing

    joined = "\n".join(line.rstrip() for line in lines)
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()[:HASH_LEN]


def cited(lines: Sequence[str], citation: Citation) -> list[str] | None:
    """The lines a citation covers in ``lines`` (None: the range lies past the end)."""
    if citation.start is None:
        return list(lines)
    assert citation.end is not None
    if citation.end > len(lines):
        return None
    return list(lines[citation.start - 1 : citation.end])


def anchored(lines: Sequence[str], citation: Citation) -> Citation:
    """``citation`` with the fingerprint of what it covers in ``lines`` now."""
    covered = cited(lines, citation)
    if covered is None:
        raise UsageError(
            f"cannot cite {citation.where}: the file has only {len(lines)} "
            + ("line" if len(lines) == 1 else "lines"),
            hint=f"cite lines within 1-{len(lines)}",
        )
    return replace(citation, hash=fingerprint(covered))


def find(lines: Sequence[str], citation: Citation) -> tuple[int, int] | None:
    """Where the cited text stands in ``lines`` now: its own place first, then the nearest
    place where the same number of lines has the same fingerprint (None: nowhere)."""
    if citation.hash is None:
        return None
    if citation.start is None:
        return (1, len(lines)) if fingerprint(lines) == citation.hash else None
    first, last = citation.start, citation.end
    assert last is not None
    size = last - first + 1
    here = cited(lines, citation)
    if here is not None and fingerprint(here) == citation.hash:
        return first, last
    import hashlib

    text = "\n".join(line.rstrip() for line in lines)  # every window is a slice of it
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line.rstrip()) + 1)
    for start in _outwards(first, len(lines) - size + 1):
        window = text[offsets[start - 1] : offsets[start - 1 + size] - 1]
        if hashlib.sha256(window.encode("utf-8")).hexdigest()[:HASH_LEN] == citation.hash:
            return start, start + size - 1
    return None


def _outwards(origin: int, last: int) -> Iterator[int]:
    """1..last, nearest to ``origin`` first: moved text is usually close by."""
    origin = min(max(origin, 1), max(last, 1))
    for step in range(max(last, 0) + 1):
        for candidate in (origin - step, origin + step) if step else (origin,):
            if 1 <= candidate <= last:
                yield candidate


def repo_identity(remote_url: str | None, top: str) -> str:
    """How a global memory names a repository: its remote without scheme, user, ``.git``
    (``git@github.com:me/app.git`` and ``https://github.com/me/app`` are both
    ``github.com/me/app``), or the project's top folder when it has no remote."""
    if not remote_url:
        return top
    url = remote_url.strip()
    url = re.sub(r"^[a-z][a-z0-9+.-]*://", "", url)
    url = re.sub(r"^[^@/]+@", "", url)
    url = re.sub(r"^([^/:]+):(?!\d+/)", r"\1/", url)  # scp syntax host:path
    url = re.sub(r"(\.git)?/*$", "", url)
    return url
