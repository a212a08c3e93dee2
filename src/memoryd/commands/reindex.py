"""``memoryd reindex [--full]``: reconcile the search index with the files now, and
recompile ROOT.md's blocks and the index.md files that are stale.

After a reindex people expect every derived file to be fresh, as after a ``recall``
(which recompiles where memories changed): an index brought up to date under a ROOT.md
that still listed last week's rules was half a repair. The compile writes only what
differs, so a second run changes nothing."""

from __future__ import annotations

import argparse
import contextlib
import gc
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from memoryd.app import App
from memoryd.commands import add_json

if TYPE_CHECKING:
    from memoryd.compile.listing import ScanCache
    from memoryd.config.sections import RootConfig
    from memoryd.findings import Finding
    from memoryd.index.reconcile import ReconcileReport


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser("reindex", help="bring the search index up to date with the files")
    parser.add_argument(
        "--full", action="store_true", help="throw the index away and rebuild it from the files"
    )
    add_json(parser)
    parser.set_defaults(handler=run)


def run(app: App, args: argparse.Namespace) -> int:
    with _rare_collections():  # from the imports on: they make no garbage either
        from memoryd.compile.writer import kept_cache, seeder
        from memoryd.freshness import search_roots
        from memoryd.index import open_index, reconcile
        from memoryd.locate import refuse_missing

        roots = list(app.config.roots)
        roots += [r for r in search_roots(app.config, app.cwd) if r not in roots]
        # its rows kept and exit 0 read as "indexed": the root's files are not there
        refuse_missing(app, roots, "nothing was reindexed")
        cache = kept_cache(app.paths.cache_dir, packed=True)  # no object per memory kept
        with open_index(app.paths, discard=args.full) as db:
            # --full: emptied first, then checked; what it parses, the compile takes
            report = reconcile(db, app.config, roots, parsed=seeder(cache))
            _give_back()
            compiled, problems = _recompile(app, db, roots, report, cache)
            total = db.count()
    # The JSON lists every path, sorted (a tenth of a second at 100k): only --json asks for it.
    data = (
        {
            **report.to_json(), "full": args.full, "memories": total, "compiled": compiled,
            "compile_problems": [p.as_dict() for p in problems],
        }
        if args.json
        else None
    )

    def text() -> str:
        lines = [
            f"indexed {total} memories in {report.seconds:.2f}s: {report.count('added')} added, "
            f"{report.count('changed')} changed, {report.count('removed')} removed"
        ]
        lines += [f"  unknown: {path} ({reason})" for path, reason in report.unknown]
        lines += [f"  oversized, frontmatter only: {path}" for path in report.oversized]
        lines += [f"  recompiled: {path}" for path in compiled]
        # a damaged ROOT.md or an unreadable memory: left stale, which must not pass unsaid
        lines += ["  not recompiled: " + p.text().replace("\n", "\n  ") for p in problems]
        return "\n".join(lines)

    app.emit(args.json, data, text)
    return 0


def _recompile(
    app: App, db: Any, roots: list[RootConfig], report: ReconcileReport, cache: ScanCache
) -> tuple[list[str], list[Finding]]:
    """Compile every root (only stale files are written), index what that wrote or
    removed into ``report`` (a path counted once: a ROOT.md added, then recompiled, is
    added), and return those paths and the compile's problems (a file it left stale)."""
    from memoryd.compile.writer import compile_root
    from memoryd.index import reconcile

    touched: list[str] = []
    problems: list[Finding] = []
    for root in roots:
        done = compile_root(root, app.config, cache=cache)
        problems += done.problems
        if not done.touched:
            continue
        touched += map(str, done.touched)
        again = reconcile(db, app.config, [root], only=done.touched)
        seen = {name for names in report.names.values() for name in names}
        for kind, names in again.names.items():
            report.names[kind] += [name for name in names if name not in seen]
    return sorted(touched), problems


def _give_back() -> None:
    """Hand the C library's free pages back to the system between the index pass and the
    compile. The pass's write batches (tens of MB of rows and tokens) and SQLite's bulk
    page cache are freed by then, but glibc keeps their pages for reuse, and the compile
    then grows on top of them: a cold reindex of 300k held 83 MB nothing used."""
    from memoryd.daemon.trim import glibc_trim

    trim = glibc_trim()
    if trim is not None:
        trim()


# Objects made between two collections of the youngest generation while the index is built.
REINDEX_GC_THRESHOLD = 100_000


@contextlib.contextmanager
def _rare_collections() -> Iterator[None]:
    """The cyclic garbage collector runs far less often while this command works.

    A cold index makes millions of objects that die young and no cycles, but Python
    collects every 700 new containers and each collection walks the batch waiting to be
    written (the rows, their tokens): 1.5-2% of a cold index of 10k. It still collects
    (every 100,000), so a file whose parse leaves cycles behind cannot grow the process
    without bound; the command's process is this command's alone (the daemon indexes
    with the default).
    """
    before = gc.get_threshold()
    gc.set_threshold(REINDEX_GC_THRESHOLD, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
