"""Each memory file on its own: readable, well-formed, under the size cap, summarised."""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterator
from pathlib import Path

from memoryd import layouts
from memoryd.checks import Context, RootView, root_check
from memoryd.findings import Finding
from memoryd.index.layout import expected_id, is_copy
from memoryd.memory import (
    BINARY,
    DUPLICATE,
    SPELLING,
    UTF16,
    escape_controls,
    shown_name,
)
from memoryd.oversize import FIX, over
from memoryd.rootfs import inside
from memoryd.roots import walk_files
from memoryd.validation import read_as, validate

ALL_LAYOUTS = ("plugin", "layered", "claude")


@root_check("files.unreadable", layouts=ALL_LAYOUTS)
def unreadable(ctx: Context, root: RootView) -> Iterator[Finding]:
    for item in root.files:
        if item.error == BINARY:
            yield Finding(
                item.path,
                "is a binary file, not Markdown: it is not listed in index.md or ROOT.md",
                "move it out of the memory root, or rename it so that it does not end in .md",
            )
        elif item.memory is None and not item.generated:
            yield Finding(
                item.path,
                f"cannot be read ({item.error})",
                f"make it readable (chmod u+r {item.path}) or move it out of the root",
            )


@root_check("files.name", layouts=ALL_LAYOUTS)
def control_in_name(ctx: Context, root: RootView) -> Iterator[Finding]:
    for item in root.files:
        if not item.rel.isprintable() and escape_controls(item.rel) != item.rel:
            yield Finding(
                item.path,
                f"has a control character in its name ({shown_name(item.rel)}): compiled "
                "files and commit messages show it escaped, and its id is hard to type",
                "rename the file without it",
            )


@root_check("files.malformed", layouts=ALL_LAYOUTS)
def malformed(ctx: Context, root: RootView) -> Iterator[Finding]:
    for item in root.memories.values():
        assert item.memory is not None
        if is_copy(item.rel):  # one problem: the conflict (sync.conflicts), not its bytes
            continue
        own = expected_id(root.config, item.rel)
        for problem in validate(item.memory, expected_id=own):
            if problem.message == UTF16:
                name = shlex.quote(os.path.basename(item.path))
                fix = f"save it as UTF-8: iconv -f UTF-16 -t UTF-8 {name} > {name}.new, then "
                yield Finding(item.path, problem.message, f"{fix}mv {name}.new {name}")
            else:
                yield Finding(item.path, problem.message, _fix(problem.code, own))


def _fix(code: str, own: str | None = None) -> str:
    if code == "field.id":
        return f"set 'id: {own}' (the id is the file's path), or remove the 'id:' line"
    if code.startswith("frontmatter."):
        return "fix the YAML between the '---' lines at the top of the file"
    if code == "encoding":
        return "save the file as UTF-8"
    if code.startswith(f"{DUPLICATE}."):
        key = code.partition(".")[2]
        return f"keep one '{key}:' line in the frontmatter (delete the others)"
    if code.startswith(f"{SPELLING}."):
        key = code.partition(".")[2]
        return f"rename '{key}:' to '{read_as(key)}:'"
    name = code.partition(".")[2] or code
    return f"correct the '{name}:' field in the frontmatter"


@root_check("files.size", layouts=ALL_LAYOUTS)
def oversized(ctx: Context, root: RootView) -> Iterator[Finding]:
    cap = ctx.app.config.search.max_file_bytes
    for item in root.memories.values():
        if item.size > cap:
            yield Finding(
                item.path,
                f"is {over(item.size, cap)}: only its frontmatter is searched",
                FIX,
            )


@root_check("files.summary")
def no_summary(ctx: Context, root: RootView) -> Iterator[Finding]:
    for item in root.memories.values():
        assert item.memory is not None
        if not (item.memory.summary or "").strip() and not item.memory.malformed:
            yield Finding(
                item.path,
                "has no summary, so index.md and recall show '(no summary)'",
                "add a one-line 'summary:' to its frontmatter",
            )


@root_check("files.outside", layouts=ALL_LAYOUTS)
def links_out_of_root(ctx: Context, root: RootView) -> Iterator[Finding]:
    skipped: list[str] = []
    walk_files(root.path, skipped)
    real_root = os.path.realpath(root.path)
    for where in sorted(skipped):
        path = Path(where)
        if not layouts.belongs(root.config.layout, path.relative_to(root.path).as_posix()):
            continue
        if path.is_symlink() and not path.exists():  # dangling, or a loop (ELOOP)
            yield Finding(
                path,
                f"is a link to {os.readlink(path)}, which leads to no file (the target is "
                "gone, or the link loops), so it is skipped",
                "delete the link, or point it at a memory file inside the root",
            )
        elif path.is_symlink() and not inside(str(path), real_root):
            yield Finding(
                path,
                f"is a link to {os.readlink(path)}, outside the root, so it is skipped: "
                "memoryd reads, indexes and syncs only files inside a root",
                "move the file into the root (a link may point the other way), or delete the link",
            )
        else:  # a FIFO, a socket, a device, or a link in the root to one
            yield Finding(
                path,
                "is not a regular file (a FIFO, a socket or a device), so it is skipped: "
                "memoryd reads only regular files",
                "move it out of the memory root, or rename it so that it does not end in .md",
            )
