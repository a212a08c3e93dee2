"""Sync's typed view of one work tree's git, run through :mod:`memoryd.gitcli`.

Every call gets :func:`memoryd.gitcli.repo_env` (the root's own repository and index,
never a ``GIT_INDEX_FILE`` inherited from a hook). Auth is the user's own git setup
(ssh agent, credential helper); memoryd never sees a credential and never prompts.
"""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from memoryd import gitcli
from memoryd.gitcli import LOCAL_TIMEOUT_S, GitError

log = logging.getLogger(__name__)

ZERO = "0" * 40
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
NET_TIMEOUT_S = 120.0


class GitTimeout(GitError):
    """A local git command ran past its timeout: killed, with the lock it held removed."""

    def __init__(self, args: Sequence[str], seconds: float) -> None:
        super().__init__(args, -1, f"ran longer than {seconds:g} s and was stopped")
        self.step = " ".join(["git", *args[:1]])
        self.seconds = seconds

    def __str__(self) -> str:
        return f"{self.step} ran longer than {self.seconds:g} s and was stopped"


def config_env(settings: dict[str, str]) -> dict[str, str]:
    """``settings`` as git reads them from the environment (``GIT_CONFIG_COUNT``, git 2.31
    and later; older ones ignore it), after any the environment already gives git."""
    try:
        first = int(os.environ.get("GIT_CONFIG_COUNT", "0"))
    except ValueError:
        first = 0
    env = {"GIT_CONFIG_COUNT": str(first + len(settings))}
    for n, (key, value) in enumerate(settings.items(), start=first):
        env[f"GIT_CONFIG_KEY_{n}"] = key
        env[f"GIT_CONFIG_VALUE_{n}"] = value
    return env


# what a Git answers once (its config, remotes, work trees, branch), until it writes one
ASKED_ONCE = frozenset({"config", "remote", "worktree", "symbolic-ref"})


