"""``memoryd inspect``'s consistency self-check: a registry of small checks.

A check is anything with a ``name`` and a ``run(ctx)`` that yields :class:`Finding`
records (the file, what is wrong, the fix). Checks live in the modules of this package
and register themselves when imported; every module here is imported by
:func:`all_checks`, so a new check is a new decorated function (in a new file, or an
existing one)::

    from memoryd.checks import Context, RootView, root_check
    from memoryd.findings import Finding

    @root_check("conflicts.pending")                  # once per plugin-layout root
    def pending(ctx: Context, root: RootView) -> Iterator[Finding]:
        ...

    @check("daemon.health")                           # once for the whole home
    def health(ctx: Context) -> Iterator[Finding]:
        ...

``Context`` holds the app, every configured root already scanned (``RootView``: its
files with parsed frontmatter, memories by path and by id) and a shared scan cache, so
checks do not walk the disk again. Checks that need something expensive (the search
index) open it themselves, lazily.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from memoryd import layouts
from memoryd.app import App
from memoryd.compile.blocks import folder_of
from memoryd.compile.listing import ScanCache, Scanned, scan_root
from memoryd.config.sections import RootConfig
from memoryd.findings import Finding
from memoryd.memory import Memory

if TYPE_CHECKING:
    from memoryd.index import IndexDB


class Check(Protocol):
    @property
    def name(self) -> str: ...

    def run(self, ctx: Context) -> Iterable[Finding]: ...


@dataclass(frozen=True)
class RootView:
    """One configured root as scanned for this inspection."""

    config: RootConfig
    files: tuple[Scanned, ...]
    exists: bool = True

    @property
    def path(self) -> Path:
        return self.config.path

    @cached_property
    def memories(self) -> dict[str, Scanned]:
        """Readable memory files (generated ones left out) by root-relative path."""
        return {f.rel: f for f in self.files if not f.generated and f.memory is not None}

    @cached_property
    def by_id(self) -> dict[str, list[Scanned]]:
        ids: dict[str, list[Scanned]] = defaultdict(list)
        for item in self.memories.values():
            ids[self.id_of(item)].append(item)
        return dict(ids)

    def id_of(self, item: Scanned) -> str:
        """The id the index gives this file (its ``id:`` or its path, by layout)."""
        from memoryd.index.layout import identify

        return identify(self.config, item.rel, item.memory or Memory()).id

    def folders(self) -> set[str]:
        return {folder_of(rel) for rel in self.memories}


@dataclass
class Context:
    app: App
    roots: list[RootView]
    cache: ScanCache = field(default_factory=ScanCache)
    _index: IndexDB | None = None

    def index(self) -> IndexDB:
        """The search index, reconciled first unless a daemon keeps it fresh (opened once)."""
        if self._index is None:
            from memoryd.freshness import ensure_fresh

            self._index = ensure_fresh(self.app)
        return self._index

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
            self._index = None

    @classmethod
    def build(cls, app: App, cache: ScanCache | None = None) -> Context:
        cache = cache if cache is not None else ScanCache()
        views = []
        for root in app.config.roots:
            exists = root.path.is_dir()
            scanned = scan_root(root.path, cache) if exists else []
            files = tuple(f for f in scanned if layouts.belongs(root.layout, f.rel))
            views.append(RootView(root, files, exists))
        return cls(app, views, cache)


@dataclass(frozen=True)
class FunctionCheck:
    name: str
    fn: Callable[[Context], Iterable[Finding]]

    def run(self, ctx: Context) -> Iterable[Finding]:
        return self.fn(ctx)


_REGISTRY: dict[str, Check] = {}
RootFn = Callable[[Context, RootView], Iterable[Finding]]


def register(item: Check) -> Check:
    """Add a check (a later registration of the same name replaces the earlier one)."""
    _REGISTRY[item.name] = item
    return item


def check(name: str) -> Callable[[Callable[[Context], Iterable[Finding]]], Check]:
    """Register ``fn(ctx)`` as a check run once per inspection."""

    def decorate(fn: Callable[[Context], Iterable[Finding]]) -> Check:
        return register(FunctionCheck(name, fn))

    return decorate


def root_check(name: str, layouts: tuple[str, ...] = ("plugin",)) -> Callable[[RootFn], Check]:
    """Register ``fn(ctx, root)`` as a check run for every existing root of these layouts."""

    def decorate(fn: RootFn) -> Check:
        def each(ctx: Context) -> Iterable[Finding]:
            for root in ctx.roots:
                if root.exists and root.config.layout in layouts:
                    yield from fn(ctx, root)

        return register(FunctionCheck(name, each))

    return decorate


def all_checks() -> list[Check]:
    """Every registered check, the modules of this package imported first, by name."""
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")
    return [_REGISTRY[name] for name in sorted(_REGISTRY)]


def run_checks(ctx: Context, checks: Iterable[Check] | None = None) -> list[Finding]:
    """Run the checks; each finding carries the name of the check that found it."""
    findings: list[Finding] = []
    for item in all_checks() if checks is None else checks:
        findings.extend(f.by(item.name) for f in item.run(ctx))
    return findings
