"""An export: a root's memories given back as memoryd's JSON Lines or Claude Code's folder.

``jsonl`` writes every memory as one record (:mod:`memoryd.transfer.records`), losing
nothing: imported into another root and exported again it gives the same lines.
``claude-code`` writes one topic file per current memory (``name``, ``description``
and ``metadata.type`` as Claude Code writes them; memoryd's kind, id, times, triggers
and source under ``metadata.memoryd_*`` so an import brings them back) and lists each in
``MEMORY.md``, the index Claude Code loads into every session, pinned memories and
rules first (Claude Code reads its first 200 lines). A ``MEMORY.md`` that exists keeps
its lines: links to the new topic files are appended. A topic file of the same name
that memoryd did not write is never overwritten: the export is refused before any write.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memoryd import locate
from memoryd.app import App
from memoryd.config.sections import RootConfig
from memoryd.errors import PathError, Refused, UsageError
from memoryd.fsutil import write_if_changed
from memoryd.memory import Memory, new_memory, parse, render
from memoryd.transfer import FORMATS, kinds
from memoryd.transfer.records import line_of, record_of

JSONL_FILE = "memories.jsonl"
CLAUDE_INDEX = "MEMORY.md"
INDEX_HEADER = "# Memory index\n\n"
_ORDER = {"rule": 0, "rule-proposal": 1, "preference": 2, "decision": 3, "pitfall": 4}


@dataclass
class Exported:
    """What an export wrote (or, ``text``, what it gives to print when there is no file)."""

    format: str
    root: Path
    count: int
    out: Path | None = None
    written: list[str] = field(default_factory=list)
    text: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "format": self.format, "root": str(self.root), "count": self.count,
            "out": str(self.out) if self.out else None, "written": self.written,
        }  # fmt: skip


def export(app: App, fmt: str, root: str | None = None, out: Path | None = None) -> Exported:
    """Export the memories of ``root`` (global, project or a root's path; default: the
    root remember writes to) as ``fmt`` into ``out``."""
    if fmt not in FORMATS:
        from memoryd.suggest import did_you_mean

        raise UsageError(
            f"unknown export format {fmt!r}{did_you_mean(fmt, FORMATS)}",
            hint=f"use one of: {', '.join(FORMATS)}",
        )
    chosen = choose_root(app, root)
    memories = sorted(
        ((memory.id or locate.path_id(chosen, path), memory)
         for path, memory in locate.all_memories(chosen)),
        key=lambda pair: pair[0],
    )  # fmt: skip
    if fmt == "jsonl":
        return _jsonl(chosen, memories, out)
    from memoryd.transfer.sources import claude_code

    folder = out if out is not None else claude_code.default_path(app.env, app.cwd)
    assert folder is not None
    return _claude(chosen, memories, folder)


def choose_root(app: App, root: str | None) -> RootConfig:
    """The root ``--root`` names: ``global``, ``project`` or the path of a configured root."""
    roots = locate.active_roots(app.config, app.cwd)
    if root is None or root in ("global", "project"):
        return locate.target_root(roots, root)
    wanted = (app.cwd / root).resolve()
    for candidate in app.config.roots:
        if candidate.path.resolve() == wanted:
            return candidate
    raise PathError(
        f"{root} is not a memory root memoryd knows",
        hint="use --root global, --root project, or a root that 'memoryd status' lists",
    )


def _jsonl(root: RootConfig, memories: list[tuple[str, Memory]], out: Path | None) -> Exported:
    text = "".join(line_of(record_of(memory, ident)) + "\n" for ident, memory in memories)
    done = Exported("jsonl", root.path, len(memories))
    if out is None:
        done.text = text
        return done
    target = out if out.suffix == ".jsonl" else out / JSONL_FILE
    target.parent.mkdir(parents=True, exist_ok=True)
    write_if_changed(target, text.encode("utf-8"))
    done.out, done.written = target, [str(target)]
    return done


def _claude(root: RootConfig, memories: list[tuple[str, Memory]], folder: Path) -> Exported:
    current = [(i, m) for i, m in memories if not m.superseded_by and m.summary]
    current.sort(key=lambda p: (p[1].meta.get("pinned") is not True,
                                _ORDER.get(p[1].kind or "", 9), p[0]))  # fmt: skip
    files = {f"{ident.replace('/', '_')}.md": (ident, memory) for ident, memory in current}
    foreign = [name for name, (ident, _) in files.items() if _foreign(folder / name, ident)]
    if foreign:
        raise Refused(
            f"refusing to export: {folder} has topic files of the same names that memoryd "
            f"did not write: {', '.join(sorted(foreign))}",
            hint="export into another folder with --out DIR, or move those files away first",
        )
    folder.mkdir(parents=True, exist_ok=True)
    done = Exported("claude-code", root.path, len(files), folder)
    for name, (ident, memory) in files.items():
        if write_if_changed(folder / name, _topic(ident, memory)):
            done.written.append(name)
    index = folder / CLAUDE_INDEX
    old = index.read_text(encoding="utf-8") if index.exists() else INDEX_HEADER
    linked = set(re.findall(r"\]\(([^)\s]+\.md)\)", old))
    lines = [_index_line(name, memory) for name, (_, memory) in files.items() if name not in linked]
    if lines:
        text = old if old.endswith("\n") else old + "\n"
        write_if_changed(index, (text + "".join(lines)).encode("utf-8"))
        done.written.append(CLAUDE_INDEX)
    return done


def _topic(ident: str, memory: Memory) -> bytes:
    """A Claude Code topic file for one memory (memoryd's own fields under ``metadata``)."""
    meta = memory.meta
    kind = memory.kind or "fact"
    ours: dict[str, Any] = {"type": kinds.claude_type_of(kind), "memoryd_id": ident,
                            "memoryd_kind": kind}  # fmt: skip
    for name in ("created", "updated", "load_when", "pinned", "source"):
        if meta.get(name) not in (None, [], False):
            ours[f"memoryd_{name}"] = meta[name]
    front = {"name": ident.rsplit("/", 1)[-1], "description": memory.summary, "metadata": ours}
    return render(new_memory(front, memory.body))


def _foreign(path: Path, ident: str) -> bool:
    """Is ``path`` a file that memoryd's export of ``ident`` did not write?"""
    if not path.exists():
        return False
    try:
        nested = parse(path.read_bytes()).meta.get("metadata")
    except OSError:
        return True
    return not (isinstance(nested, dict) and nested.get("memoryd_id") == ident)


def _index_line(name: str, memory: Memory) -> str:
    return f"- [{memory.summary}]({name}) — {memory.kind or 'memory'}\n"
