"""One sync cycle for one root: commit, fetch, fast-forward or replay, push.

The promise, in order: no version anyone wrote is lost; the repository is never
left mid-operation (memoryd never starts a rebase or merge in the work tree:
it replays in memory and moves the work tree like a fast-forward); the user is
always told (the outcome, the state file, CONFLICTS.md); and mostly nobody has
to do anything.
"""

from __future__ import annotations

import errno
import logging
import posixpath
import random
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memoryd import held
from memoryd.config.sections import Config, RootConfig
from memoryd.conflicts import (
    conflict_lines,
    copy_path,
    parse_copy_name,
    safe_device,
    utc_stamp,
)
from memoryd.fsutil import atomic_write
from memoryd.gitcli import GitError
from memoryd.memory import printable
from memoryd.paths import Paths
from memoryd.rootfs import STATE_FILE
from memoryd.roots import ensure_gitignored
from memoryd.sync import (
    backups,
    casefold,
    exclude,
    heal,
    kept,
    massdelete,
    outgoing,
    proposals,
    remote,
    worktree,
)
from memoryd.sync import commit as local
from memoryd.sync.derived import Quarantined, is_generated, recompile
from memoryd.sync.git import EMPTY_TREE, ZERO, GitTimeout
from memoryd.sync.identity import IDENTITY_HINT, identity_error, is_identity_error
from memoryd.sync.replay import OutsideRoot, replay
from memoryd.sync.repo import Blocked, Repo, open_repo, preflight
from memoryd.sync.resolve import conflicts_may_differ, write_conflicts_file
from memoryd.sync.state import (
    RepoBusy,
    SyncState,
    load_state,
    now_ms,
    repo_lock,
    save_state,
    state_file,
)

log = logging.getLogger(__name__)

PUSH_ATTEMPTS = 5
BACKOFF_BASE_S = 15.0
BACKOFF_MAX_S = 900.0
OK_STATUSES = ("ok", "disabled")
# A cycle that the daemon's stop ended while it waited on the remote (status "stopped").
CUT_SHORT = "cut short by memoryd's stop; it runs again at the next start"
DISK_FULL = ("No space left on device", "Out of diskspace")  # git says either
FULL_DISK_HINT = (
    "free some disk space; nothing is lost, and the next cycle picks up where this one stopped"
)


def utc_now() -> datetime:
    """The cycle's wall clock (the seam tests replace): backup and copy stamps, backup ages."""
    return datetime.now(UTC)


@dataclass
class SyncOutcome:
    """What one cycle did. ``status``: ok, disabled, paused, refused, blocked (a git of the
    user's holds an old lock: :func:`memoryd.sync.repo.held_by`), busy, offline, auth (the
    remote wants credentials or a host key memoryd cannot give: no back-off, the fix named),
    error, stopped (the daemon's stop ended it: :data:`CUT_SHORT`)."""

    root: Path
    status: str = "ok"
    action: str = ""  # up to date, pushed, fast-forward, rebased, no remote, ...
    commits: list[str] = field(default_factory=list)
    pushed: bool = False
    not_pushed: int = 0
    conflicts: list[dict[str, str]] = field(default_factory=list)  # path, copy (new this cycle)
    notices: list[str] = field(default_factory=list)
    quarantined: list[Quarantined] = field(default_factory=list)
    left_out: list[dict[str, str]] = field(default_factory=list)
    backup_ref: str | None = None
    error: str | None = None
    hint: str | None = None

    @property
    def ok(self) -> bool:
        return self.status in OK_STATUSES

    @property
    def message(self) -> str:
        """One line for the daemon's status: what happened and what is pending."""
        parts = [self.action] if self.action else []
        if self.error:
            parts.append(self.error)
        if self.not_pushed:
            parts.append(f"{self.not_pushed} commit(s) not pushed")
        if self.conflicts:
            parts.append(f"{len(self.conflicts)} new conflict copy(ies)")
        if self.quarantined:
            parts.append(f"{len({q.path for q in self.quarantined})} file(s) quarantined")
        return "; ".join(parts) or self.status

    def to_json(self) -> dict[str, Any]:
        data = {k: v for k, v in self.__dict__.items() if k != "quarantined"}
        data["root"] = str(self.root)
        data["message"] = printable(self.message)
        data["quarantined"] = [_shown(q.__dict__) for q in self.quarantined]
        data["conflicts"] = [_shown(c) for c in self.conflicts]
        data["left_out"] = [_shown(item) for item in self.left_out]
        return data


