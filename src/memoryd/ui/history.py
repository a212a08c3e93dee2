"""A memory's history in git: ``git log --follow`` of its file, newest first.

A root that is not in a git repository (or a file git never saw) has no history; that is
an empty list, not an error, because the page shows it beside the file as a fact.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

MAX_COMMITS = 200
SEP = "\x1f"


@dataclass(frozen=True)
class Change:
    commit: str
    author: str
    date: str  # ISO 8601, the author date
    subject: str
    path: str  # the path in that commit, relative to the repository top

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def file_history(root: Path, rel: str) -> list[Change]:
    """The commits that touched ``root/rel``, following renames."""
    from memoryd.sync.git import Git

    fmt = SEP.join(("%H", "%an", "%aI", "%s"))
    done = Git(root).run(
        "log", "--follow", f"--max-count={MAX_COMMITS}", "--name-only",
        f"--format=\x1e{fmt}", "--", rel, check=False, readonly=True,
    )  # fmt: skip
    if done.code != 0:
        log.debug("no git history for %s in %s: %s", rel, root, done.err.strip())
        return []
    changes = []
    for record in done.text.split("\x1e")[1:]:
        head, _, names = record.partition("\n")
        parts = head.split(SEP)
        if len(parts) != 4:
            continue
        commit, author, date, subject = parts
        files = [n for n in names.splitlines() if n.strip()]
        changes.append(Change(commit, author, date, subject, files[0] if files else rel))
    return changes


def text_at(root: Path, rel: str, commit: str) -> str:
    """The file's text at ``commit``, one of the commits :func:`file_history` lists for it
    (under the name it had then); anything else is refused."""
    from memoryd.errors import PathError
    from memoryd.sync.git import Git

    for change in file_history(root, rel):
        if change.commit == commit:
            break
    else:
        raise PathError(
            f"commit {commit[:12]!r} is not in the history of {rel}",
            hint="pick a commit from the memory's history",
        )
    done = Git(root).run(
        "show", f"{change.commit}:{change.path}", check=False, readonly=True
    )  # fmt: skip
    if done.code != 0:  # the commit deleted the file: nothing to show at it
        return ""
    return done.text
