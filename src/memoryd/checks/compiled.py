"""Compiled files: ROOT.md and every index.md must equal a fresh compile."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from memoryd.checks import Context, RootView, root_check
from memoryd.compile import markers
from memoryd.compile.blocks import compile_files, folder_of, is_generated, listed_names
from memoryd.compile.listing import Scanned
from memoryd.compile.model import shows
from memoryd.compile.writer import compile_root
from memoryd.findings import Finding
from memoryd.memory import Memory
from memoryd.roots import ROOT_FILE

FIX = "run 'memoryd compile' (the daemon does it on its own when it runs)"


@root_check("compiled.stale")
def stale_compiled_files(ctx: Context, root: RootView) -> Iterator[Finding]:
    report = compile_root(root.config, ctx.app.config, check=True, cache=ctx.cache)
    for path in report.stale:
        if path.name == ROOT_FILE and path.parent == root.path:
            yield Finding(path, _root_md_message(ctx, root, path), FIX)
        else:
            yield Finding(path, _index_message(root, path), FIX)
    for problem in report.problems:  # unreadable memories are the files checks' business
        if is_generated(problem.path.relative_to(root.path).as_posix()):
            yield problem


def _index_message(root: RootView, path: Path) -> str:
    if not path.exists():
        return "index.md is missing"
    folder = folder_of(path.relative_to(root.path).as_posix())
    names = {Path(rel).name for rel in _shown(root) if folder_of(rel) == folder}
    if not names:
        return "index.md is left over: its folder holds no memory (compiling deletes it)"
    listed = set(listed_names(path.read_text(encoding="utf-8", errors="replace")))
    parts = []
    if names - listed:
        parts.append("does not list " + ", ".join(sorted(names - listed)))
    if listed - names:
        parts.append("lists files that are gone: " + ", ".join(sorted(listed - names)))
    return "index.md is stale: " + ("; ".join(parts) or "summaries or ids changed")


def _root_md_message(ctx: Context, root: RootView, path: Path) -> str:
    if not path.exists():
        return "ROOT.md is missing"
    memories = {rel: s.memory or Memory() for rel, s in _shown(root).items()}
    descriptions = ctx.app.config.compile.folder_descriptions
    fresh = compile_files(memories, None, descriptions, folders=()).root_md or b""
    want = markers.extract(fresh.decode("utf-8"))
    have = markers.extract(path.read_text(encoding="utf-8", errors="replace"))
    names = [name for name in want if want[name] != have.get(name, "").replace("\r\n", "\n")]
    return "ROOT.md's compiled blocks are stale: " + ", ".join(names or ["layout"])


def _shown(root: RootView) -> dict[str, Scanned]:
    return {rel: s for rel, s in root.memories.items() if shows(root.config.sync.commit, s)}
