"""``memoryd team log``: what changed in each team root since this user last looked.

Read from git: the commits after the one the last look ended at (kept per root in the state
folder), each with its author, date and the memories it touched, then the proposals waiting
for a person. Looking moves the mark; ``--all`` shows the whole history and moves nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memoryd import gitcli
from memoryd.config.sections import Config, RootConfig
from memoryd.fsutil import atomic_write
from memoryd.memory import id_for_path, parse
from memoryd.roots import relative_id, walk_root
from memoryd.team import described, is_proposed

GIT_TIMEOUT_S = 30.0
MARKS_DIR = "team-log"  # in the state folder: one file per team root, the last commit seen
FORMAT = "%x1e%H%x1f%an <%ae>%x1f%aI%x1f%s"  # a record per commit, then its --name-status


@dataclass(frozen=True)
class Change:
    commit: str
    author: str
    date: str
    subject: str
    files: tuple[str, ...]  # "M facts/x.md", as git's --name-status gives them

    def as_dict(self) -> dict[str, Any]:
        return {"commit": self.commit, "author": self.author, "date": self.date,
                "subject": self.subject, "files": list(self.files)}  # fmt: skip


@dataclass(frozen=True)
class TeamLog:
    team: str
    root: Path
    changes: list[Change] = field(default_factory=list)
    waiting: list[tuple[str, str]] = field(default_factory=list)  # (id, who proposed it)

    def as_dict(self) -> dict[str, Any]:
        return {
            "team": self.team, "root": str(self.root),
            "changes": [c.as_dict() for c in self.changes],
            "waiting": [{"id": i, "proposed": who} for i, who in self.waiting],
        }  # fmt: skip


def team_roots(config: Config, name: str | None) -> list[RootConfig]:
    return [r for r in config.roots if r.team and name in (None, r.team)]


def read_log(root: RootConfig, state_dir: Path, *, everything: bool = False) -> TeamLog:
    """The root's changes since the mark (all of them with ``everything``), and its
    proposals; the mark moves to the newest commit unless ``everything``."""
    mark = state_dir / MARKS_DIR / f"{root.team}.commit"
    head = (_git(root, "rev-parse", "--verify", "-q", "HEAD") or "").strip()
    seen = "" if everything or not mark.is_file() else mark.read_text().strip()
    changes = _changes(root, seen, head) if head else []
    log = TeamLog(root.team, root.path, changes, _waiting(root))
    if head and not everything:
        atomic_write(mark, (head + "\n").encode())
    return log


def _changes(root: RootConfig, seen: str, head: str) -> list[Change]:
    commit = f"{seen}^{{commit}}"
    known = bool(seen) and _git(root, "cat-file", "-e", commit, check=False) is not None
    span = f"{seen}..{head}" if known else head
    text = _git(root, "log", "--no-merges", "--name-status", f"--format={FORMAT}", span) or ""
    changes = []
    for record in text.split("\x1e")[1:]:
        head_line, _, rest = record.partition("\n")
        commit, author, date, subject = head_line.split("\x1f")
        files = tuple(" ".join(line.split("\t")) for line in rest.splitlines() if line.strip())
        changes.append(Change(commit, author, date, subject, files))
    return changes


def _waiting(root: RootConfig) -> list[tuple[str, str]]:
    waiting = []
    for path in walk_root(root.path):
        try:
            memory = parse(path.read_bytes())
        except OSError:
            continue
        if is_proposed(memory.meta):
            waiting.append((id_for_path(relative_id(root.path, path)), described(memory.meta)))
    return sorted(waiting)


def _git(root: RootConfig, *args: str, check: bool = True) -> str | None:
    done = gitcli.run(list(args), cwd=root.path, env=gitcli.repo_env(), timeout=GIT_TIMEOUT_S)
    if done.code != 0:
        return "" if check else None
    return done.text
