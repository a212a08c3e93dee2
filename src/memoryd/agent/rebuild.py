"""Rebuild injection: what a rebuilt context gets back from the layered tree, within budgets.

When a harness rebuilds its context (MiMo Code's rebuild, Claude Code's
compaction), the conversation is gone; what the model knew durably is in the
layered tree. MiMo Code's ``renderRebuildContext`` reads four files into four
headed sections, in this order and each within its own token budget, then
appends an index of the memory keys the model can still read:

=============================  ==============================  ======
``# Session checkpoint``       ``sessions/<sid>/checkpoint.md``  11000
``# Project durable knowledge``  ``projects/<pid>/MEMORY.md``     10000
``# Session notes``            ``sessions/<sid>/notes.md``        6000
``# Global memory``            ``global/MEMORY.md``               6000
``# Memory index``             keys of this session, project, global  500
=============================  ==============================  ======

Budgets are ``rebuild.*`` in config.yaml, tokens are estimated as
:mod:`memoryd.agent.budget` says, and a section over its budget is cut at a line
boundary with a marker naming the file that has the rest. A missing file leaves
its section out (the JSON form says which were missing). :func:`render` only
reads files: the index and the daemon are not involved.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memoryd.agent import budget
from memoryd.config.sections import RebuildConfig
from memoryd.errors import UsageError
from memoryd.layouts import layered_parts
from memoryd.roots import walk_files

if TYPE_CHECKING:
    from memoryd.app import App

CUT = "[… cut to the {budget}-token budget: read {path} for the rest]"
INDEX_CUT = "[… more keys cut: the rest are files under {root}]"
INDEX_NOTE = "Memory files of this session, this project and global, under {root}:"


@dataclass(frozen=True)
class Section:
    name: str  # checkpoint | project | notes | global | index
    title: str
    path: str | None  # tree-relative file (None: the key index, or no project id)
    budget: int
    text: str  # what is injected under the title ("" when absent)
    tokens: int  # estimated tokens of text
    cut: bool
    present: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "title": self.title, "path": self.path, "budget": self.budget,
            "tokens": self.tokens, "cut": self.cut, "present": self.present,
        }  # fmt: skip


@dataclass(frozen=True)
class Rebuild:
    root: Path
    session: str
    project_id: str | None
    sections: tuple[Section, ...]
    text: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "root": str(self.root), "session": self.session, "project_id": self.project_id,
            "sections": [s.as_dict() for s in self.sections], "text": self.text,
            "tokens": budget.estimate(self.text),
        }  # fmt: skip


def check_id(value: str, what: str, flag: str) -> str:
    """A session or project id usable as one folder name of the tree."""
    from memoryd.layouts.visible import valid_project_id

    if not valid_project_id(value):
        raise UsageError(
            f"{what} {value!r} cannot name a folder of the layered tree",
            hint=f"pass {flag} with letters, digits, '.', '_' or '-' only",
        )
    return value


def files(
    session: str, project_id: str | None, limits: RebuildConfig
) -> list[tuple[str, str, str | None, int]]:
    """(name, title, tree-relative path, budget) of the four file sections, in order."""
    project = f"projects/{project_id}/MEMORY.md" if project_id else None
    return [
        ("checkpoint", "# Session checkpoint", f"sessions/{session}/checkpoint.md",
         limits.checkpoint_tokens),
        ("project", "# Project durable knowledge", project, limits.project_tokens),
        ("notes", "# Session notes", f"sessions/{session}/notes.md", limits.notes_tokens),
        ("global", "# Global memory", "global/MEMORY.md", limits.global_tokens),
    ]  # fmt: skip


def render(root: Path, session: str, project_id: str | None, limits: RebuildConfig) -> Rebuild:
    """The rebuild text for ``session`` (and ``project_id``) from the tree at ``root``."""
    sections: list[Section] = []
    for name, title, rel, limit in files(session, project_id, limits):
        sections.append(_file_section(root, name, title, rel, limit))
    sections.append(_index_section(root, session, project_id, limits.index_tokens))
    parts = [f"{s.title}\n\n{s.text}" for s in sections if s.present and s.text]
    return Rebuild(root, session, project_id, tuple(sections), "\n\n".join(parts))


def _file_section(root: Path, name: str, title: str, rel: str | None, limit: int) -> Section:
    raw = _read(root / rel) if rel else None
    if raw is None:
        return Section(name, title, rel, limit, "", 0, False, False)
    text, was_cut = budget.cut(raw, limit, CUT.format(budget=limit, path=root / (rel or "")))
    return Section(name, title, rel, limit, text, budget.estimate(text), was_cut, True)


def _read(path: Path) -> str | None:
    try:
        if not path.is_file():
            return None
        return path.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return None


def keys(root: Path, session: str, project_id: str | None) -> list[str]:
    """Tree-relative memory files of the session, the project and global, in that order."""
    folders = [f"sessions/{session}", *([f"projects/{project_id}"] if project_id else []), "global"]
    found: list[str] = []
    for folder in folders:
        base = root / folder
        if not base.is_dir():
            continue
        for path in walk_files(base):
            rel = Path(path).relative_to(root).as_posix()
            if layered_parts(rel) is not None:
                found.append(rel)
    return found


def _index_section(root: Path, session: str, project_id: str | None, limit: int) -> Section:
    listed = keys(root, session, project_id)
    if not listed:
        return Section("index", "# Memory index", None, limit, "", 0, False, False)
    lines = [INDEX_NOTE.format(root=root), *(f"- {key}" for key in listed)]
    text, was_cut = budget.cut("\n".join(lines), limit, INDEX_CUT.format(root=root))
    tokens = budget.estimate(text)
    return Section("index", "# Memory index", None, limit, text, tokens, was_cut, True)


def gather(app: App, session: str, project_id: str | None = None) -> Rebuild:
    """:func:`render` for the registered layered tree; the project id defaults to MiMo Code's.

    Without ``project_id`` the project is the one of ``app.cwd`` (``global`` outside git;
    a repository MiMo Code never opened has no id, and its section stays out).
    """
    from memoryd.layouts import configured_root
    from memoryd.layouts.visible import project_id_for

    sid = check_id(session, "session id", "--session")
    pid = check_id(project_id, "project id", "--project-id") if project_id else None
    root = configured_root(app.config, app.env)
    return render(root, sid, pid or project_id_for(app.cwd), app.config.rebuild)
