"""Citations at the agent's edge: anchored when a memory is written, checked when it is used.

``remember --cite`` and ``memory_remember(cites=...)`` take ``PATH[:A-B]`` and
fill in the fingerprint from the working tree (a global memory's citations also
name the repository). ``recall`` and ``context`` ask :func:`verdicts` for each
memory they hand an agent; only the memories that carry ``cites:`` cost a read
of their cited files.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from memoryd.cites.check import Checker, stale_reasons
from memoryd.errors import UsageError

if TYPE_CHECKING:
    from memoryd.app import App
    from memoryd.cites.check import Project, Verdict
    from memoryd.cites.citation import Citation
    from memoryd.locate import Found
    from memoryd.memory import Memory

_NO_PROJECT = "--cite needs a git work tree: run it inside the project whose files it cites"


def anchor(app: App, specs: Sequence[str], scope: str) -> list[str]:
    """``cites:`` entries for ``PATH[:A-B]`` specs, fingerprinted from the working tree."""
    if not specs:
        return []
    from memoryd.cites.check import project_at

    project = project_at(app.cwd)
    if project is None:
        raise UsageError(_NO_PROJECT, hint="or leave --cite out")
    return [_anchor_one(project, spec, scope).text() for spec in specs]


def _anchor_one(project: Project, spec: str, scope: str) -> Citation:
    from memoryd.cites.citation import Citation, anchored, lines_of, parse

    citation = parse(spec)
    path = project.top / citation.path
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(
            f"cannot cite {citation.path}: {exc.strerror or 'not readable'} in {project.top}",
            hint="cite a file of this project by its path from the project's top folder",
        ) from exc
    repo = project.identity if scope == "global" else None
    return anchored(lines_of(data), Citation(citation.path, citation.start, citation.end,
                                             None, repo))  # fmt: skip


def reanchor(project: Project | None, verdicts: Sequence[Verdict], everything: bool) -> list[str]:
    """New ``cites:`` entries: the missing fingerprints filled in (``everything``: every
    citation anchored again where its text stands now, as ``cite --confirm`` does)."""
    from memoryd.cites.citation import Citation, anchored, lines_of

    if project is None:
        raise UsageError(_NO_PROJECT, hint="cd into the project, then run it again")
    out: list[str] = []
    for verdict in verdicts:
        citation = verdict.now or verdict.citation
        if everything or citation.hash is None:
            file = project.top / citation.path
            if not file.is_file():
                raise UsageError(
                    f"cannot anchor {citation.where}: the file does not exist in {project.top}",
                    hint="edit the memory's cites: to name the file's new path, or remove it",
                )
            keep = Citation(citation.path, citation.start, citation.end, None, citation.repo)
            citation = anchored(lines_of(file.read_bytes()), keep)
        out.append(citation.text())
    return out


def refresh_cites(app: App, raw_id: str, *, confirm: bool, scope: str | None = None) -> Found:
    """``memoryd cite --fix|--confirm ID``: write the memory's re-anchored ``cites:``.

    ``--fix`` fills in what is missing (a fingerprint a person left out); ``--confirm``
    anchors every citation again where its text stands now, after a person has checked
    that the memory is still true. Only the ``cites:`` lines of the file change.
    """
    from memoryd import locate
    from memoryd.agent import upkeep
    from memoryd.fsutil import atomic_write

    found = locate.find(locate.active_roots(app.config, app.cwd), raw_id, scope)
    checker = Checker(app.cwd)
    verdicts = checker.verdicts(found.memory.meta)
    if not verdicts:
        raise UsageError(
            f"{found.id} cites nothing",
            hint=f"add cites: [PATH:FIRST-LAST] to {found.path}, then run memoryd cite --fix "
            f"{found.id}",
        )
    if any(v.state == "elsewhere" for v in verdicts):
        raise UsageError(
            f"{found.id} cites files of another project",
            hint="run it inside the project its citations name",
        )
    new = reanchor(checker.project, verdicts, everything=confirm)
    if new != found.memory.meta.get("cites"):
        atomic_write(found.path, _with_cites(found.memory, new))
        upkeep.refresh(app, found.root, [found.path])
    return found


def _with_cites(memory: Memory, cites: list[str]) -> bytes:
    """The file with only its ``cites:`` lines changed (a person's other lines kept)."""
    from memoryd.frontmatter_edit import edit_fields

    return edit_fields(memory, {"cites": cites})


__all__ = ["Checker", "anchor", "reanchor", "refresh_cites", "stale_reasons"]
