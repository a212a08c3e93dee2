"""Which project and session of the other agents' trees a caller is working in.

A Claude Code memory root (``~/.claude/projects``) holds a folder per project,
named by the project's path with every character other than a letter or digit
turned into ``-`` (``/home/me/app`` is ``-home-me-app``); a layered root holds
``projects/<id>/`` per MiMo Code project and ``sessions/<id>/`` per session.
Registered as global roots, they would put every project's memories into this
project's prompt. :func:`visible_for` names the caller's own: the slugs of the
current folder and of its git work tree, MiMo Code's project id, and the session
id the agent passes in its environment (or a hook event), if any.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CLAUDE_SLUG_MAX = 200  # Claude Code cuts a longer folder name and appends a hash
PROJECT_ID_FILE = "mimocode-project-id"  # in the main git dir, written by MiMo Code
GLOBAL_PROJECT = "global"
_SAFE_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
# where the clients put the current session's id for the commands they run
SESSION_ENV = ("MEMORYD_SESSION_ID", "CLAUDE_CODE_SESSION_ID", "OPENCODE_SESSION_ID")


@dataclass(frozen=True)
class Visible:
    """The rows of the other layouts a caller sees unless it names a ``scope_id``.

    A Claude Code memory root holds every project's folders and a layered root every
    project's and session's files; a caller sees only its own project's (Claude Code's
    folders by slug, the layered tree's ``projects/<id>/``), its own session's
    (``sessions/<id>/``, when the session is known) and the truly global ones
    (``global/``). memoryd's own memories are not filtered.
    """

    claude_slugs: tuple[str, ...] = ()
    layered_project: str | None = None
    layered_session: str | None = None

    def sql(self) -> tuple[str, list[Any]]:
        """A condition on ``memories`` (layout, id, scope_id) and its parameters."""
        params: list[Any] = list(self.claude_slugs)
        claude = f"scope_id IN ({', '.join('?' for _ in self.claude_slugs)})"
        layered = ["id GLOB 'global/*'"]
        for prefix, value in (("projects", self.layered_project),
                              ("sessions", self.layered_session)):  # fmt: skip
            if value:
                layered.append(f"(id GLOB '{prefix}/*' AND scope_id = ?)")
                params.append(value)
        condition = (
            f"(layout NOT IN ('claude', 'layered')"
            f" OR (layout = 'claude' AND {claude if self.claude_slugs else '0'})"
            f" OR (layout = 'layered' AND ({' OR '.join(layered)})))"
        )
        return condition, params


def claude_slug(path: Path) -> str:
    """Claude Code's project folder name for ``path``, as Claude Code makes it.

    Claude Code (``J$`` in 2.1) replaces every UTF-16 unit that is not an ASCII letter or
    digit with ``-`` (a character outside the BMP is two), and a name longer than
    :data:`CLAUDE_SLUG_MAX` is cut there and ends in ``-`` and the base-36 hash of the path
    (:func:`_claude_hash`): a project deeper than that otherwise had no folder memoryd
    would look in, so none of its Claude Code memories were ever recalled or injected.
    """
    text = str(path)
    slug = "".join(
        c if c.isascii() and c.isalnum() else "-" * (2 if ord(c) > 0xFFFF else 1) for c in text
    )
    if len(slug) <= CLAUDE_SLUG_MAX:
        return slug
    return f"{slug[:CLAUDE_SLUG_MAX]}-{_base36(abs(_claude_hash(text)))}"


def _claude_hash(text: str) -> int:
    """Claude Code's string hash: ``h = h * 31 + unit`` over the UTF-16 units, in int32."""
    units = text.encode("utf-16-le", "surrogatepass")
    value = 0
    for i in range(0, len(units), 2):
        value = (value * 31 + int.from_bytes(units[i : i + 2], "little")) & 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def _base36(number: int) -> str:
    """``number.toString(36)`` of JavaScript, for a number that is not negative."""
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        number, rest = divmod(number, 36)
        out = digits[rest] + out
        if number == 0:
            return out


def session_from(env: Mapping[str, str]) -> str | None:
    for name in SESSION_ENV:
        value = env.get(name, "").strip()
        if value:
            return value
    return None


def project_id_for(start: Path) -> str | None:
    """MiMo Code's project id for ``start``: ``global`` outside git, else the id file's."""
    from memoryd.roots import git_toplevel, main_git_dir

    top = git_toplevel(start)
    if top is None:
        return GLOBAL_PROJECT
    try:
        text = (main_git_dir(top) / PROJECT_ID_FILE).read_text(encoding="utf-8").strip()
    except (FileNotFoundError, NotADirectoryError):
        return None
    return text if valid_project_id(text) else None


def valid_project_id(text: str) -> bool:
    return bool(_SAFE_ID_RE.match(text)) and ".." not in text


def visible_for(cwd: Path, env: Mapping[str, str]) -> Visible:
    """What ``cwd`` sees: Claude Code's folders of the folder itself, of its work tree and
    of the project's main work tree (Claude Code keeps a linked worktree's memories in the
    main checkout's folder, so a session in ``../wt/feature`` saw none of them), MiMo
    Code's project id and the session of ``env``."""
    from memoryd.roots import canonical_toplevel, git_toplevel

    places = [cwd, cwd.resolve()]
    for top in (git_toplevel(cwd), canonical_toplevel(cwd)):
        if top is not None:
            places += [top, top.resolve()]
    slugs = tuple(dict.fromkeys(claude_slug(p) for p in places))
    return Visible(slugs, project_id_for(cwd), session_from(env))
