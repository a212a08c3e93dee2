"""Talking to the remote: which branch to follow there, fetch, push, and git's words.

Every network git (``fetch``, ``push``, ``ls-remote``) of a sync cycle runs here, with
its timeout, and its failures become :class:`Offline` (with the fix the user can act
on), :class:`Stopped` or a refusal hint. Moving the work tree to what was fetched is
:mod:`memoryd.sync.worktree`'s.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from memoryd import gitcli
from memoryd.gitcli import GitError
from memoryd.sync.git import NET_TIMEOUT_S, config_env
from memoryd.sync.repo import Blocked, Repo


class Offline(Exception):
    """The remote could not be reached (or refused us); git's message says why."""


class Stopped(Exception):
    """memoryd is stopping and ended the fetch, push or ls-remote (:func:`gitcli.no_network`):
    nothing was learned of the remote, and the cycle runs again at the next start."""


def _stopped(done: gitcli.Done) -> None:
    if done.stopped:
        raise Stopped


class Unanswered(Offline):
    """The remote took the whole timeout without answering: asking it again now waits as long."""


def _timed_out(command: str, remote: str) -> Unanswered:
    return Unanswered(
        f"git {command} {remote} timed out: {remote} did not answer in {NET_TIMEOUT_S:g} s"
    )


@dataclass
class Target:
    remote: str
    branch: str  # local branch
    remote_branch: str
    last_rejection: str = ""
    remembered: str = ""  # what named remote_branch when this device kept it, not the remote
    # sync.team_branch: where this device pushes (memoryd/proposals/<user>/<device>); remote_branch
    # is then only fetched (memoryd.sync.proposals)
    proposals: str = ""

    @property
    def tracking(self) -> str:
        return f"refs/remotes/{self.remote}/{self.remote_branch}"

    @property
    def proposals_tracking(self) -> str:
        return f"refs/remotes/{self.remote}/{self.proposals}"


def target(repo: Repo, remote: str, branch: str, *, probe: bool = True) -> Target | None:
    """Where the branch syncs to; None when the repository has no such remote.

    The branch's upstream when it has one; else the remote's default branch (its
    ``refs/remotes/<remote>/HEAD``, or asked once with ``ls-remote`` and kept
    there, or its only branch), so a device whose ``git init`` named the branch
    ``master`` syncs with a remote on ``main`` instead of pushing a second branch
    nobody reads. An empty remote, or one that cannot be reached now, gets the local
    branch's name. Blocked when the remote has several branches and no default.
    ``probe=False`` never asks the remote (the local branch's name, at worst).
    :class:`Unanswered` when the remote took the whole timeout to say nothing.
    """
    if remote not in repo.remotes():
        return None
    merge = repo.git.config_get(f"branch.{branch}.merge")
    upstream_remote = repo.git.config_get(f"branch.{branch}.remote")
    if merge and upstream_remote == remote and merge.startswith("refs/heads/"):
        return Target(remote, branch, merge[len("refs/heads/") :], remembered=UPSTREAM)
    head = f"refs/remotes/{remote}/HEAD"
    known = repo.git.asked("symbolic-ref", "-q", head).text.strip()
    if known.startswith(f"refs/remotes/{remote}/"):
        return Target(remote, branch, known[len(f"refs/remotes/{remote}/") :], remembered=KEPT)
    if not probe:
        return Target(remote, branch, branch)
    try:
        name = _default_branch(repo, remote, branch)
    except Unanswered:  # the fetch would wait as long again, for the same silence
        raise
    except Offline:  # the fetch says so in its own words; ask again next time
        return Target(remote, branch, branch)
    if name != branch or repo.git.rev(f"refs/remotes/{remote}/{name}") is not None:
        repo.git.run("symbolic-ref", head, f"refs/remotes/{remote}/{name}", check=False)
    return Target(remote, branch, name)


UPSTREAM = "the upstream of {branch} here"
KEPT = "the default branch this device last saw there"


