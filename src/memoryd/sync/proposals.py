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
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from memoryd.compile.blocks import compile_files, index_path, is_generated
from memoryd.conflicts import is_conflict_copy
from memoryd.frontmatter_edit import edit_fields
from memoryd.memory import Memory, looks_binary, parse
from memoryd.roots import ROOT_FILE
from memoryd.sync import kept
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


def offer(
    repo: Repo, t: Target, head: str, main: str | None, *, tmp: Path, message: str,
    descriptions: Mapping[str, str],
) -> Offer:  # fmt: skip
    """The commit to push to ``branch``: ``head`` itself when it holds no proposal, else one
    commit on top of it with its proposals (those ``main`` has not) in their accepted form,
    and the compiled files as they read with those accepted (:func:`compiled_once_merged`).

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
    changed: dict[str, bytes] = {}
    for path, (_mode, sha) in present:
        data = accepted_form(datas.get(sha, b""), branch)
        if data is not None:
            changed[path] = data
    if not changed:
        return Offer(head, [])
    accepted = [repo.root_path(p) for p in changed]
    changed.update(compiled_once_merged(repo, head, changed, descriptions))
    lines = []
    for path, data in changed.items():
        mode = entries[path][0] if path in entries else "100644"
        new = git.hash_blob(data)
        lines.append(f"{mode} {new}\t{path}".encode("utf-8", "surrogateescape") + b"\0")
    index = kept.private_index(repo, tmp, head)
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


def compiled_once_merged(
    repo: Repo, head: str, accepted: Mapping[str, bytes], descriptions: Mapping[str, str]
) -> dict[str, bytes]:
    """The compiled files (repo path -> bytes) of ``head``'s tree with the ``accepted`` files
    (repo path -> bytes) in it, where they differ from ``head``'s: what every device compiles
    once the branch is merged. Without them the merge listed the accepted memories in no
    index.md (a proposal is listed nowhere), every device compiled them in after its sync,
    and each pushed that commit to a proposals branch of its own, for a person to merge."""
    git = repo.git
    tree = git.ls_tree(head, repo.prefix)
    shas = {path: sha for path, (_mode, sha) in tree.items() if path.endswith(".md")}
    datas = git.blobs(sorted(set(shas.values())))
    memories: dict[str, Memory] = {}
    for path, sha in shas.items():
        rel, data = repo.root_path(path), accepted.get(path, datas.get(sha))
        if data is None or is_generated(rel) or is_conflict_copy(rel) or looks_binary(data):
            continue
        memory = parse(data)
        if memory.sync:  # (a sync: false file is in no commit: listed nowhere, as on a device)
            memories[rel] = memory
    old_root = datas.get(shas.get(repo.repo_path(ROOT_FILE), ""))
    done = compile_files(memories, old_root, dict(descriptions))
    made = {repo.repo_path(index_path(f)): data for f, data in done.indexes.items()}
    if done.root_md is not None:
        made[repo.repo_path(ROOT_FILE)] = done.root_md
    return {p: data for p, data in made.items() if datas.get(shas.get(p, "")) != data}


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


def drop(repo: Repo, t: Target) -> bool:
    """Delete this device's proposals branch on the remote: True when it did. The caller
    calls it once this device holds nothing main lacks, when whatever the branch offered
    was merged (a merge, a squash, a rebase) or was taken back (the proposal forgotten here):
    a squashed branch stayed for good once another merge changed a file it changed too (a
    folder's index.md, nearly always), and a rejected one kept offering what its writer had
    deleted. A failure is left for the next cycle."""
    if repo.git.rev(t.proposals_tracking) is None:
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
