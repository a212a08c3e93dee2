"""Ids and the links between memories: unique ids, supersedes / superseded_by pairs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from memoryd.checks import Context, RootView, root_check
from memoryd.findings import Finding
from memoryd.memory import Memory


@root_check("ids.duplicate")
def duplicate_ids(ctx: Context, root: RootView) -> Iterator[Finding]:
    for ident, items in sorted(root.by_id.items()):
        first, *others = sorted(items, key=lambda s: s.rel)
        for item in others:
            yield Finding(
                item.path,
                f"id {ident!r} is also the id of {first.rel}",
                "give one of them another id (its 'id:' field, or its file name when it has none)",
            )


@root_check("links.supersedes")
def supersede_links(ctx: Context, root: RootView) -> Iterator[Finding]:
    for item in root.memories.values():
        memory = item.memory or Memory()
        own = root.id_of(item)
        for old in memory.supersedes:
            yield from _forward(root, item.path, own, old)
        if memory.superseded_by:
            yield from _backward(root, item.path, own, memory.superseded_by)


def _target(root: RootView, ident: str) -> Memory | None:
    found = root.by_id.get(ident)
    return (found[0].memory or Memory()) if found else None


def _forward(root: RootView, path: Path, own: str, old: str) -> Iterator[Finding]:
    target = _target(root, old)
    if target is None:
        yield Finding(
            path,
            f"supersedes {old!r}, which no memory in this root has",
            "correct the id in 'supersedes:' or remove it",
        )
    elif target.superseded_by != own:
        has = f"says {target.superseded_by!r}" if target.superseded_by else "is absent"
        yield Finding(
            root.by_id[old][0].path,
            f"{own!r} supersedes this memory, but its 'superseded_by:' {has}",
            f"set 'superseded_by: {own}' in its frontmatter",
        )


def _backward(root: RootView, path: Path, own: str, new: str) -> Iterator[Finding]:
    target = _target(root, new)
    if target is None:
        yield Finding(
            path,
            f"superseded_by {new!r}, which no memory in this root has",
            "correct the id in 'superseded_by:' or remove it",
        )
    elif own not in target.supersedes:
        yield Finding(
            root.by_id[new][0].path,
            f"{own!r} says this memory supersedes it, but its 'supersedes:' does not list {own!r}",
            f"add {own} to 'supersedes:' in its frontmatter",
        )
