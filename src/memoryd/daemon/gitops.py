"""A person's git operation in a root's work tree holds the daemon's compiles there.

A rebase, merge, cherry-pick, revert, ``git am`` or bisect checks files out and stops
for the person; a compiled file the daemon rewrote meanwhile is an unstaged change git
did not make: ``git rebase --continue`` refused ("You must edit all merge conflicts and
then mark them as resolved using git add") and the next pick or bisect step that
touches that file stopped, or ``git add -A`` put memoryd's write into the person's
commit. So while one is in progress the root is still indexed (recall stays fresh), but
ROOT.md and index.md are left as git wrote them; the roots check (every
``daemon.root_check_s``) compiles the root once the operation has ended. A compiled file
git left conflicted (both sides changed it) is compiled at once: only that resolves it.

The markers are read from the work tree's own git dir, not by running git: a compile
asks on every batch. git is asked for the conflicts only while an operation is in progress.
"""

from __future__ import annotations

import logging
import os
import subprocess
import threading
from pathlib import Path
from typing import Literal

from memoryd import gitcli, rootfs
from memoryd.roots import INDEX_FILE, ROOT_FILE
from memoryd.sync.repo import in_progress

log = logging.getLogger(__name__)

Hold = Literal["held", "ended", "free"]  # "ended": held until now, so compile it whole

BISECT = ("a bisect", "git bisect")  # its checkouts stop at the first local change too
ENDED = "the git operation in %s ended: compiling it"
CONFLICTED = "%s in %s left a conflict in a compiled file: compiling it"
HELD = (
    "%s is in progress in %s: its ROOT.md and index.md are compiled once it ends "
    "(%s --continue, or %s --abort)"
)


def operation_in(root: Path) -> tuple[str, str] | None:
    """The git operation in progress in the work tree holding ``root`` (what it is, the
    git command that ends it), or None: none, or no work tree."""
    top = rootfs.git_toplevel(str(root))
    if top is None:
        return None
    try:
        git_dir = Path(rootfs.own_git_dir(top))
    except (OSError, UnicodeDecodeError) as exc:
        log.debug("cannot read the git dir of %s: %s", top, exc)
        return None
    found = in_progress(git_dir)
    if found is None and os.path.exists(git_dir / "BISECT_LOG"):
        return BISECT
    return found


def conflicted_compiled(root: Path) -> bool:
    """Whether git left a conflict in a compiled file of ``root`` (both sides changed
    ROOT.md or an index.md): its conflict markers are gone only when it is compiled."""
    try:
        done = gitcli.run(
            ["ls-files", "-u", "-z", "--", "."], cwd=root, env=gitcli.repo_env(), timeout=30
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.debug("cannot list the conflicts in %s: %s", root, exc)
        return False
    entries = (entry.partition("\t")[2] for entry in done.text.split("\0"))
    return any(os.path.basename(name) in (ROOT_FILE, INDEX_FILE) for name in entries if name)


class GitOps:
    """The roots whose compile waits for a person's git operation to end."""

    def __init__(self) -> None:
        self._held: dict[Path, str] = {}  # root -> what is in progress
        self._lock = threading.Lock()

    def hold(self, root: Path) -> Hold:
        """Whether a git operation holds ``root``'s compile now (told once, when it starts,
        and when it leaves a compiled file conflicted, which is compiled at once). "ended"
        when it held the root until now: the compiles it skipped meanwhile are owed, so
        the caller compiles the whole root, not only the batch that saw it end."""
        found = operation_in(root)
        conflicted = found is not None and conflicted_compiled(root)
        with self._lock:
            if found is None:
                if self._held.pop(root, None) is not None:
                    log.info(ENDED, root)
                    return "ended"
                return "free"
            what, command = found
            state = f"{what}, conflicted" if conflicted else what
            if self._held.get(root) != state and conflicted:
                log.info(CONFLICTED, what, root)
            elif self._held.get(root) != state:
                log.info(HELD, what, root, command, command)
            self._held[root] = state
            return "free" if conflicted else "held"

    def ended(self) -> list[Path]:
        """The held roots whose operation has ended since (no longer held): compile them."""
        with self._lock:
            held = list(self._held)
        over = [root for root in held if operation_in(root) is None]
        with self._lock:  # holds() may have seen it end meanwhile, and told it
            done = [root for root in over if self._held.pop(root, None) is not None]
        for root in done:
            log.info(ENDED, root)
        return done