def follow_default(repo: Repo, t: Target) -> str | None:
    """Sync with the remote's default branch when the one this device kept is not there.

    ``git clone`` of a remote whose HEAD names a branch nobody pushed (a bare repository made
    with ``-b main``, a first device on ``master``) sets the upstream to that missing branch,
    and a remote that renamed its default branch (GitHub's rename, master to main) leaves the
    old name in every clone. memoryd pushed the branch as named: a second branch on the
    remote, and the devices on it never saw the others' memories again. Only for a memory
    repository (a project's feature branch whose upstream was merged and deleted is pushed
    as git would push it). A notice when it follows; None when it does not.
    """
    if not t.remembered:
        return None
    heads, default = _remote_heads(repo, t.remote)
    if not heads or t.remote_branch in heads:
        return None  # an empty remote: the first push names its branch
    name = default if default in heads else heads[0] if len(heads) == 1 else None
    kept = t.remembered.format(branch=t.branch)
    if name is None:
        raise Blocked(
            "refused",
            f"{t.remote} has no branch {t.remote_branch} ({kept}); it has "
            f"{', '.join(sorted(heads))} and no default",
            f"pick one: git -C {repo.top} branch --set-upstream-to={t.remote}/<branch> "
            f"(after git fetch {t.remote})",
        )
    which = "its default branch" if name == default else "its only branch"
    if t.remembered == UPSTREAM:
        repo.git.run("config", f"branch.{t.branch}.merge", f"refs/heads/{name}")
    repo.git.run("symbolic-ref", f"refs/remotes/{t.remote}/HEAD", f"refs/remotes/{t.remote}/{name}")
    old, t.remote_branch, t.remembered = t.remote_branch, name, ""
    return (
        f"{t.remote} has no branch {old} ({kept}): {t.branch} syncs with {t.remote}/{name}, "
        f"{which}, from now on (instead of pushing {old} as a second branch)"
    )


def _remote_heads(repo: Repo, remote: str) -> tuple[list[str], str | None]:
    """The remote's branches, and the one its HEAD names (None: it names none it has)."""
    try:
        done = repo.git.run(
            "ls-remote", "--symref", remote, "HEAD", "refs/heads/*",
            check=False, timeout=NET_TIMEOUT_S, env=repo.git.net_env(),
        )  # fmt: skip
    except subprocess.TimeoutExpired as exc:
        raise _timed_out("ls-remote", remote) from exc
    if done.code != 0:
        _stopped(done)
        raise Offline(f"git ls-remote {remote}: {_reason(done.err)}")
    heads, default = [], None
    for line in done.text.splitlines():
        where, _, name = line.partition("\t")
        if where.startswith("ref: refs/heads/") and name == "HEAD":
            default = where[len("ref: refs/heads/") :]
        elif name.startswith("refs/heads/"):
            heads.append(name[len("refs/heads/") :])
    return heads, default


def _default_branch(repo: Repo, remote: str, branch: str) -> str:
    heads, default = _remote_heads(repo, remote)
    if default in heads:
        return default
    if len(heads) == 1:
        return heads[0]
    if not heads:
        return branch  # an empty remote: the first push names its branch
    if branch in heads and default is None:
        return branch
    raise Blocked(
        "refused",
        f"cannot tell which branch of {remote} to sync with: it has "
        f"{', '.join(sorted(heads))} and no default",
        f"pick one: git -C {repo.top} branch --set-upstream-to={remote}/<branch> "
        f"(after git fetch {remote})",
    )


# git's line when its askpass (memoryd's gitcli.NO_ASKPASS) answered nothing; the next says why
_ASKPASS_REFUSED = "error: unable to read askpass response from"

# What a remote that wants credentials memoryd cannot give says (https without a credential
# helper that knows them; ssh without a key the agent holds): waiting for the network to come
# back never fixes it
_NO_CREDENTIALS = (
    "terminal prompts disabled",
    "Authentication failed for",
    "Permission denied (publickey",
)


# ssh in batch mode never asks to trust a host key: an unknown one (OpenSSH 8's first line, or
# the older one line) or a changed one (the banner's words)
_HOST_KEY = (
    "host key is known for",
    "Host key verification failed",
    "REMOTE HOST IDENTIFICATION HAS CHANGED",
)


def needs_the_user(error: str) -> bool:
    """Is this a remote that wants credentials or a host key memoryd never gives?"""
    return any(words in error for words in (*_NO_CREDENTIALS, *_HOST_KEY))


# git's words when it failed here, not on the network: a race with a repack or gc, a full
# disk, a ref it could not lock. The remote answered; backing off waits for nothing.
_LOCAL_FAILURE = (
    "unable to create temporary file",
    "index-pack failed",
    "unpack-objects failed",
    "No space left on device",
    "cannot lock ref",
    "unable to update local ref",
    "pack-objects died",
    "unable to write",
)


def _local_failure(command: str, remote: str, err: str) -> None:
    """Raise GitError when ``err`` says git failed in this repository (not on the network)."""
    mine = [line for line in err.splitlines() if line and not line.startswith("remote:")]
    for line in mine:  # git says "Unable to create temporary file" as well as "unable"
        if any(words.lower() in line.lower() for words in _LOCAL_FAILURE):
            raise GitError((command, remote), 128, line.strip() + "\n")


