"""Who git commits as: on a machine where git knows no one, no root can commit.

git refuses to commit without a name and an email (user.name and user.email, the
``GIT_AUTHOR_*``/``GIT_COMMITTER_*`` variables or ``$EMAIL``, else a guess from
the host that fails on most fresh machines). Its refusal is ten lines ending in
``fatal: ...``, and retrying never helps: the user must tell git once. So a sync
that meets it gives one line and the commands that fix it, and ``memoryd init``
says so before the first sync fails.
"""

from __future__ import annotations

from pathlib import Path

from memoryd.sync.git import Git

IDENTITY_HINT = (
    'tell git who commits on this machine: git config --global user.name "Your Name" '
    '&& git config --global user.email "you@example.com"'
)
# What ``git var`` prints for a commit's two identities (it fails as a commit would).
IDENT_ROLES = ("GIT_AUTHOR_IDENT", "GIT_COMMITTER_IDENT")
# What git prints when it has no identity to commit with (LC_ALL=C: see gitcli.repo_env).
_SIGNS = ("Please tell me who you are", "identity unknown", "empty ident name")


def is_identity_error(stderr: str) -> bool:
    """Whether git failed because it does not know who commits."""
    return any(sign in stderr for sign in _SIGNS)


def identity_error(stderr: str) -> str:
    """The one line to show for git's refusal: its ``fatal:`` reason, without the rest."""
    fatal = [line for line in stderr.splitlines() if line.startswith("fatal: ")]
    reason = fatal[-1].removeprefix("fatal: ").strip() if fatal else "no user.name or user.email"
    return f"git does not know who commits on this machine: {reason}"


def missing_identity(workdir: Path) -> str | None:
    """:func:`identity_error` when git could not commit in ``workdir`` for want of an
    identity, else None. ``git var`` asks git itself, strictly, as a commit would (its
    guess from the host counts when git would accept it)."""
    for role in IDENT_ROLES:
        done = Git(workdir).run("var", role, check=False, readonly=True)
        if done.code != 0 and is_identity_error(done.err):
            return identity_error(done.err)
    return None
