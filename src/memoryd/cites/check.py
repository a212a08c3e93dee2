"""Checking citations against the working tree a caller stands in.

The check that counts is the one made when a memory is used (``recall``
returns it, ``context`` injects it): each citation's file is read from the
current working tree and the cited text looked for by its fingerprint. Text
that moved within the file (lines added above it) is followed; a file renamed
in git (committed, or staged by ``git mv``) is followed to its new path. What
is neither found nor followed is *stale*, and says which citation and why.

A citation in a global memory names its repository and is checked only in
that project; elsewhere it is *elsewhere*, neither fresh nor stale.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from memoryd.cites.citation import (
    Citation,
    cited,
    find,
    fingerprint,
    lines_of,
    parse_all,
    repo_identity,
)

if TYPE_CHECKING:
    from memoryd.gitcli import Done

log = logging.getLogger(__name__)
FRESH, MOVED, STALE, UNANCHORED, ELSEWHERE = "fresh", "moved", "stale", "unanchored", "elsewhere"
HISTORY_DEPTH = 200  # commits searched for a citation's old text
GIT_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Project:
    """The git work tree a check reads, and how a global memory names it."""

    top: Path
    identity: str

    def git(self, *args: str) -> Done:
        """A read-only git command in this work tree (no optional locks: never blocks
        the user's own git)."""
        from memoryd import gitcli  # subprocess: only to follow a rename or read history

        env = gitcli.repo_env({"GIT_OPTIONAL_LOCKS": "0"})
        return gitcli.run(args, cwd=self.top, env=env, timeout=GIT_TIMEOUT_S)


@dataclass(frozen=True)
class Verdict:
    """Whether one citation still points at what it cited."""

    citation: Citation
    state: str  # fresh, moved, stale, unanchored, elsewhere
    now: Citation | None = None  # where the text stands now (fresh or moved)
    reason: str = ""  # for stale: what changed

    @property
    def stale(self) -> bool:
        return self.state == STALE

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"cite": self.citation.text(), "state": self.state}
        if self.now is not None and self.now != self.citation:
            out["now"] = self.now.text()
        if self.reason:
            out["reason"] = self.reason
        return out


def project_at(folder: Path) -> Project | None:
    """The project of the git work tree around ``folder`` (None: not in one).

    Found by looking for ``.git`` upwards and reading the remote from the repository's
    config file, not by running git: a ``context`` call that checks citations pays a
    few stat calls for it, not two processes.
    """
    for top in (folder, *folder.parents):
        dot_git = top / ".git"
        if dot_git.is_dir() or dot_git.is_file():
            return Project(top, repo_identity(_origin_url(dot_git), str(top)))
    return None


_REMOTE = re.compile(r'^\s*\[remote\s+"origin"\]\s*$', re.M)
_SECTION = re.compile(r"^\s*\[", re.M)
_URL = re.compile(r"^\s*url\s*=\s*(\S+)\s*$", re.M)


def _origin_url(dot_git: Path) -> str | None:
    """``remote.origin.url`` from the repository's config (a worktree's ``.git`` file
    points at its git dir, whose ``commondir`` holds the shared config)."""
    try:
        git_dir = dot_git
        if dot_git.is_file():
            pointer = dot_git.read_text("utf-8").strip().removeprefix("gitdir:").strip()
            git_dir = (dot_git.parent / pointer).resolve()
            common = git_dir / "commondir"
            if common.is_file():
                git_dir = (git_dir / common.read_text("utf-8").strip()).resolve()
        config = (git_dir / "config").read_text("utf-8", "replace")
    except OSError:
        return None
    section = _REMOTE.search(config)
    if section is None:
        return None
    rest = config[section.end() :]
    following = _SECTION.search(rest)
    url = _URL.search(rest[: following.start()] if following else rest)
    return url.group(1) if url else None


