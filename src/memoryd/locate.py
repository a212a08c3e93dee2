"""Which roots a caller sees, and finding one memory by id in them.

A caller (a command run in some folder, an MCP server started in a project)
sees the global root plus the project root of its folder, never another
project's. An id names a file inside a root: ``pitfalls/foo`` is
``<root>/pitfalls/foo.md`` (plugin layout); a file whose frontmatter ``id``
says otherwise is found by that id too.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from memoryd import safepath
from memoryd.app import App
from memoryd.config.sections import PROJECT_SYNC, Config, RootConfig
from memoryd.errors import ConfigError, MemorydError, Refused, UsageError
from memoryd.memory import Memory, id_for_path, parse
from memoryd.roots import project_root_for, relative_id, walk_root

SCOPES = ("global", "team", "project")
RANK = {"project": 0, "team": 1}  # the order recall and the writers look at roots; global last
PLUGIN = "plugin"


@dataclass(frozen=True)
class Found:
    """A memory located by its id: its root, file and parsed content."""

    root: RootConfig
    path: Path
    id: str
    memory: Memory


def active_roots(config: Config, cwd: Path) -> list[RootConfig]:
    """The roots recall sees from ``cwd`` (global, team and this project's): the project
    first, then the team roots."""
    from memoryd.freshness import search_roots

    return sorted(search_roots(config, cwd), key=lambda root: RANK.get(root.scope, 2))


def missing_root(app: App, scope: str, path: object, doing: str) -> ConfigError:
    """The error for a configured root that is not on disk: nothing recreates it but
    ``memoryd init`` (a bare folder made by a write would never sync, and the real root
    moved back would nest inside it)."""
    where = app.config.source or app.paths.config_file
    init = "memoryd init --project" if scope == "project" else "memoryd init"
    return ConfigError(
        f"the {scope} root {path} does not exist, so {doing}",
        hint=f"mount or move it back, create it with '{init}', or correct or remove its "
        f"path in {where}",
    )


def refuse_missing(app: App, roots: Iterable[RootConfig], doing: str) -> None:
    """:func:`missing_root` for the first of ``roots`` that is not on disk: an answer
    without a root it should have read would pass for complete."""
    for root in roots:
        if not root.path.is_dir():
            raise missing_root(app, root.scope, root.path, doing)


def writable(roots: list[RootConfig]) -> list[RootConfig]:
    """The roots the agent tools write to: plugin layout (the other layouts have their own)."""
    return [root for root in roots if root.layout == PLUGIN]


def write_target(
    app: App, scope: str | None, *, create: bool = True
) -> tuple[RootConfig, list[RootConfig]]:
    """Where a new memory of ``app.cwd`` goes, and the roots it is checked against.

    Inside a git repository the default scope is the project: when its root does not
    exist yet it is created (and registered) as ``memoryd init --project`` would,
    rather than a project fact landing in the global root every project sees.
    ``create=False`` (a plan, a dry run) makes nothing: the root it would create is
    named, not on disk, and not registered.
    """
    if scope in (None, "project") and app.lost is not None:  # not a project fact in global
        raise Refused(
            f"refusing to remember: {app.lost.cause}, so memoryd cannot tell which "
            "project's memory it belongs in",
            hint="remember it from the project's folder, or pass --scope global (MCP: scope "
            "'global') when it holds for every project",
        )
    roots = active_roots(app.config, app.cwd)
    if scope in (None, "project") and not any(r.scope == "project" for r in writable(roots)):
        own = project_root_for(app.cwd, [r.path for r in app.config.roots if r.scope == "global"])
        if own is not None and not create:
            planned = RootConfig(path=own, layout=PLUGIN, scope="project", sync=PROJECT_SYNC)
            return planned, [*roots, planned]
        if own is not None:
            from memoryd.init.plugin import init_project  # only on a project's first write

            init_project(app, app.cwd)
            roots = active_roots(app.config, app.cwd)
        elif scope == "project":
            raise MemorydError(
                f"{app.cwd} is not inside a git repository, so it has no project memory",
                hint="run it from inside the project's repository, or use --scope global",
            )
    target = target_root(roots, scope)
    if not target.path.is_dir():
        raise missing_root(app, target.scope, target.path, "nothing was written")
    return target, roots


def target_root(roots: list[RootConfig], scope: str | None) -> RootConfig:
    """Where a new memory goes: the chosen scope, else the project root when there is one."""
    if scope is not None and scope not in SCOPES:
        raise UsageError(
            f"unknown scope {scope!r}", hint="use --scope global, --scope project or --scope team"
        )
    for root in writable(roots):  # a team root only when asked for: nothing personal leaks
        if root.scope == scope or (scope is None and root.scope != "team"):
            return root
    if scope == "team":
        raise MemorydError(
            "no team memory root is configured",
            hint="run 'memoryd init --team NAME --remote URL' first, or use --scope project",
        )
    if scope == "project":
        raise MemorydError(
            "this folder has no project memory root",
            hint="run 'memoryd init --project' here first, or use --scope global",
        )
    raise MemorydError("no global memory root is configured", hint="run 'memoryd init'")


def normal_id(raw: str) -> str:
    """An id as the user may type it: a trailing ``.md`` and leading ``./`` are dropped."""
    text = raw.strip()
    while text.startswith("./"):
        text = text[2:]
    return text[:-3] if text.endswith(".md") else text


def find(roots: list[RootConfig], raw_id: str, scope: str | None = None) -> Found:
    """The one memory with this id in ``roots`` (restricted to ``scope`` when given)."""
    memory_id = normal_id(raw_id)
    chosen = [r for r in writable(roots) if scope is None or r.scope == scope]
    hits = [hit for root in chosen if (hit := find_in(root, memory_id)) is not None]
    if not hits:
        where = ", ".join(str(r.path) for r in chosen) or "no root"
        raise Refused(
            f"no memory with id {memory_id!r} in {where}",
            hint="memoryd inspect lists every memory with its id",
        )
    if len(hits) > 1:
        raise Refused(
            f"{memory_id!r} exists in both the project and the global root",
            hint="pass --scope project or --scope global to choose one",
        )
    return hits[0]


def find_in(root: RootConfig, memory_id: str) -> Found | None:
    """The memory at ``<root>/<id>.md``, else one whose frontmatter id is ``memory_id``."""
    from memoryd.compile.blocks import is_generated  # the compiler: kept off the hooks' reads

    path = safepath.inside(root.path, memory_id, ".md")
    if is_generated(relative_id(root.path, path)):
        raise Refused(
            f"{memory_id!r} is a file memoryd compiles, not a memory",
            hint="edit ROOT.md's human sections by hand; index.md is rebuilt from the memories",
        )
    if path.is_file():
        return Found(root, path, memory_id, parse(path.read_bytes()))
    for other in walk_root(root.path):
        if is_generated(relative_id(root.path, other)):
            continue
        memory = parse(other.read_bytes())
        if memory.id == memory_id:
            return Found(root, other, memory_id, memory)
    return None


def path_id(root: RootConfig, path: Path) -> str:
    return id_for_path(relative_id(root.path, path))


def all_memories(root: RootConfig) -> list[tuple[Path, Memory]]:
    """Every memory file of ``root`` parsed (for link upkeep; not the search path)."""
    from memoryd.compile.blocks import is_generated

    out: list[tuple[Path, Memory]] = []
    for path in walk_root(root.path):
        if is_generated(relative_id(root.path, path)):
            continue
        try:
            out.append((path, parse(path.read_bytes())))
        except OSError:
            continue
    return out
