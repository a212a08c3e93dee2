from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest

from memoryd.compile import listing as listing_module
from memoryd.compile.listing import ScanCache, scan_root


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def old(root: Path) -> None:
    past = 1_700_000_000
    for path in root.rglob("*"):
        os.utime(path, (past, past), follow_symlinks=False)


def listing(
    root: Path, cache: ScanCache, changed: list[Path] | None = None
) -> list[tuple[str, object]]:
    return [
        (s.rel, s.memory.meta if s.memory else s.error) for s in scan_root(root, cache, changed)
    ]


def _add(r: Path) -> list[Path]:
    return [write(r / "facts/new.md", "---\nsummary: new\n---\n")]


def _edit(r: Path) -> list[Path]:
    return [write(r / "facts/a.md", "---\nsummary: edited\n---\n")]


def _delete(r: Path) -> list[Path]:
    (r / "facts/a.md").unlink()
    return [r / "facts/a.md"]


def _remove_tree(r: Path) -> list[Path]:
    shutil.rmtree(r / "deep")
    return [r / "deep"]


def _move_tree(r: Path) -> list[Path]:
    (r / "deep").rename(r / "moved")
    return [r / "deep", r / "moved"]


def _hidden_and_temp(r: Path) -> list[Path]:
    return [
        write(r / ".git/x.md", "x"),
        write(r / "facts/.#a.md", "x"),
        write(r / "facts/b.md~", "x"),
    ]


def _links(r: Path) -> list[Path]:
    outside = write(r.parent / "outside.md", "---\nsummary: outside\n---\n")
    (r / "facts/out.md").symlink_to(outside)
    (r / "facts/in.md").symlink_to(r / "facts/a.md")
    (r / "linked").symlink_to(r / "deep")
    return [r / "facts/out.md", r / "facts/in.md", r / "linked", r / "linked/x/y.md"]


def _generated_and_outside(r: Path) -> list[Path]:
    return [write(r / "facts/index.md", "gen"), r.parent / "elsewhere.md", r]


OPS: dict[str, Callable[[Path], list[Path]]] = {
    "add": _add, "edit": _edit, "delete": _delete, "remove tree": _remove_tree,
    "move tree": _move_tree, "hidden and temp": _hidden_and_temp, "links": _links,
    "generated, outside and the root": _generated_and_outside,
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(OPS))
def test_a_scan_of_changed_paths_equals_a_full_scan(name: str, tmp_path: Path) -> None:
    root = tmp_path / "root"
    write(root / "facts/a.md", "---\nsummary: a\n---\n")
    write(root / "deep/x/y.md", "---\nsummary: y\n---\n")
    write(root / "deep/z.md", "no frontmatter\n")
    old(root)
    cache = ScanCache()
    listing(root, cache)
    changed = OPS[name](root)
    assert listing(root, cache, changed) == listing(root, ScanCache())


def test_unchanged_files_are_not_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    for i in range(5):
        write(root / f"facts/m{i}.md", f"---\nsummary: {i}\n---\n")
    old(root)
    cache = ScanCache()
    listing(root, cache)
    assert cache.parsed == 5
    listing(root, cache)
    assert cache.parsed == 5
    fresh = write(root / "facts/m1.md", "---\nsummary: one\n---\n")  # racy: read again
    # both reads below happen "just now" even when a loaded machine stalls this test for
    # longer than the racy window (2 s): the scan's clock stands at the moment of writing
    written = fresh.stat().st_mtime_ns
    monkeypatch.setattr(listing_module, "time", SimpleNamespace(time_ns=lambda: written))
    listing(root, cache, [root / "facts/m1.md"])
    listing(root, cache)
    assert cache.parsed == 7


def test_a_fifo_named_like_a_memory_is_never_opened(tmp_path: Path) -> None:
    """Not listed at all (the walk skips it; inspect's files.outside reports it)."""
    root = tmp_path / "root"
    root.mkdir()
    os.mkfifo(root / "pipe.md")
    write(root / "a.md", "---\nsummary: a\n---\n")
    assert [rel for rel, _ in listing(root, ScanCache())] == ["a.md"]


def entries(root: Path, cache: ScanCache) -> list[tuple[str, object, bool]]:
    return [
        (s.rel, s.entry if s.memory else s.error, bool(s.memory and s.memory.sync))
        for s in scan_root(root, cache)
    ]


def kept_root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    write(root / "facts/a.md", "---\nsummary: a\nkind: fact\nload_when: [deploy]\n---\nbody\n")
    write(root / "facts/local.md", "---\nsummary: here only\nsync: false\n---\n")
    write(root / "deep/x/y.md", "no frontmatter\n")
    old(root)
    return root