def check(citation: Citation, project: Project | None) -> Verdict:
    """Whether ``citation`` still holds in ``project``'s working tree."""
    if project is None or (citation.repo is not None and citation.repo != project.identity):
        return Verdict(citation, ELSEWHERE)
    if citation.hash is None:
        return Verdict(citation, UNANCHORED, reason="no fingerprint: run memoryd cite --fix")
    path = citation.path
    data = _read(project, path)
    renamed = None
    if data is None:
        renamed = renamed_to(project, path)
        data = _read(project, renamed) if renamed else None
        if data is None:
            return Verdict(citation, STALE, reason=f"{path} no longer exists")
    place = find(lines_of(data), citation)
    if place is None:
        where = renamed or path
        what = "the cited lines changed" if citation.start is not None else "the file changed"
        return Verdict(citation, STALE, reason=f"{what} in {where}")
    now = citation.moved(*place, path=renamed) if citation.start is not None else citation
    if renamed and citation.start is None:
        now = Citation(renamed, None, None, citation.hash, citation.repo)
    state = FRESH if now == citation else MOVED
    return Verdict(citation, state, now)


def _read(project: Project, relative: str) -> bytes | None:
    path = project.top / relative
    try:
        resolved = path.resolve()
        if not resolved.is_relative_to(project.top.resolve()) or not path.is_file():
            return None
        return path.read_bytes()
    except OSError:
        return None


def renamed_to(project: Project, path: str) -> str | None:
    """Where git says ``path`` went: a staged rename first, then renames in the history."""
    import subprocess

    try:
        staged = project.git("diff", "--cached", "-M", "--name-status", "-z")
        target = _rename_target(staged.out, path) if staged.code == 0 else None
        if target is None:
            history = project.git(
                "log", "-M", "--diff-filter=R", "--name-status", "-z", "--format=",
                f"-n{HISTORY_DEPTH}", "HEAD",
            )  # fmt: skip
            target = _rename_target(history.out, path) if history.code == 0 else None
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.debug("cites: cannot ask git about %s (%s)", path, exc)
        return None
    return target


def _rename_target(raw: bytes, path: str) -> str | None:
    """Follow ``path`` through ``R<score> old new`` records (newest first in a log)."""
    fields = raw.decode("utf-8", "surrogateescape").split("\0")
    moves: list[tuple[str, str]] = []
    i = 0
    while i < len(fields):
        status = fields[i].strip()
        if status.startswith("R") and i + 2 < len(fields):
            moves.append((fields[i + 1], fields[i + 2]))
            i += 3
        else:
            i += 1
    current, seen = path, {path}
    for old, new in reversed(moves):  # oldest first, so chains a -> b -> c end at c
        if old == current and new not in seen:
            current = new
            seen.add(new)
    return None if current == path else current


def old_text(project: Project, citation: Citation) -> list[str] | None:
    """The cited text as it was when the fingerprint was taken, from git history
    (None: no commit within :data:`HISTORY_DEPTH` holds it: it was never committed)."""
    import subprocess

    try:
        commits = project.git(
            "log", "--format=%H", f"-n{HISTORY_DEPTH}", "--all", "--", citation.path
        ).text.split()
        for commit in commits:
            shown = project.git("show", f"{commit}:{citation.path}")
            if shown.code != 0:
                continue
            lines = lines_of(shown.out)
            covered = cited(lines, citation)
            if covered is not None and fingerprint(covered) == citation.hash:
                return covered
            place = find(lines, citation)
            if place is not None:
                return lines[place[0] - 1 : place[1]]
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.debug("cites: no history for %s (%s)", citation.path, exc)
    return None


def current_text(project: Project, citation: Citation) -> list[str] | None:
    """The lines the citation's range covers in the working tree now (None: no file)."""
    data = _read(project, citation.path)
    return None if data is None else cited(lines_of(data), citation) or []


class Checker:
    """Checks memories' citations in one working tree, reading each project once."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self._project: Project | bool | None = False  # False: not looked up yet

    @property
    def project(self) -> Project | None:
        if self._project is False:
            self._project = project_at(self.cwd)
        return self._project  # type: ignore[return-value]

    def verdicts(self, meta: dict[object, object]) -> list[Verdict]:
        citations, _bad = parse_all(meta.get("cites"))
        return [check(c, self.project) for c in citations] if citations else []

    def of_file(self, path: Path) -> list[Verdict]:
        """The verdicts of the memory at ``path`` (none when it cites nothing)."""
        try:
            head = path.read_bytes()
        except OSError:
            return []
        if b"cites" not in head:
            return []  # the usual memory: no parse at all
        from memoryd.memory import parse as parse_memory

        return self.verdicts(parse_memory(head).meta)


def stale_reasons(verdicts: Iterable[Verdict]) -> list[str]:
    """One line per stale citation: which one, and what changed."""
    return [f"{v.citation.where}: {v.reason}" for v in verdicts if v.stale]
