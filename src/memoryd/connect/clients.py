"""The clients ``memoryd connect`` knows, and connecting, undoing and checking one.

One module per client (``claude_code``, ``opencode``, ``codex``, ``gemini``, ``cursor``),
each a pure function from the files it reads to the :class:`~memoryd.connect.target.Change`
it would make, from the templates shipped in ``memoryd/integrations`` with the absolute
path of the running memoryd in place of a bare ``memoryd`` (a hook never depends on PATH).
Edits keep every setting of the user's, its order and comments
(:mod:`memoryd.connect.jsonc`, tomlkit for TOML); :mod:`memoryd.connect.ledger` writes them
after a backup and undoes them. A config that does not parse is refused with its line, and
nothing is written.
"""

from __future__ import annotations

import difflib
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from memoryd.connect import CLIENTS, claude_code, codex, cursor, gemini, opencode
from memoryd.connect.ledger import Done, Ledger
from memoryd.connect.target import Change, Health, Target
from memoryd.errors import ConfigError

MODULES: dict[str, ModuleType] = {
    m.NAME: m for m in (claude_code, opencode, codex, gemini, cursor)
}
assert tuple(MODULES) == CLIENTS


@dataclass(frozen=True)
class Outcome:
    client: str
    title: str
    after: str  # what the user does next (restart the client)
    changes: list[Change]
    done: list[Done]  # empty on a dry run


def running_memoryd() -> Path:
    """The console script of this Python environment: the memoryd that is running now.

    Not ``shutil.which``: a hook must run this install whatever PATH a client has (a
    symbolic link on PATH, ``~/.local/bin/memoryd``, may go; the environment's own stays).
    """
    script = Path(sys.executable).parent / "memoryd"
    if script.is_file():
        return script.absolute()
    raise ConfigError(
        f"no memoryd console script beside {sys.executable}, so there is no absolute path "
        "to give the clients",
        hint="install memoryd with pipx (pipx install PATH-or-git-URL) or './dev run', "
        "then run memoryd connect from that install",
    )


def module(client: str) -> ModuleType:
    return MODULES[client]


def connect(
    clients: list[str], target: Target, state_dir: Path, *, dry_run: bool = False
) -> list[Outcome]:
    """Merge memoryd into each client's config. Every client's files are read and checked
    first: one that cannot be parsed stops them all before anything is written (and a dry
    run writes nothing at all)."""
    planned = [(name, module(name), module(name).changes(target)) for name in clients]
    outcomes = []
    for name, mod, changes in planned:
        done = [] if dry_run else Ledger(state_dir, name).apply(changes)
        outcomes.append(Outcome(name, mod.TITLE, mod.AFTER, changes, done))
    return outcomes


def undo(client: str, target: Target, state_dir: Path) -> list[Done]:
    mod = module(client)
    return Ledger(state_dir, client).undo(lambda path, text: mod.remove(target, path, text))


def connected(client: str, state_dir: Path) -> bool:
    """Did ``memoryd connect`` write this client's config (so --undo has something to do)?"""
    return bool(Ledger(state_dir, client).records())


def health(target: Target) -> list[Health]:
    return [MODULES[name].health(target) for name in CLIENTS]


def diff(change: Change) -> str:
    """A unified diff of one change, for --dry-run."""
    old = (change.old or b"").decode("utf-8", "replace").splitlines(keepends=True)
    new = change.new.decode("utf-8", "replace").splitlines(keepends=True)
    before = str(change.path) if change.old is not None else "/dev/null"
    lines = difflib.unified_diff(old, new, before, str(change.path))
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