def _shown(item: dict[str, Any]) -> dict[str, Any]:
    return {k: printable(v) if isinstance(v, str) else v for k, v in item.items()}


def sync_root(
    config: Config,
    paths: Paths,
    root: RootConfig,
    *,
    allow_mass_delete: bool = False,
    force: bool = False,
    lock_wait_s: float = 30.0,
) -> SyncOutcome:
    """Run one cycle for ``root``. Never raises for repository trouble: see the outcome.

    ``force`` ignores the network back-off after failures (the CLI's ``sync``).
    """
    outcome = SyncOutcome(root=root.path)
    policy = root.sync
    if not (policy.commit or policy.pull or policy.push):
        outcome.status, outcome.action = "disabled", "sync is off for this root"
        return outcome
    state = load_state(paths, root.path)
    state.last_attempt_ms = now_ms()
    try:
        repo = open_repo(root.path)
        with repo_lock(paths, repo.top, wait_s=lock_wait_s):
            _Cycle(
                config, paths, root, repo, state=state, outcome=outcome,
                allow_mass_delete=allow_mass_delete, force=force,
            ).run()  # fmt: skip
    except Blocked as exc:
        outcome.status, outcome.error, outcome.hint = exc.status, exc.message, exc.hint
        if exc.status == "disabled":  # nothing wrong: nothing to sync with
            outcome.action, outcome.error = exc.message, None
    except RepoBusy as exc:
        outcome.status, outcome.error, outcome.hint = "busy", exc.message, exc.hint
    except GitError as exc:
        outcome.status, outcome.error = "error", str(exc)
        outcome.hint = "memoryd retries on the next cycle; the files on disk are untouched"
        if isinstance(exc, GitTimeout):
            outcome.hint = (
                f"the machine was busy or the root is very large: memoryd tries again on the "
                f"next cycle, and nothing is lost; if it repeats, run 'memoryd sync --root "
                f"{root.path}' when the machine is quieter"
            )
        elif any(full in exc.stderr for full in DISK_FULL):
            outcome.hint = FULL_DISK_HINT
        elif is_identity_error(exc.stderr):  # retrying never helps: the user must tell git
            outcome.error, outcome.hint = identity_error(exc.stderr), IDENTITY_HINT
        log.debug("sync of %s failed: %s", root.path, outcome.error)  # the outcome tells it
    except OSError as exc:  # a full disk, a read-only folder: the user's to fix
        log.debug("sync of %s failed: %s", root.path, exc)
        outcome.status = "error"
        outcome.error = f"{exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else "")
        outcome.hint = (
            FULL_DISK_HINT
            if exc.errno == errno.ENOSPC
            else ("memoryd retries on the next cycle; fix the file's permissions if this repeats")
        )
    outcome.notices = [printable(n) for n in outcome.notices]  # a non-UTF-8 name: \xe9
    _record(state, outcome)
    try:
        save_state(paths, state)
    except OSError as exc:
        log.warning("could not save the sync state of %s: %s", root.path, exc)
        where = exc.filename or state_file(paths, root.path)
        said = f"could not save the sync state to {where}: {exc.strerror or exc}"
        if outcome.error is None:
            outcome.status, outcome.error, outcome.hint = "error", said, FULL_DISK_HINT
        else:  # the cycle's own error says what went wrong first: it stays
            outcome.status = "error" if outcome.ok else outcome.status
            outcome.notices.append(said)
    return outcome


def _record(state: SyncState, outcome: SyncOutcome) -> None:
    stamp = now_ms()
    state.cut_short = outcome.status == "stopped"
    if not state.cut_short:  # a cycle cut short learnt nothing of the remote: the last said
        state.last_status = outcome.status
        state.last_error = outcome.error
        state.last_hint = outcome.hint if outcome.error else None
    state.not_pushed = outcome.not_pushed
    if outcome.not_pushed:
        state.ahead_since_ms = state.ahead_since_ms or stamp
    elif outcome.ok:  # a failed cycle may not have counted: the first time stays
        state.ahead_since_ms = 0
    state.quarantined = [q.__dict__ for q in outcome.quarantined]
    state.left_out = outcome.left_out
    for text in outcome.notices:
        state.notice(text, stamp)
    for said in conflict_lines(outcome.conflicts):
        state.notice(printable(said), stamp)
    if outcome.ok:
        state.last_sync_ms = stamp