class Git:
    """git run in one work tree. ``index`` points a call at a private index file.

    One lives for one sync cycle: the repository's config, remotes, work trees and branch
    are asked once (:meth:`asked`: each was asked two or three times a cycle, a process
    each), and asked again after the cycle changes one of them itself.
    """

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self._asked: dict[tuple[str, ...], gitcli.Done] = {}

    def asked(self, *args: str) -> gitcli.Done:
        """A read-only query of the config, remotes, work trees or branch (its first answer)."""
        assert args[0] in ASKED_ONCE, args
        if args not in self._asked:
            self._asked[args] = self.run(*args, check=False, readonly=True)
        return self._asked[args]

    def run(
        self,
        *args: str,
        input: bytes | None = None,
        check: bool = True,
        index: Path | None = None,
        env: Mapping[str, str] | None = None,
        readonly: bool = False,
        timeout: float | None = None,
    ) -> gitcli.Done:
        if not readonly and args and args[0] in ASKED_ONCE:
            self._asked.clear()
        extra = dict(env or {})
        if index is not None:
            extra["GIT_INDEX_FILE"] = str(index)
        if readonly:
            extra["GIT_OPTIONAL_LOCKS"] = "0"
        timeout = LOCAL_TIMEOUT_S if timeout is None else timeout
        started = time.time()
        try:
            done = gitcli.run(
                args, cwd=self.workdir, env=gitcli.repo_env(extra), timeout=timeout, input=input
            )
        except subprocess.TimeoutExpired:
            if args and args[0] in gitcli.NETWORK:  # the remote's silence: remote.py says so
                raise
            self._drop_lock(index, started)
            raise GitTimeout(args, timeout) from None
        if check and done.code != 0:
            raise GitError(args, done.code, done.err)
        return done

    def _drop_lock(self, index: Path | None, since: float) -> None:
        """The index lock the killed git took (git removes it only when it ends itself)."""
        lock = Path(f"{index}.lock") if index is not None else None
        if lock is None:
            done = gitcli.run(
                ["rev-parse", "--git-path", "index.lock"], cwd=self.workdir,
                env=gitcli.repo_env(), timeout=LOCAL_TIMEOUT_S,
            )  # fmt: skip
            said = done.text.strip()
            lock = Path(said) if Path(said).is_absolute() else self.workdir / said
        with contextlib.suppress(OSError):
            if lock.stat().st_mtime >= since - 1:
                lock.unlink()
                log.info("removed %s, left by a git that ran past its timeout", lock)

    def out(self, *args: str, **kw: object) -> str:
        """stdout of a read-only command, stripped."""
        return self.run(*args, readonly=True, **kw).text.strip()  # type: ignore[arg-type]

    # -- facts about the repository (read-only: GIT_OPTIONAL_LOCKS=0)
    def places(self) -> tuple[Path, Path, Path]:
        """The top of the work tree, its git dir, and what every work tree of the repository
        shares (``info/exclude``, ``hooks``, refs): the git dir, except in a linked work tree
        (``git worktree add``). One git for the three."""
        said = self.out("rev-parse", "--show-toplevel", "--absolute-git-dir", "--git-common-dir")
        top, git_dir, common = said.splitlines()
        common_dir = Path(common) if Path(common).is_absolute() else self.workdir / common
        return Path(top), Path(git_dir), common_dir.resolve()

    def work_trees(self) -> list[Path]:
        """The top of every work tree of the repository (``git worktree list``)."""
        done = self.asked("worktree", "list", "--porcelain")
        if done.code != 0:
            raise GitError(("worktree", "list", "--porcelain"), done.code, done.err)
        listed = done.text.strip().splitlines()
        return [Path(line[len("worktree ") :]) for line in listed if line.startswith("worktree ")]

    def branch_ref(self) -> str | None:
        """The current branch's full ref (``refs/heads/...``), or None on a detached HEAD."""
        done = self.asked("symbolic-ref", "-q", "HEAD")
        return done.text.strip() or None if done.code == 0 else None

    def branch(self) -> str | None:
        """The current branch, or None on a detached HEAD."""
        ref = self.branch_ref()
        return ref.removeprefix("refs/heads/") if ref else None

    def rev(self, ref: str) -> str | None:
        done = self.run(
            "rev-parse", "-q", "--verify", ref + "^{commit}", check=False, readonly=True
        )
        return done.text.strip() if done.code == 0 else None

    def tree_of(self, commit: str) -> str:
        return self.out("rev-parse", commit + "^{tree}")

    def is_ancestor(self, a: str, b: str) -> bool:
        done = self.run("merge-base", "--is-ancestor", a, b, check=False, readonly=True)
        return done.code == 0

    def merge_base(self, a: str, b: str) -> str | None:
        done = self.run("merge-base", a, b, check=False, readonly=True)
        return done.text.strip() if done.code == 0 else None

    def fork_point(self, ref: str, commit: str) -> str | None:
        """Where ``commit``'s history left any earlier value of ``ref`` (its reflog), or None."""
        done = self.run("merge-base", "--fork-point", ref, commit, check=False, readonly=True)
        return done.text.strip() or None if done.code == 0 else None

    def count(self, spec: str) -> int:
        return int(self.out("rev-list", "--count", spec) or 0)

    def net_env(self) -> dict[str, str]:
        """The environment a fetch, push or ls-remote adds (see :func:`memoryd.gitcli.net_env`)."""
        return gitcli.net_env(self.config_get("core.sshCommand"), self.config_get("core.askPass"))

    def remotes(self) -> list[str]:
        done = self.asked("remote")
        if done.code != 0:
            raise GitError(("remote",), done.code, done.err)
        return done.text.split()

    def config_get(self, key: str) -> str | None:
        """What ``git config --get key`` says (its last value), or None."""
        values = self.config().get(_canonical(key))
        return values[-1].strip() or None if values and values[-1] is not None else None

    def config(self) -> dict[str, list[str | None]]:
        """Every variable of the config git reads here (every scope, includes followed) with
        its values in order (None: a name with no ``=``), from one ``config --list``: a
        cycle asked for six variables, a git each."""
        done = self.asked("config", "-z", "--list")
        found: dict[str, list[str | None]] = {}
        if done.code != 0:
            return found
        for item in done.out.split(b"\0"):
            if item:
                name, newline, value = item.decode("utf-8", "replace").partition("\n")
                found.setdefault(name, []).append(value if newline else None)
        return found

    def ls_tree(
        self, rev: str, prefix: str, paths: Sequence[str] = ()
    ) -> dict[str, tuple[str, str]]:
        """path -> (mode, blob sha) of every file under ``prefix`` ('' = all) in ``rev``, or
        of those of ``paths`` (repository-relative, taken literally) that it holds."""
        args = ["ls-tree", "-r", "-z", "--full-tree", rev]
        if paths or prefix:
            args += ["--", *(paths or [prefix])]
        literal = {"GIT_LITERAL_PATHSPECS": "1"} if paths else None
        found: dict[str, tuple[str, str]] = {}
        for record in self.run(*args, readonly=True, env=literal).out.split(b"\0"):
            if not record:
                continue
            meta, _, path = record.partition(b"\t")
            mode, _kind, sha = meta.decode().split()
            found[path.decode("utf-8", "surrogateescape")] = (mode, sha)
        return found

    def blob(self, sha: str) -> bytes:
        return self.run("cat-file", "blob", sha, readonly=True).out

    def blobs(self, shas: Sequence[str]) -> dict[str, bytes]:
        """Many blobs through one ``cat-file --batch`` (a git per blob: 100k processes, 181 s
        of CPU in the first push of 100k memories)."""
        raw = self.run(
            "cat-file", "--batch", input="".join(f"{sha}\n" for sha in shas).encode(),
            readonly=True,
        ).out  # fmt: skip
        found: dict[str, bytes] = {}
        at = 0
        while at < len(raw):
            end = raw.index(b"\n", at)
            head = raw[at:end].split()
            if len(head) < 3:  # "<sha> missing"
                at = end + 1
                continue
            size = int(head[2])
            found[head[0].decode()] = raw[end + 1 : end + 1 + size]
            at = end + 1 + size + 1
        return found

    def hash_blob(self, data: bytes) -> str:
        return self.run("hash-object", "-w", "--stdin", input=data).text.strip()

    def changed_paths(self, a: str, b: str, prefix: str) -> list[str]:
        args = ["diff", "--name-only", "-z", "--no-renames", a, b]
        if prefix:
            args += ["--", prefix]
        return _split_z(self.run(*args, readonly=True).out)

    def renames(self, a: str, b: str, prefix: str) -> dict[str, str]:
        """old path -> new path for the renames git detects between two commits."""
        args = ["diff", "--name-status", "-z", "-M", "--diff-filter=R", a, b]
        if prefix:
            args += ["--", prefix]
        items = _split_z(self.run(*args, readonly=True).out)
        found: dict[str, str] = {}
        for i in range(0, len(items) - 2, 3):
            found[items[i + 1]] = items[i + 2]
        return found

    def deleted_in(self, a: str, b: str, path: str) -> str | None:
        """The newest commit of ``a..b`` that deleted (or renamed away) ``path``, if any."""
        done = self.run(
            "log", "-1", "--format=%H", "--diff-filter=D", f"{a}..{b}", "--", path,
            readonly=True, env={"GIT_LITERAL_PATHSPECS": "1"},
        )  # fmt: skip
        return done.text.strip() or None

    # -- building commits without touching the user's index
    def commit_tree(self, tree: str, parents: Iterable[str], message: str) -> str:
        args = ["commit-tree", tree]
        for parent in parents:
            args += ["-p", parent]
        return self.run(*args, input=message.encode("utf-8")).text.strip()

    def update_ref(
        self, ref: str, new: str, old: str | None, reason: str, *, dropping: str = ""
    ) -> None:
        """Compare-and-swap a ref: fails when it no longer points at ``old``. ``dropping``:
        a ref deleted in the same transaction (one git, and neither happens without the other)."""
        if not dropping:
            self.run("update-ref", "-m", reason, ref, new, old if old else ZERO)
            return
        said = f"update {ref} {new} {old if old else ZERO}\ndelete {dropping}\n"
        self.run("update-ref", "-m", reason, "--stdin", input=said.encode())


def _canonical(key: str) -> str:
    """A config variable's name as ``config --list`` gives it: its section and its name
    lower case, a subsection (``branch.<name>.merge``) as it is."""
    section, _, rest = key.partition(".")
    middle, dot, name = rest.rpartition(".")
    return f"{section.lower()}.{middle}{dot}{name.lower()}"


def _split_z(raw: bytes) -> list[str]:
    return [p.decode("utf-8", "surrogateescape") for p in raw.split(b"\0") if p]
