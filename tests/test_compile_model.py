"""The daemon's compile after a batch writes the bytes a full compile writes.

compile_root(changed=...) applies only the batch to the root's kept model (see
memoryd.compile.model); a full compile with a fresh cache, in check mode, must then find
nothing stale and report the same problems, after every step of random edit sequences:
memories written, rewritten, deleted, moved between folders, unreadable (a FIFO named
like a memory), binary, superseding each other (by ids that come and go), local-only,
held back by sync, hand-written index.md and ROOT.md text.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from unittest.mock import patch

from hypothesis import given, seed, settings
from hypothesis import strategies as st

from memoryd.compile import packed
from memoryd.compile.listing import ScanCache
from memoryd.compile.writer import compile_root
from memoryd.config.sections import Config, RootConfig

CONFIG = Config()
FOLDERS = ("", "a", "a/b", "c")
NAMES = ("x.md", "y.md", "z.md")
IDS = ("i1", "i2", "a/x", "x", "c/y")

memories = st.fixed_dictionaries({
    "kind": st.sampled_from(["rule", "fact"]),
    "summary": st.sampled_from(["one", "two", "Use pnpm"]),
    "load_when": st.lists(st.sampled_from(["t1", "t2", "部署"]), max_size=2),
    "id": st.none() | st.sampled_from(IDS),
    "superseded_by": st.none() | st.sampled_from(IDS),
    "sync": st.booleans(),
    "proposed": st.booleans(),  # a team proposal (memoryd.team): listed nowhere
})  # fmt: skip
places = st.tuples(st.sampled_from(FOLDERS), st.sampled_from(NAMES))
steps = st.one_of(
    st.tuples(st.just("write"), places, memories),
    st.tuples(st.just("delete"), places),
    st.tuples(st.just("fifo"), places),
    st.tuples(st.just("binary"), places),
    st.tuples(st.just("own index"), st.sampled_from(FOLDERS)),
    st.tuples(st.just("drop folder"), st.sampled_from(FOLDERS[1:])),
    st.tuples(st.just("move folder"), st.sampled_from(FOLDERS[1:]), st.sampled_from(FOLDERS[1:])),
    st.tuples(st.just("root text"), st.sampled_from(["", "# Mine\n\nmy own line\n"])),
    st.tuples(st.just("hold"), places, st.none() | memories),
)


def text_of(memory: dict[str, object]) -> str:
    lines = [f"kind: {memory['kind']}", f"summary: {memory['summary']}"]
    triggers: list[str] = memory["load_when"]  # type: ignore[assignment]
    lines.append(f"load_when: [{', '.join(triggers)}]")
    lines += [f"{k}: {memory[k]}" for k in ("id", "superseded_by") if memory[k] is not None]
    lines += [] if memory["sync"] else ["sync: false"]
    lines += ["status: proposed"] if memory.get("proposed") else []
    return "---\n" + "\n".join(lines) + "\n---\nbody\n"


def apply(root: Path, step: tuple[object, ...], held: dict[str, object]) -> list[Path]:
    """Make ``step`` on disk; the paths a watcher would report."""
    what = step[0]
    if what == "root text":
        (root / "ROOT.md").write_text(str(step[1]), encoding="utf-8")
        return [root / "ROOT.md"]
    if what in ("own index", "drop folder", "move folder"):
        folder = root / str(step[1])
        if what == "own index":
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "index.md").write_text("# my own index\n", encoding="utf-8")
            return [folder / "index.md"]
        if what == "drop folder":
            shutil.rmtree(folder, ignore_errors=True)
            return [folder]
        target = root / str(step[2])
        if not folder.is_dir() or target.exists() or target.is_relative_to(folder):
            return []
        target.parent.mkdir(parents=True, exist_ok=True)
        folder.rename(target)
        return [folder, target]
    place = step[1]
    assert isinstance(place, tuple)
    path = root / place[0] / place[1]
    if what == "hold":  # sync's record of a held-back file: its committed text, or none
        memory = step[2]
        paths = held.setdefault("paths", [])
        rel = path.relative_to(root).as_posix()
        paths.append(rel)  # type: ignore[attr-defined]
        if memory is not None:
            held.setdefault("committed", {})[rel] = text_of(memory)  # type: ignore[index, arg-type]
        record = {str(root): held}
        (root / ".git" / "memoryd-held.json").write_text(json.dumps(record), encoding="utf-8")
        return []
    if path.is_dir():
        return []
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        path.unlink()
    if what == "write":
        path.write_text(text_of(step[2]), encoding="utf-8")  # type: ignore[arg-type]
    elif what == "fifo":
        os.mkfifo(path)
    elif what == "binary":
        path.write_bytes(b"\x00\x01binary")
    return [path]


def problems(report: object) -> list[tuple[str, str]]:
    return [(str(p.path), p.message) for p in report.problems]  # type: ignore[attr-defined]


@seed(3939)
@settings(max_examples=60)
@given(
    st.lists(st.tuples(steps, st.booleans()), min_size=1, max_size=14),
    st.sampled_from(["plain", "slim", "packed"]),
)
def test_a_compile_after_each_batch_writes_what_a_full_compile_writes(
    batches: list[tuple[tuple[object, ...], bool]], kind: str
) -> None:
    with tempfile.TemporaryDirectory() as tmp, patch.object(packed, "BUCKET", 1):
        # buckets of one item on average: a folder of three memories has its buckets doubled
        root = Path(tmp, "root")
        (root / ".git").mkdir(parents=True)  # a repository, so sync's held-back record is read
        rc = RootConfig(root)
        daemon = ScanCache(slim=kind != "plain", packed=kind == "packed")  # packed: the daemon's
        compile_root(rc, CONFIG, cache=daemon)
        held: dict[str, object] = {}
        for step, whole in batches:  # whole: the daemon's periodic compile of the whole root
            changed = apply(root, step, held)
            after = compile_root(rc, CONFIG, None if whole else changed, cache=daemon)
            full = compile_root(rc, CONFIG, check=True, cache=ScanCache())
            assert full.stale == [], (step, [p.name for p in full.stale])
            assert set(problems(after)) <= set(problems(full)), step  # index.md: its folder only


def test_an_edit_swaps_its_line_only_into_the_index_md_the_compile_last_wrote(
    tmp_path: Path,
) -> None:
    """One edit swaps its line into index.md's bytes on disk, unless those were changed
    since (a hand edit the watcher missed): then the folder is rendered whole again."""
    root = tmp_path / "root"
    (root / "a").mkdir(parents=True)
    memory: dict[str, object] = {
        "kind": "fact", "summary": "one", "load_when": [], "id": None, "superseded_by": None,
        "sync": True,
    }
    for name in ("x.md", "y.md"):
        (root / "a" / name).write_text(text_of(memory), encoding="utf-8")
    rc, daemon, index = RootConfig(root), ScanCache(), root / "a" / "index.md"
    compile_root(rc, CONFIG, cache=daemon)
    for summary, hand in (("two", False), ("Use pnpm", True), ("one", False)):
        if hand:  # still memoryd's (its note kept), and nobody told the compile
            index.write_bytes(index.read_bytes() + b"- a line added by hand\n")
        (root / "a" / "x.md").write_text(text_of({**memory, "summary": summary}), "utf-8")
        compile_root(rc, CONFIG, [root / "a" / "x.md"], cache=daemon)
        assert compile_root(rc, CONFIG, check=True, cache=ScanCache()).stale == []
        assert f"`a/x`: {summary}\n" in index.read_text(encoding="utf-8")
