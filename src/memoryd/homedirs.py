"""memoryd's config, cache and state folders from an environment, on plain strings.

The lean ``memoryd recall`` (:mod:`memoryd.lean_recall`) and the recall socket's client
(:mod:`memoryd.recall_client`) must find these folders before anything heavy is imported,
and the daemon must find them from a *client's* environment: so no platformdirs, no
pathlib, and ``~`` expanded from the given environment's ``HOME``, never the process's.
Only a shortcut: what is found there (a snapshot, a socket) must itself say it is for
these folders, so a case where platformdirs would decide otherwise is a miss, never a
wrong folder.
"""

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

APP = "memoryd"  # the folder name under each XDG base directory
HOME_ENV = "MEMORYD_HOME"  # one folder for all of memoryd's own files


def under_home(base: str) -> tuple[str, str, str, str, str]:
    """(config, cache, state, log, default global root) folders under ``$MEMORYD_HOME``."""
    join = os.path.join
    return base, join(base, "cache"), join(base, "state"), join(base, "logs"), join(base, "memory")


# No ``from __future__ import annotations`` here or in the other modules the recall
# socket's client loads (importing __future__ costs it 2%): annotations of names only
# imported for type checking are strings.


def clean(path: str) -> str:
    """``path`` as ``pathlib`` spells it: no empty or ``.`` parts, no trailing slash."""
    parts = [part for part in path.split(os.sep) if part and part != "."]
    lead = os.sep if path.startswith(os.sep) else ""
    return lead + os.sep.join(parts) or "."


def expand_user(path: str, env: "Mapping[str, str]") -> str | None:
    """``os.path.expanduser`` with ``env``'s ``HOME``; None where that would ask the
    password database (no ``HOME``, or ``~user``)."""
    if not path.startswith("~"):
        return path
    end = path.find("/", 1)
    if end < 0:
        end = len(path)
    home = env.get("HOME")
    if end != 1 or home is None:
        return None
    return (home.rstrip("/") + path[end:]) or "/"


def folders(env: "Mapping[str, str]") -> tuple[str, str, str] | None:
    """(config, cache, state) folders as memoryd.paths finds them, or None when only
    the full path can tell (a relative ``MEMORYD_HOME``, a system other than Linux).

    ``MEMORYD_HOME`` as memoryd.paths reads it; else, on Linux, the XDG base directory
    rule platformdirs follows there (an absolute ``$XDG_*_HOME``, else the folder under
    ``~``), each spelt as ``str(Path)`` would.
    """
    home = env.get(HOME_ENV, "")
    if home:
        expanded = expand_user(home, env)
        if expanded is None:
            return None
        base = clean(expanded)
        if not os.path.isabs(base):
            return None  # the full path's error
        return under_home(base)[:3]
    if sys.platform != "linux":
        return None
    found = []
    for name, default in (
        ("XDG_CONFIG_HOME", "~/.config"), ("XDG_CACHE_HOME", "~/.cache"),
        ("XDG_STATE_HOME", "~/.local/state"),
    ):  # fmt: skip
        value = env.get(name, "")
        xdg = value if os.path.isabs(value) else expand_user(default, env)
        if xdg is None:
            return None
        found.append(clean(os.path.join(xdg, APP)))
    return found[0], found[1], found[2]
