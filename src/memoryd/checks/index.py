"""The search index against the disk: a row for every file, no row for a file that is gone."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

from memoryd.checks import Context, RootView, root_check
from memoryd.config.sections import utf8_path
from memoryd.findings import Finding
from memoryd.memory import BINARY
from memoryd.runlock import running_pid

FIX = "run 'memoryd reindex' (and if a daemon runs, check 'memoryd status' for why it fell behind)"


@root_check("index.rows", layouts=("plugin", "layered", "claude"))
def rows_match_disk(ctx: Context, root: RootView) -> Iterator[Finding]:
    # Unreadable files are the files checks' business: the index keeps the row of one it
    # read before (that file is there, not gone) and has none for one it never could.
    there = {f.path for f in root.files}
    disk = {f.path for f in root.files if f.memory is not None or f.generated or f.error == BINARY}
    # a team proposal is indexed on its writer's device alone (memoryd.team): never missing
    disk -= {f.path for f in root.files if f.shows is not None and f.shows.proposed}
    extra, missing = _compare(ctx, root, there, disk)
    if (extra or missing) and running_pid(ctx.app.paths.lock_file) is not None:
        time.sleep(ctx.app.config.daemon.max_wait_ms / 1000 + 0.5)  # a batch may be in flight
        there = {p for p in there if p.exists()}
        extra, missing = _compare(ctx, root, there, disk & there)
    for path in sorted(extra):
        yield Finding(path, "the search index still has a row for this file, which is gone", FIX)
    for path in sorted(missing):
        if not utf8_path(path):
            yield Finding(
                path,
                "has a file name that is not valid UTF-8, so the search index cannot hold it "
                "and recall never finds it (sync still carries it)",
                "rename it to a UTF-8 name, e.g. mv it from a shell whose locale is UTF-8",
            )
        else:
            yield Finding(path, "is missing from the search index, so recall cannot find it", FIX)


def _compare(
    ctx: Context, root: RootView, there: set[Path], indexable: set[Path]
) -> tuple[set[Path], set[Path]]:
    """The rows of files not ``there``, and the ``indexable`` files without a row."""
    rows = {row.path for row in ctx.index().rows(root.path)}
    return rows - there, indexable - rows
