"""A branch naming objects git no longer has, set back to the newest whole commit.

memoryd writes loose objects (blobs, trees, a commit) and makes them reachable when the
branch moves. A ``git gc --prune=now`` run by hand in between deletes them: git documents
``--prune=now`` as unsafe beside any other git at work, and memoryd cannot stop it. Its
objects are kept under :func:`keep_ref` from the moment a tree is written until the
branch names them, which closes all but a few milliseconds; what is left is repaired
here. The branch then named a missing commit or tree, and every later cycle failed
("bad object HEAD") with "memoryd retries on the next cycle", forever, though the text
was still in the work tree.

:func:`check` runs at the start of each cycle and reads only what is new since the head
it last found whole (git's ``rev-list --objects --missing=print``). A broken head is set
back (compare-and-swap) to the newest whole commit the branch's reflog, HEAD's reflog or
the tracking ref names; the cycle then commits the work tree as usual, so the text on
disk lands again.
"""

from __future__ import annotations

import hashlib
import logging
import re
from pathlib import Path

from memoryd.sync.git import ZERO
from memoryd.sync.repo import Blocked, Repo

log = logging.getLogger(__name__)

KEEP_PREFIX = "refs/memoryd/keep/"


def keep_ref(repo: Repo) -> str:
    """The ref that holds what this work tree's cycle is building (one per work tree)."""
    return KEEP_PREFIX + hashlib.sha1(str(repo.git_dir).encode()).hexdigest()[:12]


def keep(repo: Repo, sha: str) -> None:
    """Make ``sha`` (a tree or commit just written) reachable before anything needs it."""
    repo.git.run("update-ref", "--no-deref", keep_ref(repo), sha)


def release(repo: Repo) -> None:
    """The branch names it now (or the cycle gave up): the keep ref goes."""
    repo.git.run("update-ref", "-d", keep_ref(repo), check=False)


def missing(repo: Repo, head: str, since: str | None) -> bool:
    """Does ``head`` (or what it holds that ``since`` does not) name a missing object?"""
    args = ["rev-list", "--objects", "--missing=print", head]
    if since:
        args += ["--not", since]
    else:
        args.insert(3, "--no-walk")
    done = repo.git.run(*args, check=False, readonly=True)
    if done.code != 0:
        if since:  # the head last found whole is gone itself: look at all of head
            return missing(repo, head, None)
        return True
    return any(line.startswith(b"?") for line in done.out.splitlines())


def check(repo: Repo, whole: str) -> tuple[str, str | None]:
    """The head found whole now ('' for an unborn branch), and a notice when it was repaired.

    ``whole``: the head the last cycle found whole (checked again only from there).
    """
    ref = repo.git.branch_ref()
    if ref is None:  # a detached HEAD: the user's own business
        return whole, None
    said = repo.git.run("rev-parse", "-q", "--verify", ref, check=False, readonly=True)
    head = said.text.strip() if said.code == 0 else ""
    if not head or head == whole:
        return head, None
    if _partial(repo):  # objects missing by design (a clone with --filter)
        return head, None
    if not missing(repo, head, whole or None):  # (a ``whole`` gone: all of head is read)
        return head, None
    good, where = _newest_whole(repo, ref, head)
    if good is None:
        raise Blocked(
            "error",
            f"{ref} names commit {head[:12]}, which git no longer has (a 'git gc --prune=now' "
            "while memoryd committed?), and no earlier commit of the branch is whole",
            f"the files on disk are untouched: copy them aside, then reset the branch "
            f"(git -C {repo.top} reset --soft <a whole commit>) and memoryd commits them again",
        )
    repo.git.run("update-ref", "-m", "memoryd: repair a branch naming missing objects", ref,
                 good, head)  # fmt: skip
    log.warning("%s named missing objects (%s): set back to %s", ref, head, good)
    _forget_broken_tracking(repo)
    return good, (
        f"{ref.removeprefix('refs/heads/')} named commit {head[:12]}, which git no longer has "
        f"whole (a 'git gc --prune=now' while memoryd committed?): set back to {good[:12]} "
        f"({where}) and the files on disk committed again; nothing is lost"
    )


def _partial(repo: Repo) -> bool:
    """A partial clone: a promisor remote (or extensions.partialClone) fetches on demand."""
    return any(
        value is None or not f" {value}".endswith(" false")
        for name, values in repo.git.config().items()
        if name == "extensions.partialclone" or re.fullmatch(r"remote\..*\.promisor", name)
        for value in values
    )


def _exists(repo: Repo, sha: str) -> bool:
    return repo.git.run("cat-file", "-e", sha, check=False, readonly=True).code == 0


def _newest_whole(repo: Repo, ref: str, broken: str) -> tuple[str | None, str]:
    """The newest whole commit the reflogs or the tracking ref name, and where it was found."""
    seen = {broken, ZERO}
    for where, logfile in (
        ("the branch's reflog", repo.common_dir / "logs" / ref),
        ("HEAD's reflog", repo.git_dir / "logs" / "HEAD"),
    ):
        for sha in _reflog(logfile):
            if sha in seen:
                continue
            seen.add(sha)
            if _exists(repo, sha) and not missing(repo, sha, None):
                return sha, where
    done = repo.git.run(
        "for-each-ref", "--format=%(objectname)", "refs/remotes/", check=False, readonly=True
    )
    for sha in done.text.split():
        if sha not in seen and _exists(repo, sha) and not missing(repo, sha, None):
            return sha, "the remote as last fetched"
    return None, ""


def _forget_broken_tracking(repo: Repo) -> None:
    """A tracking ref that names the same broken commit goes: the next fetch brings it whole
    (git's fetch takes a commit it has for complete, and would fetch nothing)."""
    done = repo.git.run(
        "for-each-ref", "--format=%(refname) %(objectname)", "refs/remotes/",
        check=False, readonly=True,
    )  # fmt: skip
    for line in done.text.splitlines():
        name, _, sha = line.partition(" ")
        if not name.endswith("/HEAD") and (not _exists(repo, sha) or missing(repo, sha, None)):
            repo.git.run("update-ref", "-d", name, sha, check=False)


def _reflog(logfile: Path) -> list[str]:
    """The commits a reflog file names, newest first (git's own reader stops at a missing one)."""
    try:
        lines = logfile.read_bytes().splitlines()
    except OSError:
        return []
    found: list[str] = []
    for line in reversed(lines):
        parts = line.split(b" ", 2)
        if len(parts) < 2:
            continue
        for raw in (parts[1], parts[0]):
            sha = raw.decode("ascii", "replace")
            if len(sha) == 40 and sha not in found:
                found.append(sha)
    return found
