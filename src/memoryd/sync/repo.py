"""One root's repository, and the checks that keep memoryd out of a repo it does not own.

memoryd never starts a rebase, merge or cherry-pick in a work tree (it replays
in memory, see :mod:`memoryd.sync.replay`), so any of those in progress is the
user's: the cycle refuses and says what to do. A fresh ``index.lock`` belongs
to a running git: back off. A stale one (old, and no git in the work tree that could
hold it, or for the refs all work trees share in any of them: a ``git log`` in its pager
takes no lock) is moved aside and reported. An old
one that a running git may hold (``git commit -a`` waiting in its editor) blocks the cycle,
naming that git, until it ends.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path

from memoryd.fsutil import private_dirs
from memoryd.gitcli import GitError
from memoryd.memory import printable
from memoryd.sync.git import Git

log = logging.getLogger(__name__)

STALE_LOCKS = "memoryd-stale-locks"  # in the git dir: where stale ref locks are moved
# The git dir's marker of an operation in progress -> what it is, and the git command that
# finishes or abandons it (a merge's hint naming 'git rebase --abort' only got "No rebase in
# progress?").
IN_PROGRESS = {
    "rebase-merge": ("a rebase", "git rebase"),
    "rebase-apply": ("a rebase", "git rebase"),  # or git am: rebase-apply/applying
    "MERGE_HEAD": ("a merge", "git merge"),
    "CHERRY_PICK_HEAD": ("a cherry-pick", "git cherry-pick"),
    "REVERT_HEAD": ("a revert", "git revert"),
}
# git commands that never take index.lock, HEAD.lock or a ref's lock: one of these running
# (a 'git log' in its pager for an hour) is not what holds an old lock. diff and describe
# --dirty refresh the index quietly as they end, but only while they run, never for long.
READ_ONLY_GIT = frozenset({
    "log", "show", "diff", "blame", "annotate", "grep", "shortlog", "whatchanged", "cat-file",
    "ls-files", "ls-tree", "rev-parse", "rev-list", "describe", "help", "version",
})  # fmt: skip
# git's own options before its command that take the next word as their value
GIT_VALUED_OPTIONS = frozenset({
    "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env",
    "--attr-source",
})  # fmt: skip


class Blocked(Exception):
    """The repository is not in a state memoryd may touch now.

    ``status`` is ``refused`` (the user must act), ``blocked`` (a git command of the user's
    holds a lock: the user must end it) or ``busy`` (retry later).
    """

    def __init__(self, status: str, message: str, hint: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.hint = hint


@dataclass(frozen=True)
class Repo:
    git: Git
    top: Path
    git_dir: Path
    root: Path
    prefix: str  # the root relative to the top ('' when the root is the top)
    common_dir: Path  # the git dir every work tree shares (info/exclude, hooks): see Git

    def work_trees(self) -> list[Path]:
        """This work tree's top and every other one of the repository (``info/exclude`` is
        theirs too: a block entry stays while any of them still needs it).

        git keeps each linked work tree under ``worktrees/`` in the shared git dir: with none
        there, this one is the only one, and git is not asked (a process each cycle)."""
        if not (self.common_dir / "worktrees").is_dir():
            return [self.top]
        return [self.top, *(t for t in self.git.work_trees() if t != self.top)]

    def remotes(self) -> list[str]:
        """The repository's remotes, as ``git remote`` lists them: every ``remote.<name>.*``
        of the config a cycle reads anyway (no git of its own), unless the git dir keeps
        remotes in its old files (``remotes/``, ``branches/``): then git is asked."""
        old = (self.common_dir / kind for kind in ("remotes", "branches"))
        config = self.git.config()
        if not config or any(d.is_dir() and any(d.iterdir()) for d in old):
            return self.git.remotes()
        found: dict[str, None] = {}
        for key in config:
            name = key.removeprefix("remote.").rpartition(".")[0]
            if key.startswith("remote.") and name:  # remote.pushDefault names none
                found[name] = None
        return sorted(found)

    def repo_path(self, rel: str) -> str:
        """Repository-relative path of a root-relative one."""
        return f"{self.prefix}/{rel}" if self.prefix else rel

    def root_path(self, repo_rel: str) -> str:
        """Root-relative path of a repository-relative one."""
        return repo_rel[len(self.prefix) + 1 :] if self.prefix else repo_rel

    @property
    def pathspec(self) -> str:
        return self.prefix or "."


def open_repo(root: Path) -> Repo:
    """The repository holding ``root``; Blocked when there is none."""
    if not root.is_dir():
        raise Blocked("refused", f"{root} does not exist", "run 'memoryd init' or fix config.yaml")
    git = Git(root)
    try:
        top, git_dir, common_dir = git.places()
        top = top.resolve()
    except GitError as exc:
        if "not a git repository" not in exc.stderr:  # there is one, and git will not use it
            raise _unusable(root, exc.stderr) from None
        raise Blocked(
            "disabled",
            f"{root} is not inside a git repository, so it is not synced",
            f"run 'git init' in {root} (memoryd init does this for the global root)",
        ) from None
    real = root.resolve()
    prefix = "" if real == top else real.relative_to(top).as_posix()
    return Repo(Git(top), top, git_dir, root, prefix, common_dir)


def _unusable(root: Path, stderr: str) -> Blocked:
    """A repository git refuses to work in: told as git says it, never as 'not a repository'.

    A folder another user owns (restored from a backup, a Windows drive under WSL, a volume
    mounted into a container) is "dubious ownership" to git: the root read as not in a git
    repository, exit 0, and the hint was 'git init', so it silently never synced again.
    """
    said = [line.strip() for line in stderr.splitlines() if line.strip()]
    first = said[0] if said else "git rev-parse failed"
    fix = ownership_fix(stderr)
    if fix is None:
        fix = f"fix what git says (git -C {root} status shows it)"
    hint = f"{fix}; memoryd syncs after that"
    return Blocked("refused", f"git will not work in {root}: {first}", hint)


def ownership_fix(stderr: str) -> str | None:
    """The commands that let git into a repository of "dubious ownership" (None: not that).

    git names the repository's top (not a project's ``.memory/``): safe.directory wants it.
    """
    for line in stderr.splitlines():
        if "dubious ownership" in line:
            where = line.rpartition(" at ")[2].strip().strip("'")
            return (
                f"if the folder is yours: git config --global --add safe.directory {where} (or "
                f"give it back to your user: chown -R $(id -un) {where})"
            )
    return None


def preflight(repo: Repo, stale_after_s: float) -> list[str]:
    """Raise Blocked when the repo is mid-operation; return notices (a stale lock moved)."""
    operation = in_progress(repo.git_dir)
    if operation is not None:
        what, command = operation
        raise Blocked(
            "refused",
            f"{what} is in progress in {repo.top} (memoryd did not start it)",
            f"finish it or abort it ({command} --continue, or {command} --abort); "
            "memoryd syncs again after that",
        )
    notices = check_index_lock(repo, stale_after_s)
    if repo.git.branch() is None and repo.git.rev("HEAD") is not None:
        raise Blocked(
            "refused",
            f"{repo.top} has a detached HEAD",
            "check out a branch (git switch <branch>); memoryd syncs again after that",
        )
    return notices


def in_progress(git_dir: Path) -> tuple[str, str] | None:
    """The person's operation in progress in the work tree of ``git_dir``, as (what it is,
    the git command that finishes or abandons it), or None."""
    for name, named in IN_PROGRESS.items():
        if (git_dir / name).exists():
            am = (git_dir / name / "applying").exists()
            return ("a git am", "git am") if am else named
    return None


def check_index_lock(repo: Repo, stale_after_s: float) -> list[str]:
    """Back off from a fresh git lock; move a stale one aside (and say so); name the git
    that may hold an old one.

    ``index.lock`` and the locks ``update-ref`` takes (``HEAD.lock``, the branch's
    ``refs/heads/<branch>.lock``, ``packed-refs.lock``, a tracking ref's): a git
    killed while holding one leaves it behind, and every later cycle would fail. A fresh
    one is a git at work: 'busy', a quiet retry. An old one while a git that may hold it
    runs (``git commit -a`` left in its editor) is the user's to end: 'blocked', which the
    daemon reports once, with that git's pid, where 'busy' said nothing for as long as
    the editor stayed open.

    A work tree's own locks (its index, its HEAD) are held by a git working in it; the
    refs every work tree shares, by a git working in any of them (or in the common git dir
    itself): a 'git commit' in another linked work tree takes the branch's lock there.
    """
    notices = []
    holders: dict[bool, list[GitProcess]] = {}  # shared lock? -> the gits that may hold it
    for lock, home, shared in _lock_files(repo):
        try:
            taken = lock.stat().st_mtime
        except FileNotFoundError:
            continue
        age = time.time() - taken
        if age < stale_after_s:
            raise Blocked(
                "busy",
                f"{lock} is held by another git command",
                "memoryd retries later; if no git command is running, it is moved aside once stale",
            )
        if shared not in holders:
            places = [*repo.work_trees(), repo.common_dir] if shared else [repo.top]
            holders[shared] = lock_holders(*places)
        if holders[shared]:
            raise held_by(lock, taken, holders[shared])
        aside = lock.with_name(f"{lock.name}.stale-{int(time.time())}")
        if lock.parent != home:  # under refs/ it would read as a branch: out of there
            aside = home / STALE_LOCKS / lock.relative_to(home).parent / aside.name
            private_dirs(aside.parent)
        with contextlib.suppress(FileNotFoundError):
            os.replace(lock, aside)
            log.warning("moved a stale %s aside to %s", lock, aside.name)
            notices.append(
                f"moved a stale {lock.name} ({int(age)} s old, no git running that could hold "
                f"it) aside to {aside}"
            )
    return notices


def held_by(lock: Path, taken: float, holders: list[GitProcess]) -> Blocked:
    """An old lock that ``holders`` may hold: which lock, since when, the gits by pid, and
    what to do. The text stays the same while they run (the lock's time, not its age),
    so the daemon logs it once."""
    since = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(taken))
    named = " or ".join(str(p) for p in holders[:2])
    if len(holders) > 2:
        named += f" or {len(holders) - 2} more git command(s)"
    that = "that git command" if len(holders) == 1 else "those git commands"
    return Blocked(
        "blocked",
        f"{lock} has been held since {since} by {named}",
        f"finish or quit {that}; memoryd syncs after that",
    )


def _lock_files(repo: Repo) -> list[tuple[Path, Path, bool]]:
    """(lock file, the git dir it is in, shared by every work tree?): a work tree's own
    index and HEAD, and the refs every work tree shares (in a linked work tree's common dir:
    looked for in its own git dir, a stale branch lock there failed every cycle with git's
    "File exists")."""
    own, shared = repo.git_dir, repo.common_dir
    found = [(own / "index.lock", own, False), (own / "HEAD.lock", own, False)]
    found.append((shared / "packed-refs.lock", shared, True))
    for folder in ("refs/heads", "refs/remotes", "refs/memoryd"):
        top = shared / folder
        if top.is_dir():
            found += [(lock, shared, True) for lock in sorted(top.rglob("*.lock"))]
    return found


@dataclass(frozen=True)
class GitProcess:
    """A git running in a work tree: its pid and its command (``commit``; ``''`` for none,
    ``git --version``; None when its command line could not be read)."""

    pid: int
    command: str | None

    @property
    def may_hold_locks(self) -> bool:
        """Can it hold a lock? Only a command known never to take one cannot."""
        return self.command not in READ_ONLY_GIT

    def __str__(self) -> str:
        if self.command is None:
            return f"a git command (pid {self.pid})"
        return f"git {self.command} (pid {self.pid})" if self.command else f"git (pid {self.pid})"


def git_processes_in(*tops: Path) -> list[GitProcess]:
    """The git processes working in any of ``tops`` (folders: a work tree, a git dir), by
    pid. (Linux /proc; elsewhere: assume none.)"""
    proc = Path("/proc")
    if not proc.is_dir():
        return []
    places = {t.resolve() for t in tops}  # a cwd read from /proc is a real path
    found = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if (entry / "comm").read_text().strip() not in ("git", "git-remote-http"):
                continue
            cwd = Path(os.readlink(entry / "cwd"))
            if places.intersection((cwd, *cwd.parents)):
                found.append(GitProcess(int(entry.name), _git_command(entry)))
    return sorted(found, key=lambda p: p.pid)


def git_running_in(top: Path) -> bool:
    """Is some git process working in ``top``? (Linux /proc; elsewhere: assume not.)"""
    return bool(git_processes_in(top))


def lock_holders(*tops: Path) -> list[GitProcess]:
    """The git processes in any of ``tops`` that may hold one of their locks (not a
    ``git log``)."""
    return [p for p in git_processes_in(*tops) if p.may_hold_locks]


def _git_command(entry: Path) -> str | None:
    """The git command of the process of /proc ``entry``, or None: unreadable (it may be
    gone already, or not ours to read), or empty (a zombie)."""
    try:
        raw = (entry / "cmdline").read_bytes()
    except OSError:
        return None
    words = raw.split(b"\0")
    if words and not words[-1]:
        words.pop()
    return git_command([os.fsdecode(w) for w in words])


def git_command(argv: list[str]) -> str | None:
    """The command of git's command line (``git -C x -c k=v --no-pager log`` -> ``log``):
    ``''`` when it has none, None for an empty line. A helper run as itself
    (``git-remote-https``) is its own command (``remote-https``)."""
    if not argv:
        return None
    name = os.path.basename(argv[0])
    if name.startswith("git-"):
        return _one_word(name[4:])
    words = iter(argv[1:])
    for word in words:
        if word in GIT_VALUED_OPTIONS:
            next(words, None)
        elif not word.startswith("-"):
            return _one_word(word)
    return ""


def _one_word(word: str) -> str:
    """``word`` fit for a one-line message: no control characters, not over 40 of them."""
    shown = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in printable(word))
    return shown if len(shown) <= 40 else f"{shown[:39]}…"


def device_of(repo: Repo, commit: str, path: str) -> str:
    """The device that last wrote ``path`` in ``commit``'s history (its commit trailer)."""
    from memoryd.conflicts import safe_device

    said = repo.git.out(
        "log", "-1", "--format=%(trailers:key=Memoryd-Device,valueonly)", commit, "--", path
    )
    return safe_device(said.splitlines()[0]) if said else "remote"