def test_a_kept_listing_spares_the_next_process_every_unchanged_parse(tmp_path: Path) -> None:
    root, folder = kept_root(tmp_path), tmp_path / "listings"
    first = ScanCache(slim=True, folder=folder)
    assert entries(root, first) == entries(root, ScanCache())
    assert first.parsed == 3
    second = ScanCache(slim=True, folder=folder)  # the next command: nothing in memory
    assert entries(root, second) == entries(root, ScanCache())
    assert second.parsed == 0


def test_a_kept_listing_is_trusted_file_by_file(tmp_path: Path) -> None:
    root, folder = kept_root(tmp_path), tmp_path / "listings"
    entries(root, ScanCache(slim=True, folder=folder))
    edited = write(root / "facts/a.md", "---\nsummary: A\nkind: fact\nload_when: [x]\n---\nbody\n")
    added = write(root / "facts/new.md", "---\nsummary: new\n---\n")
    (root / "deep/x/y.md").unlink()
    for path in (edited, added):  # the mtime of before: the ctime still tells
        os.utime(path, (1_700_000_000, 1_700_000_000))
    later = ScanCache(slim=True, folder=folder)
    assert entries(root, later) == entries(root, ScanCache())
    assert later.parsed == 2


@pytest.mark.parametrize("damage", ["garbage", "other root"])
def test_a_damaged_or_foreign_listing_is_a_miss(tmp_path: Path, damage: str) -> None:
    from memoryd.compile.listing import listing_file

    root, folder = kept_root(tmp_path), tmp_path / "listings"
    other = tmp_path / "other"
    shutil.copytree(root, other)
    entries(other, ScanCache(slim=True, folder=folder))
    file = listing_file(folder, root)
    if damage == "garbage":
        file.write_bytes(b"\x00not a listing")
    else:  # a name collision: the file holds another root's listing
        listing_file(folder, other).rename(file)
    cache = ScanCache(slim=True, folder=folder)
    assert entries(root, cache) == entries(root, ScanCache())
    assert cache.parsed == 3


def test_a_kept_listing_is_written_and_read_a_part_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The listing of 300k memories was one marshal blob, and a tuple for each memory
    before it: 150 MB at once, the peak of a cold reindex. It goes out in parts now (here
    of two memories), each part made when it is written; a file cut short is a miss."""
    import marshal

    from memoryd import cachefile
    from memoryd.compile.listing import listing_file

    monkeypatch.setattr(cachefile, "PART_ITEMS", 2)
    root, folder = kept_root(tmp_path), tmp_path / "listings"
    for i in range(3):
        write(root / f"facts/more{i}.md", f"---\nsummary: more {i}\n---\n")
    old(root)
    dumped: list[object] = []
    real_dump = marshal.dump

    def dump(value: object, handle: object) -> None:
        dumped.append(value)
        real_dump(value, handle)  # type: ignore[arg-type]

    monkeypatch.setattr(marshal, "dump", dump)
    expected = entries(root, ScanCache())
    assert entries(root, ScanCache(slim=True, folder=folder)) == expected
    assert [len(p) for p in dumped[1:-1]] == [2, 2, 2] and dumped[-1] is None  # type: ignore[arg-type]
    later = ScanCache(slim=True, folder=folder)
    assert entries(root, later) == expected and later.parsed == 0
    file = listing_file(folder, root)
    file.write_bytes(file.read_bytes()[:-1])  # the end mark lost: a miss, every file read
    cut = ScanCache(slim=True, folder=folder)
    assert entries(root, cut) == expected and cut.parsed == 6


def test_a_kept_listing_is_written_again_only_when_it_changes(tmp_path: Path) -> None:
    from memoryd.compile.listing import listing_file

    root, folder = kept_root(tmp_path), tmp_path / "listings"
    write(root / "facts/index.md", "compiled: a kept listing never holds it\n")
    entries(root, ScanCache(slim=True, folder=folder))
    file = listing_file(folder, root)
    first = file.stat().st_ino
    for _ in range(2):  # later commands, nothing changed: the file is left as it is
        assert entries(root, ScanCache(slim=True, folder=folder)) == entries(root, ScanCache())
        assert file.stat().st_ino == first
    write(root / "facts/b.md", "---\nsummary: b\n---\n")
    old(root)
    entries(root, ScanCache(slim=True, folder=folder))
    assert file.stat().st_ino != first  # replaced, with the new memory in it
    later = ScanCache(slim=True, folder=folder)
    assert entries(root, later) == entries(root, ScanCache())
    assert later.parsed == 0