class _Cycle:
    def __init__(
        self, config: Config, paths: Paths, root: RootConfig, repo: Repo, *, state: SyncState,
        outcome: SyncOutcome, allow_mass_delete: bool, force: bool,
    ) -> None:  # fmt: skip
        self.config, self.paths, self.root, self.repo = config, paths, root, repo
        self.state, self.outcome = state, outcome
        self.allow_mass_delete, self.force = allow_mass_delete, force
        self.policy = root.sync
        self.device = safe_device(config.device)
        self.tmp = paths.state_dir / "sync" / "tmp"
        self.kept_dir = paths.state_dir / "sync" / "kept"
        self.user_at_head = False  # the user's index agrees with HEAD under the root
        self.committed_on: str | None = None  # the head this cycle's first commit was made on

    def run(self) -> None:
        kept.clean_tmp(self.tmp)
        self.outcome.notices += preflight(self.repo, self.policy.stale_lock_s)
        self.state.whole_head, repaired = heal.check(self.repo, self.state.whole_head)
        if repaired:
            self.outcome.notices.append(repaired)
        if self.policy.commit and not self._commit_first():
            return
        if not (self.policy.pull or self.policy.push):
            self.outcome.action = "committed locally (pull and push are off for this root)"
            return
        branch = self.repo.git.branch()
        # not asking the remote yet: a cycle backing off must not wait on it either
        t = remote.target(self.repo, self.policy.remote, branch, probe=False) if branch else None
        if t is None or branch is None:
            self.outcome.action = f"committed locally (no remote {self.policy.remote!r})"
            return
        if self.state.retry_after_ms > now_ms() and not self.force:
            self._offline(self.state.last_error or "remote unreachable", t, backoff=False)
            self._count_unpushed(t)
            return
        try:
            t = remote.target(self.repo, self.policy.remote, branch) or t
            if self.policy.team_branch and self.root.is_team:
                t.proposals = proposals.branch_name(self.repo, self.config.device)
            if not self._pushed_first(t):
                self.exchange(t)
        except remote.Offline as exc:
            refused = remote.needs_the_user(str(exc))  # a wrong key: waiting never fixes it
            self._offline(str(exc), t, backoff=not refused)
            if refused:
                self.outcome.status = "auth"
            return
        except remote.Stopped:  # the daemon's stop: nothing wrong, nothing learned, no back-off
            self.outcome.status, self.outcome.action = "stopped", CUT_SHORT
            return
        finally:
            self._count_unpushed(t)
        self.state.failures, self.state.retry_after_ms = 0, 0
        if self.outcome.ok:  # only a completed exchange expires backups
            backups.prune(self.repo, self.device, utc_now(), self.policy.backup_keep_days)

    # -- local side
    def _commit_first(self) -> bool:
        """The cycle's first commit, the user's index checked first; False when paused."""
        # on a branch, heal just read its head: HEAD, not asked again (a git)
        on_branch = self.repo.git.branch_ref() is not None
        head = self.state.whole_head or None if on_branch else self.repo.git.rev("HEAD")
        self._repair_user_index(head)
        if not self.commit_local(head):
            return False
        if self.outcome.commits:
            self.committed_on = head
        return True

    def commit_local(self, head: str | None) -> bool:
        """Commit the root's changes on ``head`` (HEAD; None: an unborn branch); False when
        the root is paused (mass delete)."""
        ensure_gitignored(self.root.path, STATE_FILE)
        local.prune_exclude(self.repo)  # a memory back to sync: true shows up again
        index = kept.kept_index(self.repo, self.kept_dir, head)
        finished = False
        try:
            changes = local.clean_own_temp(self.repo, local.pending(self.repo, index))
            changed = (self.repo.root_path(path) for _, path in changes)
            if conflicts_may_differ(self.root.path, changed) and write_conflicts_file(
                self.root.path
            ):
                recompile(self.root, self.config)  # the directory lists CONFLICTS.md
                changes = local.clean_own_temp(self.repo, local.pending(self.repo, index))
            parted = casefold.part(self.repo, changes, head, self.device)
            if parted:  # a new name case-folding onto another: now a conflict copy
                self.outcome.notices += parted
                changes = local.pending(self.repo, index)
            batch = self._sorted(changes, head, index)
            kept_here, committed = local.held_back(self.repo, batch, head)
            if held.hold(self.repo.git_dir, self.root.path, kept_here, committed):
                write_conflicts_file(self.root.path)  # compiled from what is synced
                recompile(self.root, self.config)
                batch = self._sorted(local.pending(self.repo, index), head, index)
            batch.untrack = local.tracked_state_files(self.repo, head)
            local.update_exclude(self.repo, batch)
            self.outcome.quarantined, self.outcome.left_out = batch.quarantined, batch.left_out
            self.outcome.notices += [n for n in batch.notices if n not in self.outcome.notices]
            local.stage(self.repo, index, batch)
            if self._paused(head, batch, index):
                return False
            new = local.commit(self.repo, index, head, batch, self.device)
            kept.keep_index(self.repo, index, new or head, user_at_head=self.user_at_head)
            self.user_at_head = False  # a move or a reset of the cycle writes it next
            finished = True
        finally:
            if not finished:
                kept.drop_index(index)
        if new is not None:
            self.outcome.commits.append(new)
        if batch.untrack and new is not None:
            self.outcome.notices.append(
                f"{', '.join(batch.untrack)} was tracked by git: untracked it (the file stays on "
                "disk and is ignored from now on)"
            )
        return True

    def _sorted(self, changes: list[tuple[str, str]], head: str | None, index: Path) -> local.Batch:
        """The batch, without tracked paths a case-insensitive disk holds one file for."""
        pairs = {}
        if casefold.folds(self.repo):
            pairs = casefold.twins(self.repo, {path for _, path in changes}, head)
        if pairs and head is not None:
            said = casefold.keep_twins(self.repo, pairs, head, self.device)
            self.outcome.notices += [n for n in said if n not in self.outcome.notices]
            changes = [c for c in local.pending(self.repo, index) if c[1] not in pairs]
        batch = local.sort_batch(self.repo, self.config, changes, self.root.layout)
        for path, other in sorted(pairs.items()):
            why = casefold.TWIN_WHY.format(self.repo.root_path(other))
            batch.left_out.append({"path": self.repo.root_path(path), "why": why})
        return batch

    def _paused(self, head: str | None, batch: local.Batch, index: Path) -> bool:
        share, floor = self.policy.mass_delete_share, self.policy.mass_delete_min

        def agreed() -> str | None:
            branch = self.repo.git.branch()
            if branch is None:
                return None
            t = remote.target(self.repo, self.policy.remote, branch, probe=False)
            return self.repo.git.rev(t.tracking) if t is not None else None

        big = massdelete.mass_delete(
            self.repo, head, batch, share, floor, index=index, agreed=agreed
        )
        if big is None or self.allow_mass_delete:
            self.state.paused = None
            return False
        reason = f"{big.deleted} of {big.total} memories deleted in one go"
        self.state.paused = {"reason": reason, "deleted": big.deleted, "total": big.total}
        self.outcome.status = "paused"
        self.outcome.error = f"{reason}: nothing committed, sync paused for {self.root.path}"
        self.outcome.hint = (
            "restore the files, or run 'memoryd sync --root "
            f"{self.root.path} --allow-mass-delete' to commit the deletion"
        )
        return True

    def _repair_user_index(self, head: str | None) -> None:
        """Index entries under the root left behind HEAD (a cycle killed mid-way): refresh.

        Not asked when the user's index and HEAD are as the last cycle left them, agreeing
        (:func:`memoryd.sync.kept.user_index_as_left`)."""
        self.user_at_head = True
        if head is not None and kept.user_index_as_left(self.repo, self.kept_dir, head):
            return
        args = ("diff", "--cached", "--name-only", "-z", "HEAD", "--", self.repo.pathspec)
        done = self.repo.git.run(*args, readonly=True, check=False)
        if done.code != 0:
            if self.repo.git.rev("HEAD") is None:
                return  # an unborn branch: nothing committed to be behind
            raise GitError(args, done.code, done.err)
        raw = done.out
        stale = [p.decode("utf-8", "surrogateescape") for p in raw.split(b"\0") if p]
        if stale:
            local.refresh_user_index(self.repo, stale)

    # -- remote side
    def exchange(self, t: remote.Target) -> None:
        git = self.repo.git
        for attempt in range(PUSH_ATTEMPTS):
            theirs = remote.fetch(self.repo, t)
            if theirs is None and not self.repo.prefix:  # a memory repository
                followed = remote.follow_default(self.repo, t)
                if followed is not None:
                    self.outcome.notices.append(followed)
                    theirs = remote.fetch(self.repo, t)
            head = git.rev("HEAD")
            if (
                theirs is not None
                and head != theirs
                and not (head and git.is_ancestor(theirs, head))
            ):
                if not self.policy.pull:
                    self.outcome.action = "the remote has new commits (pull is off for this root)"
                    return
                if t.proposals and head is not None:
                    head = self._take_merged(t, head, theirs)
                self.integrate(head, theirs, t.tracking)
                head = git.rev("HEAD")
            head = self._taken_back(t, head, theirs)
            if head is None or head == theirs:
                self.outcome.action = self.outcome.action or "up to date"
                if t.proposals and proposals.drop(self.repo, t):
                    self.outcome.notices.append(
                        f"nothing of this device waits for review in {t.proposals} any more: "
                        f"deleted it on {t.remote}"
                    )
                return
            if not self.policy.push:
                self.outcome.action = self.outcome.action or "ahead of the remote (push is off)"
                return
            self._refuse_leak(theirs, head, t)
            if t.proposals and theirs is not None:  # main is a person's merge away
                if self._propose(t, head, theirs):
                    return
            elif remote.push(self.repo, t, head):
                self.outcome.pushed = True
                self.outcome.action = (self.outcome.action + ", pushed").lstrip(", ")
                return
            log.info("push to %s rejected (attempt %d); fetching again", t.remote, attempt + 1)
            time.sleep(random.uniform(0.02, 0.2) * (attempt + 1))
        raise Blocked(
            "error",
            f"git push {t.remote} was rejected {PUSH_ATTEMPTS} times in a row: {t.last_rejection}",
            "memoryd tries again on the next cycle; if it keeps failing, a stale lock on the "
            "remote may hold the branch (a refs/heads/*.lock file there: remove it)",
        )

    def _pushed_first(self, t: remote.Target) -> bool:
        """Push this cycle's commit without fetching first, when it was made on the remote's
        head as this device last saw it; True when the remote took it.

        The push holds a lease on the head the commit was made on (``--force-with-lease``):
        a remote anywhere else (it moved on, went back, lost the branch; or this device has
        commits it never took) refuses it, and the cycle fetches as always (a refusal costs
        one push more, and sends nothing). Else the fetch would have brought nothing, and
        'git commit; git push' by hand fetches nothing either: one remote conversation, not
        two (at 10k memories the fetch was 12 of a cycle's 180 ms of CPU). An unreachable
        remote is told as the fetch tells it: the cycle goes on to fetch."""
        on = self.committed_on
        if on is None or t.proposals or not (self.policy.pull and self.policy.push):
            return False
        head = self.outcome.commits[-1]  # on ``on``: what the remote lacks, if it is there
        self._refuse_leak(on, head, t)
        try:
            if not remote.push(self.repo, t, head, lease=on):
                return False
        except remote.Unanswered:  # the fetch would wait as long again, for the same silence
            raise
        except remote.Offline:
            return False
        self.outcome.pushed = True
        self.outcome.action = (self.outcome.action + ", pushed").lstrip(", ")
        return True

    def _taken_back(self, t: remote.Target, head: str | None, theirs: str | None) -> str | None:
        """The pull-request flow: ``theirs`` when this device's commits beyond main add up to
        nothing (a proposal forgotten on its writer's device, docs/team.md's rejection): HEAD
        moves there, and there is nothing to review. Else ``head``."""
        git = self.repo.git
        if not t.proposals or head is None or theirs is None or head == theirs:
            return head
        if git.tree_of(head) != git.tree_of(theirs):
            return head
        git.run("reset", "-q", theirs)  # the work tree is already main's
        return theirs

    def _take_merged(self, t: remote.Target, head: str, theirs: str) -> str | None:
        """Proposals of this device that main took by a squash or rebase merge: the work
        tree gets main's accepted file (when it still holds what was proposed), committed."""
        taken = proposals.merged(self.repo, t, head, theirs)
        ours = self.repo.git.ls_tree(head, self.repo.prefix)
        for rel, data in taken.items():
            path = self.root.path / rel
            sha = ours[self.repo.repo_path(rel)][1]
            if path.is_file() and self.repo.git.hash_blob(path.read_bytes()) == sha:
                atomic_write(path, data)
        if taken and self.policy.commit:
            self.commit_local(self.repo.git.rev("HEAD"))
        return self.repo.git.rev("HEAD")

    def _propose(self, t: remote.Target, head: str, theirs: str) -> bool:
        """Push what main has not to this device's proposals branch; False when rejected."""
        message = f"memoryd({self.device}): proposed for review"
        offer = proposals.offer(
            self.repo, t, head, theirs, tmp=self.tmp, message=message,
            descriptions=self.config.compile.folder_descriptions,
        )  # fmt: skip
        waiting = f"waiting in {t.proposals} for a person to merge it into {t.remote_branch}"
        if self.repo.git.rev(t.proposals_tracking) == offer.commit:
            self.outcome.action = (self.outcome.action + ", " + waiting).lstrip(", ")
            return True
        if not remote.push(self.repo, t, offer.commit):
            return False
        self.outcome.pushed = True
        self.outcome.action = (self.outcome.action + f", pushed to {t.proposals}").lstrip(", ")
        self.outcome.notices.append(
            f"{len(offer.accepted)} proposal(s) {waiting}" if offer.accepted else waiting
        )
        return True

    def _refuse_leak(self, theirs: str | None, head: str, t: remote.Target) -> None:
        """A secret in a commit the user made by hand: not pushed (see memoryd.sync.outgoing)."""
        leak = outgoing.first_leak(self.repo, theirs, head)
        if leak is None:
            return
        back = f"git rebase -i {theirs[:12]}" if theirs else "git rebase -i --root"
        raise Blocked(
            "refused",
            leak.message,
            f"take it out of that commit ({back} in {self.repo.top}) and rotate it if it was "
            f"real; a false positive: add {leak.fingerprint} to "
            f"{self.root.path / '.memoryd-allowlist'}",
        )

    def integrate(self, head: str | None, theirs: str, tracking: str) -> None:
        edited = worktree.edited_outside(self.repo, head, theirs) if head else []
        if edited:
            more = f" (and {len(edited) - 1} more)" if len(edited) > 1 else ""
            raise Blocked(
                "refused",
                f"the remote's new commits change {printable(edited[0])}{more} outside the "
                "memory root, where you have changes not committed",
                "stash them (git stash; memoryd pulls on its next cycle, then git stash pop), "
                "or commit them and pull yourself (git pull --rebase)",
            )
        if head is None or self.repo.git.is_ancestor(head, theirs):
            self.outcome.notices += worktree.move(
                self.repo,
                head,
                theirs,
                "memoryd: fast-forward",
                aside=self._aside,
                beside=self._beside,
            )
            self.outcome.action = "fast-forward"
        else:
            self.rebase(head, theirs, tracking)
        self.after_move()

    def rebase(self, head: str, theirs: str, tracking: str) -> None:
        git, now = self.repo.git, utc_now()
        since = git.merge_base(head, theirs)
        # where this device last fetched the remote: past the merge base (or with none), the
        # remote's history was rewritten and force-pushed (filter-repo, a squash)
        fork = git.fork_point(tracking, head)
        rewritten = fork is not None and fork != since
        if rewritten and fork is not None:  # past the shared commit; with none, still kin?
            rewritten = git.is_ancestor(since, fork) if since else self._kin(fork, theirs)
        self.outcome.backup_ref = backups.backup(self.repo, self.device, utc_stamp(now), head)
        if rewritten and fork == head:  # nothing here since: the rewrite, as it is
            self._take(head, theirs)
            return
        base = since
        if rewritten and fork is not None:
            base = fork if since is not None else self._rewritten_base(fork, theirs)
            since = fork
        base = base or EMPTY_TREE
        index = kept.private_index(self.repo, self.tmp, None)
        try:
            result = replay(self.repo, base, head, theirs, index=index, device=self.device)
            tree = git.run("write-tree", index=index).text.strip()
            heal.keep(self.repo, tree)  # reachable until the branch names it (sync.heal)
        except OutsideRoot as exc:
            raise Blocked(
                "refused",
                f"the branch has diverged from the remote with your own commits ({exc} and maybe "
                "more) outside the memory root",
                "integrate the branch yourself (git pull --rebase); memoryd syncs after that",
            ) from None
        finally:
            index.unlink(missing_ok=True)
        count = git.count(f"{since}..{head}") if since else git.count(head)
        message = _replay_message(
            self.device, count, theirs, self.outcome.backup_ref, result.copies
        )
        # the remote holds every local change already (nothing since the fork point): its head
        # as it is, not one more commit of the same tree pushed to every device
        same = tree == git.tree_of(theirs)
        try:
            new = theirs if same else git.commit_tree(tree, [theirs], message)
            heal.keep(self.repo, new)
            self.outcome.notices += worktree.move(
                self.repo,
                head,
                new,
                "memoryd: replay local commits",
                aside=self._aside,
                beside=self._beside,
            )
        finally:
            heal.release(self.repo)
        if not same:
            self.outcome.commits.append(new)
        self.outcome.action = "rebased onto the remote"
        self.outcome.notices += result.notices
        self.outcome.conflicts += [{"path": p, "copy": c} for p, c in result.copies]

    def _kin(self, fork: str, theirs: str) -> bool:
        """Does the remote still hold one memory exactly as the fork point had it?

        A rewrite (filter-repo, BFG, a squash with an edit) changes every tree but keeps most
        memories byte for byte; origin pointed at another repository shares none, and its
        texts must meet this device's as unrelated ones (a copy each), not be taken as an
        edit of them. Compiled files prove nothing: every root has them."""
        before = self.repo.git.ls_tree(fork, self.repo.prefix)
        after = self.repo.git.ls_tree(theirs, self.repo.prefix)
        return any(
            after.get(path) == entry and not is_generated(self.repo.root_path(path))
            for path, entry in before.items()
        )

    def _take(self, head: str, theirs: str) -> None:
        """The remote was rewritten and this device has nothing it did not fetch: take it.

        Merged from an empty base, every memory the rewrite changed became a conflict copy
        on every device, even those with no change of their own."""
        self.outcome.notices += worktree.move(
            self.repo, head, theirs, "memoryd: take the rewritten remote",
            aside=self._aside, beside=self._beside,
        )  # fmt: skip
        self.outcome.action = "took the rewritten remote"
        self.outcome.notices.append(
            f"the remote's history was rewritten and force-pushed; this device had nothing "
            f"unpushed, so it took the remote as it is (the old history: {self.outcome.backup_ref})"
        )

    def _rewritten_base(self, fork: str, theirs: str) -> str:
        """The base to replay onto a remote whose history shares no commit with this branch.

        After a rewrite (a squash, filter-repo, then a force push) the remote as this device
        last fetched it (``fork``, from the tracking ref's reflog, as git pull --rebase finds
        it) is what the local changes were made on; against an empty base every file either
        side had changed became a conflict copy on every device. A file the remote no longer
        has is left out of the base, so it reads as added here and is kept: a purge and a
        remote that is another repository look the same, and only the user can tell them.
        """
        git = self.repo.git
        prefix = self.repo.prefix
        gone = sorted(set(git.ls_tree(fork, prefix)) - set(git.ls_tree(theirs, prefix)))
        index = kept.private_index(self.repo, self.tmp, fork)
        try:
            if gone:
                lines = [f"0 {ZERO}\t{p}".encode("utf-8", "surrogateescape") + b"\0" for p in gone]
                git.run("update-index", "-z", "--index-info", input=b"".join(lines), index=index)
            tree = git.run("write-tree", index=index).text.strip()
        finally:
            index.unlink(missing_ok=True)
        left = f"; {len(gone)} file(s) it no longer has are kept here" if gone else ""
        self.outcome.notices.append(
            "the remote's history shares no commit with this branch (rewritten and "
            f"force-pushed, or another repository): merged from where this device last "
            f"fetched it ({fork[:12]}){left}"
        )
        return tree

    def _aside(self, rel: str) -> str:
        folder = posixpath.dirname(rel)
        taken = {posixpath.join(folder, p.name) for p in (self.root.path / folder).iterdir()}
        return copy_path(rel, self.device, (self.root.path / rel).read_bytes(), taken)

    def _beside(self, rel: str, data: bytes, device: str) -> str:
        """Save ``data`` (another device's version of ``rel``) as a conflict copy beside it.

        Kept on this device only when ``rel`` is held back here (quarantined, too big); an
        ordinary file edited while the cycle ran gets a copy every device sees.
        """
        folder = posixpath.dirname(rel)
        siblings = list((self.root.path / folder).iterdir())
        for sibling in siblings:  # a cycle killed after saving it: the copy is there already
            sibling_rel = posixpath.join(folder, sibling.name)
            name = parse_copy_name(sibling_rel)
            if name is not None and name.original == rel and sibling.read_bytes() == data:
                return sibling_rel
        taken = {posixpath.join(folder, p.name) for p in siblings}
        copy = copy_path(rel, device, data, taken)
        held_here = {q.path for q in self.outcome.quarantined}
        held_here |= {item["path"] for item in self.outcome.left_out}
        if rel in held_here:
            # for this device's user only (the version is on the remote already): committed,
            # it would send every device one more copy of a version they all have
            exclude.keep_private(
                self.repo.common_dir, self.repo.work_trees(), [self.repo.repo_path(copy)]
            )
        atomic_write(self.root.path / copy, data)
        self.outcome.conflicts.append({"path": rel, "copy": copy})
        return copy

    def after_move(self) -> None:
        """Recompile what the move changed, and commit that (same bytes on every device)."""
        write_conflicts_file(self.root.path)
        recompile(self.root, self.config)
        worktree.restat(self.repo)  # a compiled file git checked out with CRLF, written with LF
        if self.policy.commit:
            self.commit_local(self.repo.git.rev("HEAD"))

    def _count_unpushed(self, t: remote.Target) -> None:
        if self.outcome.pushed:  # the remote has HEAD now
            self.outcome.not_pushed = 0
            return
        head = self.repo.git.rev("HEAD")
        if head is None:
            return
        known = self.repo.git.rev(t.tracking)
        if known == head:  # pushed, or in step: nothing to count
            self.outcome.not_pushed = 0
            return
        offered = self.repo.git.rev(t.proposals_tracking) if t.proposals else None
        if offered is not None:  # on the proposals branch: pushed, waiting for a merge
            both = ["^" + ref for ref in (known, offered) if ref]
            self.outcome.not_pushed = int(self.repo.git.out("rev-list", "--count", head, *both))
            return
        self.outcome.not_pushed = self.repo.git.count(f"{known}..{head}" if known else head)

    def _offline(self, error: str, t: remote.Target, backoff: bool) -> None:
        if backoff:
            self.state.failures += 1
            delay = min(BACKOFF_BASE_S * 2 ** (self.state.failures - 1), BACKOFF_MAX_S)
            self.state.retry_after_ms = now_ms() + int(delay * random.uniform(0.8, 1.2) * 1000)
        self.outcome.status, self.outcome.error = "offline", error
        self.outcome.hint = remote.offline_hint(error, t.remote, self.repo.top)


def _replay_message(
    device: str, count: int, onto: str, backup: str | None, copies: list[tuple[str, str]]
) -> str:
    lines = [f"memoryd({device}): replay {count} local commit(s) onto {onto[:12]}", ""]
    lines += [f"conflict: {path}: local text kept as {copy}" for path, copy in copies]
    if backup:
        lines.append(f"backup of the local commits: {backup}")
    lines += ["", f"Memoryd-Device: {device}"]
    return printable("\n".join(lines) + "\n")
