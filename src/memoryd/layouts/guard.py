"""The write gate of the layered memory tree, as a pure function.

A harness calls it before a write/edit tool touches a file (``memoryd guard PATH``
from a hook). Two checks run in order, as in MiMo Code:

1. the system-agent sandbox: ``checkpoint-writer`` may write only inside the memory
   tree; ``dream`` and ``distill`` only inside it or ``<worktree>/.mimocode/``; every
   other agent passes this check;
2. the memory rules, for paths inside the tree only: ``disable_write`` refuses every
   write; the path must be ``<scope>/<scope_id>/<key>.md``; ``checkpoint-writer``
   is held to an exact whitelist; nobody else may touch ``sessions/<sid>/tasks/``
   except a subagent bound to task ``<TID>``, inside its own ``tasks/<TID>/``.

Paths are normalised (``..`` folded) before any comparison, so
``<worktree>/.mimocode/../src/x.ts`` is judged as ``<worktree>/src/x.ts``. Nothing
here touches the filesystem; the command resolves symlinks before calling in.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from memoryd.layouts import LAYERED_SCOPES

CHECKPOINT_WRITER = "checkpoint-writer"
SANDBOXED_AGENTS = frozenset({"dream", "distill"})
TASK_ID_RE = re.compile(r"^T\d+(\.\d+)*$")


@dataclass(frozen=True)
class WriteRequest:
    """One intended write. ``target`` may be relative (to ``cwd``)."""

    target: str
    memory_root: str
    cwd: str = "/"
    agent: str = ""
    task: str = ""
    worktree: str = ""  # default: cwd
    write_enabled: bool = True
    project_id: str = "<pid>"
    session_id: str = "<sid>"


@dataclass(frozen=True)
class Decision:
    allowed: bool
    rule: str  # which rule decided: "outside", "sandbox", "disabled", "shape", ...
    message: str = ""


ALLOWED_OUTSIDE = Decision(True, "outside")


def normalize(path: str, cwd: str) -> str:
    """An absolute, ``..``-folded spelling of ``path`` (no filesystem access)."""
    return os.path.normpath(os.path.join(cwd, path))


def contains(root: str, path: str) -> bool:
    """``path`` is ``root`` or below it (``/a/memory`` does not hold ``/a/memory-x``)."""
    return path == root or path.startswith(root.rstrip("/") + "/")


def check_write(req: WriteRequest) -> Decision:
    """Whether ``req`` may write; the message says why not and where to write instead."""
    target = normalize(req.target, req.cwd)
    root = normalize(req.memory_root, req.cwd)
    worktree = normalize(req.worktree or req.cwd, req.cwd)
    refused = _sandbox(req, target, root, worktree)
    if refused is not None:
        return refused
    if not contains(root, target):
        return ALLOWED_OUTSIDE
    rel = PurePosixPath(target).relative_to(root).as_posix()
    return _memory_rules(req, rel, root, target)


def _sandbox(req: WriteRequest, target: str, root: str, worktree: str) -> Decision | None:
    if req.agent == CHECKPOINT_WRITER and not contains(root, target):
        return Decision(
            False,
            "sandbox",
            f"agent '{req.agent}' may write only inside the memory tree {root}; "
            f"{target} is outside it. Write project memory, checkpoints and notes there.",
        )
    dot_dir = os.path.join(worktree, ".mimocode")
    if req.agent in SANDBOXED_AGENTS and not (contains(root, target) or contains(dot_dir, target)):
        return Decision(
            False,
            "sandbox",
            f"agent '{req.agent}' may write only inside the memory tree {root} "
            f"or {dot_dir}; {target} is outside both.",
        )
    return None


def _memory_rules(req: WriteRequest, rel: str, root: str, target: str) -> Decision:
    if not req.write_enabled:
        return Decision(False, "disabled", disabled_message(target))
    parts = rel.split("/")
    if not _shape_ok(parts):
        return Decision(False, "shape", _shape_message(req, root, target))
    if req.agent == CHECKPOINT_WRITER:
        if checkpoint_writer_may_write(parts):
            return Decision(True, "checkpoint-writer")
        return Decision(False, "checkpoint-writer", _writer_message(req, root, rel))
    if _in_tasks(parts):
        if _own_task(parts, req.task):
            return Decision(True, "own-task")
        return Decision(False, "tasks", _tasks_message(req, root, rel))
    return Decision(True, "memory")


def _shape_ok(parts: list[str]) -> bool:
    """``<scope>/<scope_id>/<key>.md`` (or ``global/<key>.md``) with a known scope."""
    if parts[0] not in LAYERED_SCOPES or not parts[-1].endswith(".md"):
        return False
    return len(parts) >= 3 or (len(parts) == 2 and parts[0] == "global")


def checkpoint_writer_may_write(parts: list[str]) -> bool:
    """The checkpoint writer's exact whitelist, on the tree-relative path's parts."""
    name = parts[-1]
    if parts[0] == "projects" and len(parts) == 3:
        lowered = name.lower()
        return lowered == "memory.md" or lowered.startswith("memory-")
    if parts[0] != "sessions":
        return False
    if len(parts) == 3:
        return name in ("checkpoint.md", "notes.md") or name.startswith("checkpoint-")
    return len(parts) == 5 and parts[2] == "tasks" and bool(TASK_ID_RE.match(parts[3]))


def _in_tasks(parts: list[str]) -> bool:
    return parts[0] == "sessions" and len(parts) >= 4 and parts[2] == "tasks"


def _own_task(parts: list[str], task: str) -> bool:
    return bool(task) and bool(TASK_ID_RE.match(task)) and parts[3] == task and len(parts) >= 5


def _canonical(req: WriteRequest, root: str) -> tuple[str, str]:
    memory_file = f"{root}/projects/{req.project_id}/MEMORY.md"
    notes_file = f"{root}/sessions/{req.session_id}/notes.md"
    return memory_file, notes_file


def disabled_message(target: str) -> str:
    return (
        f"memory writing is turned off (disable_write), so {target} was not written. "
        "This is a setting, not a wrong path: do not retry under another memory path. "
        "Existing memory is still searchable (memoryd recall, or the memory tool)."
    )


def _shape_message(req: WriteRequest, root: str, target: str) -> str:
    memory_file, notes_file = _canonical(req, root)
    return (
        f"{target} is not a memory path. Memory files live at "
        f"{root}/<scope>/<scope_id>/<key>.md with scope global, projects or sessions.\n"
        f"Write here instead:\n"
        f"  {memory_file}\n"
        f"    project memory: edit its ## Rules, ## Architecture decisions or "
        f"## Discovered durable knowledge section\n"
        f"  {notes_file}\n"
        f"    session scratchpad: append entries headed ## [turn N · YYYY-MM-DDTHH:MM:SSZ]"
    )


def _writer_message(req: WriteRequest, root: str, rel: str) -> str:
    memory_file, _notes = _canonical(req, root)
    session = f"{root}/sessions/{req.session_id}"
    return (
        f"{rel} is not on the checkpoint-writer's list. It may write only:\n"
        f"  {memory_file} (or a memory-<topic>.md overflow file beside it)\n"
        f"  {session}/checkpoint.md (or checkpoint-<topic>.md), {session}/notes.md\n"
        f"  {session}/tasks/<TID>/<name>.md, where <TID> looks like T3 or T3.1.2"
    )


def _tasks_message(req: WriteRequest, root: str, rel: str) -> str:
    memory_file, notes_file = _canonical(req, root)
    bound = f" (you are bound to task {req.task})" if req.task else ""
    return (
        f"{rel} is under a session's tasks/ folder, which belongs to the checkpoint-writer "
        f"and to the subagent bound to that task{bound}. A subagent bound to task <TID> "
        f"writes only inside tasks/<TID>/. Write instead to:\n"
        f"  {memory_file}\n"
        f"  {notes_file}"
    )
