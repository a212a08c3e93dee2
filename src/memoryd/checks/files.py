"""Each memory file on its own: readable, well-formed, under the size cap, summarised."""

from __future__ import annotations

from collections.abc import Iterator

from memoryd.checks import Context, RootView, root_check
from memoryd.findings import Finding
from memoryd.memory import validate

ALL_LAYOUTS = ("plugin", "layered", "claude")


@root_check("files.unreadable", layouts=ALL_LAYOUTS)
def unreadable(ctx: Context, root: RootView) -> Iterator[Finding]:
    for item in root.files:
        if item.memory is None and not item.generated:
            yield Finding(
                item.path,
                f"cannot be read ({item.error})",
                f"make it readable (chmod u+r {item.path}) or move it out of the root",
            )


@root_check("files.malformed", layouts=ALL_LAYOUTS)
def malformed(ctx: Context, root: RootView) -> Iterator[Finding]:
    for item in root.memories.values():
        assert item.memory is not None
        for problem in validate(item.memory):
            yield Finding(item.path, problem.message, _fix(problem.code))


def _fix(code: str) -> str:
    if code.startswith("frontmatter."):
        return "fix the YAML between the '---' lines at the top of the file"
    if code == "encoding":
        return "save the file as UTF-8"
    name = code.partition(".")[2] or code
    return f"correct the '{name}:' field in the frontmatter"


@root_check("files.size", layouts=ALL_LAYOUTS)
def oversized(ctx: Context, root: RootView) -> Iterator[Finding]:
    cap = ctx.app.config.search.max_file_bytes
    for item in root.memories.values():
        if item.size > cap:
            yield Finding(
                item.path,
                f"is {item.size} bytes, over the {cap}-byte cap: only its frontmatter is searched",
                "split it into smaller memories, or raise search.max_file_bytes in config.yaml",
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
