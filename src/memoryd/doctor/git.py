"""The git side of ``memoryd doctor``: git itself, identity, remote, push auth.

The remote is probed with ``git ls-remote`` in its own session (no terminal to
prompt on) and killed with its children after a timeout. Push auth is judged
for the environment the *service* gets, not the shell's: the classic failure is
a push that works in a terminal and fails under systemd or launchd.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
from collections.abc import Mapping
from pathlib import Path

from memoryd import gitcli
from memoryd.config.sections import RootConfig
from memoryd.daemon import units
from memoryd.doctor.verdict import Machine, Verdict, fail, ok, warn
from memoryd.gitcli import Done
from memoryd.sync.identity import IDENT_ROLES
from memoryd.sync.repo import ownership_fix


def run_git(env: Mapping[str, str], repo: Path | None, *args: str, timeout: float = 30.0) -> Done:
    """git with the environment being diagnosed; an exit of -1 when it timed out."""
    where = ["-C", str(repo)] if repo else []  # -C: a missing folder is git's error, not ours
    try:
        return gitcli.run([*where, *args], cwd=None, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return Done(-1, b"", f"no answer in {timeout:g} s")


def check_git(ctx: Machine) -> Verdict:
    if shutil.which("git", path=ctx.env.get("PATH")) is None:
        fix = "install git (apt install git, dnf install git, brew install git) and retry"
        return fail("git", "git is not on PATH", fix)
    done = run_git(ctx.env, None, "--version")
    if done.code != 0:
        return fail("git", f"git --version failed: {done.first_error}", "reinstall git")
    return ok("git", done.text.strip())


def refusal(ctx: Machine, repo: Path) -> tuple[str, str] | None:
    """(git's line, the fix) when git will not work in ``repo`` at all; None when it will.

    A folder another user owns is "dubious ownership" to git, and every git command in it
    fails: the remote check said "no remote 'origin'" for a root whose remote was there.
    """
    try:
        done = run_git(ctx.env, repo, "rev-parse", "--git-dir")
    except FileNotFoundError:  # no git on PATH: the git check says so
        return None
    fix = ownership_fix(done.err) if done.code != 0 else None
    return None if fix is None else (done.first_error, fix)


def root_checks(ctx: Machine, root: RootConfig) -> list[Verdict]:
    checks = []
    if root.sync.commit or root.sync.pull:
        checks.append(check_identity(ctx, root))
    if root.sync.push or root.sync.pull:
        remote = check_remote(ctx, root)
        checks.append(remote)
        if root.sync.push and remote.status != "fail":
            checks.append(check_push_auth(ctx, root))
    return checks


def check_identity(ctx: Machine, root: RootConfig) -> Verdict:
    values = {key: run_git(ctx.env, root.path, "config", key).text.strip() for key in _IDENTITY}
    author = {key: _ident(ctx.env, "AUTHOR", key, values[key]) for key in _IDENTITY}
    committer = {key: _ident(ctx.env, "COMMITTER", key, values[key]) for key in _IDENTITY}
    missing = [key for key in _IDENTITY if not author[key] or not committer[key]]
    if missing:
        fix = " && ".join(f'git config --global {key} "{_IDENTITY[key]}"' for key in missing)
        guessed = _guessed_identity(ctx.env, root.path)
        if guessed is not None:  # git's guess from the system works: commits go out as it
            detail = f"{root.path}: {' and '.join(missing)} not set; git commits as {guessed}"
            return warn("identity", detail + " (its guess from the host)", fix, str(root.path))
        detail = f"{root.path}: {' and '.join(missing)} not set; git refuses to commit"
        return fail("identity", detail, fix, str(root.path))
    who = f"{author['user.name']} <{author['user.email']}>"
    return ok("identity", f"{root.path}: commits as {who}", str(root.path))


_IDENTITY = {"user.name": "Your Name", "user.email": "you@example.com"}


def _guessed_identity(env: Mapping[str, str], repo: Path) -> str | None:
    """``Name <email>`` when git itself would commit in ``repo`` without user.name and
    user.email (its guess from the host name and the user's account, or $EMAIL), strictly as
    a commit asks (``git var``); None when it would refuse."""
    idents = [run_git(env, repo, "var", role) for role in IDENT_ROLES]  # the service's env
    if any(done.code != 0 for done in idents):
        return None
    return idents[0].text.strip().rsplit(" ", 2)[0]  # without the time stamp and zone


def _ident(env: Mapping[str, str], role: str, key: str, configured: str) -> str:
    """The name or email git gives ``role`` (AUTHOR/COMMITTER): its GIT_* variable first,
    then the config, then (emails only) $EMAIL, in git's own order."""
    field = "NAME" if key == "user.name" else "EMAIL"
    value = env.get(f"GIT_{role}_{field}", "").strip() or configured
    if not value and field == "EMAIL":
        value = env.get("EMAIL", "").strip()
    return value


def check_remote(ctx: Machine, root: RootConfig) -> Verdict:
    path, remote, subject = root.path, root.sync.remote, str(root.path)
    url = run_git(ctx.env, path, "remote", "get-url", remote)
    if url.code != 0:
        fix = (
            f"git -C {path} remote add {remote} <url of your memory repository> (or, to keep "
            f"this root on this machine, give it 'sync: {{push: false, pull: false}}' in "
            f"{ctx.config.source or ctx.paths.config_file})"
        )
        return fail("remote", f"{path}: no remote '{remote}'", fix, subject)
    where = url.text.strip()
    probe = run_git(ctx.env, path, "ls-remote", "--heads", remote, timeout=ctx.remote_timeout_s)
    if probe.code != 0:
        detail = f"{path}: '{remote}' ({where}) is unreachable: {probe.first_error}"
        fix = (
            f"check the URL (git -C {path} remote -v), the network and your credentials; "
            f"git -C {path} ls-remote {remote} shows the whole error"
        )
        return fail("remote", detail, fix, subject)
    return ok("remote", f"{path}: '{remote}' ({where}) answers", subject)


def remote_kind(url: str) -> str:
    """ssh, https, local or other (git://...), by git's own URL rules."""
    if url.startswith(("ssh://", "git+ssh://", "ssh+git://")):
        return "ssh"
    if url.startswith(("https://", "http://")):
        return "https"
    if url.startswith("file://") or url.startswith(("/", ".", "~")):
        return "local"
    if "://" in url:
        return "other"
    return "ssh" if re.match(r"^[^/:]+:", url) else "local"


def check_push_auth(ctx: Machine, root: RootConfig) -> Verdict:
    remote, subject = root.sync.remote, str(root.path)
    url = run_git(ctx.env, root.path, "remote", "get-url", "--push", remote).text.strip()
    kind = remote_kind(url)
    if kind == "ssh":
        status, detail, fix = _ssh_auth(ctx, root)
    elif kind == "https":
        status, detail, fix = _https_auth(ctx, root, url)
    elif kind == "local":
        status, detail, fix = "ok", "a local remote needs no authentication", ""
    else:
        status, detail, fix = "warn", f"pushing over {url.split(':')[0]} is usually read-only", ""
    return Verdict(
        "push-auth", status, f"{root.path}: push to {url}: {detail}", fix=fix, subject=subject
    )


def _ssh_auth(ctx: Machine, root: RootConfig) -> tuple[str, str, str]:
    env = service_env(ctx)
    command = run_git(ctx.env, root.path, "config", "core.sshCommand").text.strip()
    command = command or env.get("GIT_SSH_COMMAND", "")
    if command:
        return "ok", f"the service uses ssh command {command!r}", ""
    sock = env.get("SSH_AUTH_SOCK", "")
    fix = (
        "give the service an SSH agent with a stable socket, or a key of its own "
        f"(git -C {root.path} config core.sshCommand 'ssh -i <key>'); see docs/service.md"
    )
    if not sock:
        return "fail", "the service gets no SSH agent (SSH_AUTH_SOCK) and no ssh command", fix
    if not _is_socket(sock):
        return "fail", f"the service's SSH_AUTH_SOCK {sock} is not a live socket", fix
    if units.volatile_agent(sock):
        return "warn", f"the service's SSH agent {sock} goes away when you log out", fix
    return "ok", f"the service uses the SSH agent at {sock}", ""


def _https_auth(ctx: Machine, root: RootConfig, url: str) -> tuple[str, str, str]:
    if re.match(r"^https?://[^/@]+:[^/@]+@", url):
        return "ok", "the URL carries credentials", ""
    helpers = run_git(ctx.env, root.path, "config", "--get-urlmatch", "credential.helper", url)
    helper = helpers.text.strip()
    fix = (
        "git config --global credential.helper store (or libsecret, osxkeychain, "
        "manager); see docs/service.md"
    )
    if not helper:
        return "fail", "no credential helper; a service cannot type a password", fix
    if helper.split()[0] == "cache":
        return "warn", "credential.helper cache forgets after its timeout", fix
    return "ok", f"credential helper {helper!r}", ""


def _is_socket(path: str) -> bool:
    try:
        return stat.S_ISSOCK(os.stat(path).st_mode)
    except OSError:
        return False


def service_env(ctx: Machine) -> dict[str, str]:
    """The environment the service has (or would have, once installed) for git."""
    from memoryd.daemon import manager as service_manager

    text = service_manager.read_unit(service_manager.unit_path(ctx.manager, ctx.env))
    if text is None or units.MARKER not in text:
        return units.service_environment(ctx.env, ctx.manager)
    env = units.unit_environment(ctx.manager, text)
    if "SSH_AUTH_SOCK" not in env:
        env.update(_manager_agent(ctx))
    return env


def _manager_agent(ctx: Machine) -> dict[str, str]:
    """SSH_AUTH_SOCK the manager itself hands its services, when it does."""
    sock = ctx.env.get("SSH_AUTH_SOCK", "")
    if ctx.manager == "launchd":
        return {"SSH_AUTH_SOCK": sock} if "com.apple.launchd" in sock else {}
    try:
        done = subprocess.run(
            ["systemctl", "--user", "show-environment"],
            env=dict(ctx.env),
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return {}
    for line in done.stdout.splitlines() if done.returncode == 0 else []:
        if line.startswith("SSH_AUTH_SOCK="):
            return {"SSH_AUTH_SOCK": line.partition("=")[2]}
    return {}
