"""The pull-request flow of a team root (``sync.team_branch``): review by merging a branch.

A team that reviews every change as a pull request protects its main branch on the git
host. A device of such a team root never pushes main: it fetches and fast-forwards (or
replays onto) it, and pushes what it has that main has not to its own branch,
``memoryd/proposals/<user>/<device>``, where a person reviews it and merges it.

What is pushed there is one commit on top of this device's branch whose tree is the
branch's with every proposal of this device as it reads once accepted: ``status:
proposed`` dropped, ``accepted_by`` naming the merge. Merging that branch (plain git, a
host's merge button) is then the acceptance: main carries the accepted files, every
device indexes them after its next sync (:mod:`memoryd.team`), and for the writer's
device main is a descendant of its own branch, so its sync fast-forwards onto the
accepted files: no replay, no conflict copy, no second file. Until the merge, the
proposal is on the writer's device (with ``status: proposed``, indexed there alone) and
on its branch, which no device fetches into a work tree.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from memoryd.frontmatter_edit import edit_fields
from memoryd.memory import parse
from memoryd.sync import commit as local
from memoryd.sync.git import NET_TIMEOUT_S
from memoryd.sync.remote import Target
from memoryd.sync.repo import Repo
from memoryd.team import ACCEPTED_BY, STATUS, is_proposed

PREFIX = "memoryd/proposals/"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def branch_name(repo: Repo, device: str) -> str:
    """``memoryd/proposals/<user>/<device>``: the part of git's ``user.email`` before the
    ``@`` (``ann@acme.example``: ``ann``; else ``user.name``) and this device's name. One
    branch a device: it is force-pushed after each replay, and two devices of one person
    sharing a branch would push each other's proposals away."""
    email = repo.git.config_get("user.email") or ""
    user = _safe(email.partition("@")[0]) or _safe(repo.git.config_get("user.name") or "")
    return f"{PREFIX}{user or 'someone'}/{_safe(device) or 'device'}"


def _safe(name: str) -> str:
    return _UNSAFE.sub("-", name).strip(".-")


def accepted_form(data: bytes, branch: str) -> bytes | None:
    """The file ``data`` as merging ``branch`` accepts it; None when it is no proposal."""
    memory = parse(data)
    if memory.malformed or not is_proposed(memory.meta):
        return None
    return edit_fields(memory, {STATUS: None, ACCEPTED_BY: f"the merge of {branch}"})


@dataclass(frozen=True)
class Offer:
    commit: str  # what the proposals branch gets
    accepted: list[str]  # the proposals in it, as root paths


def offer(repo: Repo, t: Target, head: str, main: str | None, *, tmp: Path, message: str) -> Offer:
    """The commit to push to ``branch``: ``head`` itself when it holds no proposal, else one
    commit on top of it with its proposals (those ``main`` has not) in their accepted form.

    The same ``head`` gives the same tree: what the branch as last pushed
    holds already is offered again as it is, not as one more commit.
    """
    git, branch = repo.git, t.proposals
    if main is None:
        paths = list(git.ls_tree(head, repo.prefix))
    else:
        paths = git.changed_paths(main, head, repo.prefix)
    entries = git.ls_tree(head, repo.prefix)
    present = [(p, entries[p]) for p in paths if p in entries and p.endswith(".md")]
    datas = git.blobs([sha for _, (_, sha) in present])
    lines, accepted = [], []
    for path, (mode, sha) in present:
        changed = accepted_form(datas.get(sha, b""), branch)
        if changed is None:
            continue
        new = git.hash_blob(changed)
        lines.append(f"{mode} {new}\t{path}".encode("utf-8", "surrogateescape") + b"\0")
        accepted.append(repo.root_path(path))
    if not lines:
        return Offer(head, [])
    index = local.private_index(repo, tmp, head)
    try:
        git.run("update-index", "-z", "--index-info", input=b"".join(lines), index=index)
        tree = git.run("write-tree", index=index).text.strip()
    finally:
        index.unlink(missing_ok=True)
    offered = git.rev(t.proposals_tracking)
    if offered is not None and git.tree_of(offered) == tree and git.rev(f"{offered}^") == head:
        return Offer(offered, sorted(accepted))
    body = "".join(f"accepted once merged: {p}\n" for p in sorted(accepted))
    return Offer(git.commit_tree(tree, [head], f"{message}\n\n{body}"), sorted(accepted))


def merged(repo: Repo, t: Target, head: str, main: str) -> dict[str, bytes]:
    """This device's proposals that ``main`` holds as accepted though ``head`` is not in its
    history (a squash or rebase merge): root path -> the accepted file to take.

    Taken before the replay, they meet main's as the same file: without this the writer's
    ``status: proposed`` text became a conflict copy beside the accepted one."""
    git = repo.git
    ours, theirs = git.ls_tree(head, repo.prefix), git.ls_tree(main, repo.prefix)
    both = [
        p for p in git.changed_paths(head, main, repo.prefix)
        if p in ours and p in theirs and p.endswith(".md")
    ]  # fmt: skip
    datas = git.blobs([sha for p in both for sha in (ours[p][1], theirs[p][1])])
    found = {}
    for path in both:
        accepted = datas.get(theirs[path][1], b"")
        if accepted_form(datas.get(ours[path][1], b""), t.proposals) == accepted:
            found[repo.root_path(path)] = accepted
    return found


def is_merged(repo: Repo, offered: str, main: str) -> bool:
    """Does ``main`` hold every file ``offered`` changed, as it changed it? (a merge, a
    squash or a rebase of the branch: any of them took the proposals)"""
    git = repo.git
    if git.is_ancestor(offered, main):
        return True
    base = git.merge_base(offered, main)
    if base is None:
        return False
    ours, theirs = git.ls_tree(offered, ""), git.ls_tree(main, "")
    return all(ours.get(p) == theirs.get(p) for p in git.changed_paths(base, offered, ""))


def drop(repo: Repo, t: Target) -> bool:
    """Delete this device's proposals branch on the remote once main has all of it (merged):
    True when it did. A failure is left for the next cycle."""
    offered = repo.git.rev(t.proposals_tracking)
    main = repo.git.rev(t.tracking)
    if offered is None or main is None or not is_merged(repo, offered, main):
        return False
    try:
        done = repo.git.run(
            "push", "--porcelain", "--quiet", t.remote, f":refs/heads/{t.proposals}",
            check=False, timeout=NET_TIMEOUT_S, env=repo.git.net_env(),
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return False
    if done.code != 0 and "remote ref does not exist" not in done.err:
        return False
    repo.git.run("update-ref", "-d", t.proposals_tracking, check=False)
    return True