def offline_hint(error: str, remote: str, top: Path) -> str:
    """What to do about a remote that could not be reached (or would not let us in)."""
    by_hand = f"run 'git -C {top} fetch {remote}' in a terminal"
    if any(words in error for words in _NO_CREDENTIALS):
        return (
            f"{remote} wants credentials and memoryd never asks for them: {by_hand} and set up "
            "a credential helper or an ssh key so it works without a prompt; memoryd keeps "
            "committing locally meanwhile"
        )
    if any(words in error for words in _HOST_KEY):
        return (
            f"ssh could not check the host key of {remote}'s host, and memoryd never asks to "
            f"trust one: {by_hand}, check the key it shows and accept it (ssh adds it to "
            "~/.ssh/known_hosts); memoryd keeps committing locally meanwhile"
        )
    return "memoryd keeps committing locally and pushes when the remote is back"


# What git adds after every failure to reach a remote (ssh's own words come before it): as
# the one line shown it told nothing ("and the repository exists.").
_BOILERPLATE = (
    "fatal: could not read from remote repository.",
    "please make sure you have the correct access rights",
    "and the repository exists.",
)


def _reason(text: str) -> str:
    """The line of git's stderr that says why: ssh's or git's own, never the boilerplate."""
    # ssh's banners frame their words in @ (a changed host key): the line shown was all @
    lines = [line.strip().strip("@").strip() for line in text.splitlines()]
    lines = [line for line in lines if line]
    said = [
        line
        for line in lines
        if line.lower() not in _BOILERPLATE and not line.startswith(_ASKPASS_REFUSED)
    ]
    told = [line for line in said if not line.startswith(("warning:", "hint:"))]
    return (told or said or lines or ["unknown error"])[0]


def fetch(repo: Repo, t: Target) -> str | None:
    """Fetch the remote branch; its commit, or None when it does not exist yet."""
    spec = f"+refs/heads/{t.remote_branch}:{t.tracking}"
    try:
        done = repo.git.run(
            "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", t.remote, spec,
            check=False, timeout=NET_TIMEOUT_S, env=repo.git.net_env(),
        )  # fmt: skip
    except subprocess.TimeoutExpired as exc:
        raise _timed_out("fetch", t.remote) from exc
    if done.code != 0:
        _stopped(done)
        if "couldn't find remote ref" in done.err:
            with contextlib.suppress(GitError):
                repo.git.run("update-ref", "-d", t.tracking)
            return None
        _local_failure("fetch", t.remote, done.err)
        raise Offline(f"git fetch {t.remote}: {_reason(done.err)}")
    return repo.git.rev(t.tracking)


def push(repo: Repo, t: Target, commit: str, *, lease: str = "") -> bool:
    """Push ``commit`` to the remote branch; False when rejected (the remote moved on, or no
    longer names ``lease`` there: the caller's own check that ``commit`` descends from it).

    With ``t.proposals``, to that branch instead, forced: it is this device's own, made
    again on top of each replay (:mod:`memoryd.sync.proposals`).

    The pack sent is built with no delta search (``pack.window=0``; deltas already in a
    local pack are sent as they are). git tries no delta between two whole objects of one
    pack, but does between packs, and a bulk commit's blobs are in one pack per chunk
    (:mod:`memoryd.sync.pack`): the first push of 100k memories took 6.45 s of CPU, most
    of it that search (pack-objects alone: 3.4 s with it, 0.6 s without). Memories are
    small texts: an edit travels whole, a few KiB, not as a delta.
    """
    dest = f"{commit}:refs/heads/{t.remote_branch}"
    tracking = t.tracking
    if t.proposals:
        dest, tracking = f"+{commit}:refs/heads/{t.proposals}", t.proposals_tracking
    env = {**repo.git.net_env(), **config_env({"pack.window": "0"})}
    leased = [f"--force-with-lease=refs/heads/{t.remote_branch}:{lease}"] if lease else []
    try:
        done = repo.git.run(
            "push", "--porcelain", "--quiet", *leased, t.remote, dest,
            check=False, timeout=NET_TIMEOUT_S, env=env,
        )  # fmt: skip
    except subprocess.TimeoutExpired as exc:
        raise _timed_out("push", t.remote) from exc
    if done.code == 0:
        if not _tracked_by_push(repo, t.remote, dest.partition(":")[2], tracking):
            repo.git.run("update-ref", tracking, commit)
        return True
    _stopped(done)
    said = done.text + done.err
    refused = [line for line in said.splitlines() if _refused(line)]
    if refused:  # the remote said no (a hook, a protected branch): asking again cannot help
        reason = refused[0].partition("[remote rejected]")[2].strip()
        told = [
            words
            for line in done.err.splitlines()
            if line.startswith("remote:") and (words := line.removeprefix("remote:").strip())
        ]
        raise Blocked(
            "error",
            f"{t.remote} refused the push {reason}" + (f": {told[0]}" if told else ""),
            _refusal_hint(repo, t, reason),
        )
    if any(word in said for word in ("[rejected]", "[remote rejected]", "non-fast-forward")):
        # someone else pushed first, or holds the remote's ref lock right now: fetch, go again
        rejected = [line for line in said.splitlines() if "rejected]" in line]
        t.last_rejection = (rejected or [_reason(said)])[0].strip()
        return False
    refusal = _hook_refusal(repo, done.err)
    if refusal is not None:  # our own hook said no: not the network, no back-off
        raise Blocked(
            "error",
            f"the pre-push hook refused the push: {refusal}",
            "do what the hook asks (or fix the hook in "
            f"{_hooks_dir(repo)}); memoryd keeps committing locally and pushes after that",
        )
    _local_failure("push", t.remote, done.err)
    raise Offline(f"git push {t.remote}: {_reason(done.err)}")


def _tracked_by_push(repo: Repo, remote: str, pushed: str, tracking: str) -> bool:
    """Does git's push move ``tracking`` itself? It does for a branch the remote's fetch
    refspecs map there (``+refs/heads/*:refs/remotes/origin/*``, as clone and remote add
    write them), "update by push" in its reflog; memoryd's own update-ref was one more git."""
    specs = [v for v in repo.git.config().get(f"remote.{remote}.fetch", []) if v is not None]
    if any(spec.startswith("^") for spec in specs):  # an exclusion: git's rules, not these
        return False
    for spec in specs:
        src, _, dst = spec.removeprefix("+").partition(":")
        if (src, dst) == (pushed, tracking):
            return True
        glob = src.endswith("/*") and dst.endswith("/*") and pushed.startswith(src[:-1])
        if glob and dst[:-1] + pushed[len(src) - 1 :] == tracking:
            return True
    return False


def _refusal_hint(repo: Repo, t: Target, reason: str) -> str:
    after = "memoryd keeps committing locally and pushes after that"
    if "checked out" in reason:
        # another device's own memory folder as the remote: git never updates the branch
        # a work tree has checked out, so this push can never succeed, however often tried
        url = repo.git.config_get(f"remote.{t.remote}.url") or t.remote
        return (
            f"{url} is a repository with a work tree (another device's memory folder?), and "
            "git never pushes into its checked-out branch: make a bare repository every "
            f"device pushes to (git clone --bare {url} <new place>), then point {t.remote} at "
            f"it (git -C {repo.top} remote set-url {t.remote} <new place>); {after}"
        )
    return f"fix that on the remote (a protected branch, a hook, your permissions); {after}"


# A "[remote rejected]" that is a race, not a refusal: another push holds the ref's lock, or
# moved the ref between git's check and its update. Fetching and pushing again may succeed.
_RACES = ("lock", "failed to update ref", "incorrect old value", "stale info")


def _refused(line: str) -> bool:
    """Is this porcelain line the remote refusing the push for good (not a race)?"""
    if "[remote rejected]" not in line:
        return False
    reason = line.partition("[remote rejected]")[2].lower()
    return not any(word in reason for word in _RACES)


def _hooks_dir(repo: Repo) -> Path:
    # --type=path: git expands '~/hooks' as it does when it runs the hook; read raw, the
    # hook was not found, and its refusal read as the network being down
    done = repo.git.run(
        "config", "--type=path", "--get", "core.hooksPath", check=False, readonly=True
    )
    configured = done.text.strip() if done.code == 0 else ""
    if configured:
        return Path(configured) if Path(configured).is_absolute() else repo.top / configured
    return repo.common_dir / "hooks"  # a linked work tree's too: git runs the repository's


def _hook_refusal(repo: Repo, err: str) -> str | None:
    """The pre-push hook's message when it refused (git's own failures say fatal:)."""
    hook = _hooks_dir(repo) / "pre-push"
    if "fatal:" in err or not (hook.is_file() and os.access(hook, os.X_OK)):
        return None
    said = [
        line.strip() for line in err.splitlines()
        if line.strip() and not line.startswith("error: failed to push some refs")
    ]  # fmt: skip
    return "; ".join(said) or "(it printed nothing)"
