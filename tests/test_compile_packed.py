"""The daemon keeps no Python object per memory between compiles (memoryd.compile.packed)."""

from __future__ import annotations

import gc
from collections import Counter
from pathlib import Path
from unittest.mock import patch

from hypothesis import given
from hypothesis import strategies as st

from memoryd.compile import packed
from memoryd.compile.blocks import Entry
from memoryd.compile.listing import ScanCache, Scanned
from memoryd.compile.packed import Ids, Packed
from memoryd.compile.writer import compile_root
from memoryd.config.sections import Config, RootConfig

RELS = st.sampled_from(["a.md", "b.md", "f/a.md", "f/b.md", "f/c.md", "f/g/a.md", "f/g/é.md"])
OPS = st.lists(st.tuples(st.sampled_from(["set", "del", "pack"]), RELS, st.integers(0, 3)))


def kept_objects() -> int:
    """Entries and listing items alive in this process."""
    gc.collect()
    return sum(type(o) in (Entry, Scanned) for o in gc.get_objects())


def write_memories(root: Path, names: range) -> None:
    for n in names:
        folder = root / ("rules" if n % 5 == 0 else f"facts/{n % 7}")
        folder.mkdir(parents=True, exist_ok=True)
        kind = "rule" if n % 5 == 0 else "fact"
        text = f"---\nkind: {kind}\nsummary: memory {n}\nload_when: [t{n % 3}]\n---\nbody\n"
        (folder / f"m{n}.md").write_text(text, encoding="utf-8")


def test_the_daemon_keeps_no_object_per_memory_however_large_the_root(tmp_path: Path) -> None:
    """At 100k memories the daemon's listing and model held 92 MB of entries between
    compiles, about 1 KB a memory (issue 39): now a few packed blobs a folder."""
    root = tmp_path / "root"
    rc, config = RootConfig(root), Config()
    daemon = ScanCache(slim=True, packed=True)  # the daemon's (memoryd.compile.writer)
    before = kept_objects()
    kept = []
    for size in (100, 400):
        write_memories(root, range(size))
        compile_root(rc, config, cache=daemon)
        edited = root / "facts" / "1" / "m1.md"
        edited.write_text(edited.read_text().replace("memory 1", f"memory one of {size}"))
        compile_root(rc, config, [edited], cache=daemon)
        assert f"memory one of {size}" in (edited.parent / "index.md").read_text()
        kept.append(kept_objects() - before)
    assert kept == [0, 0]
    assert len(daemon.listing_view(root) or {}) == 400 + 9  # an index.md a folder, and ROOT.md


@given(OPS)
def test_a_packed_mapping_reads_as_a_dict_whatever_is_packed_or_open(
    ops: list[tuple[str, str, int]],
) -> None:
    with patch.object(packed, "BUCKET", 1):  # a folder of three doubles its buckets
        mapping: Packed[tuple[str, int]] = Packed(
            lambda rel, item: item[1], lambda rel, record: (rel, record)
        )
        model: dict[str, tuple[str, int]] = {}
        for op, rel, value in ops:
            if op == "set":
                mapping[rel] = model[rel] = (rel, value)
            elif op == "del" and rel in model:
                del mapping[rel], model[rel]
            elif op == "pack":
                mapping.pack()
            assert dict(mapping) == dict(mapping.items()) == model
            assert len(mapping) == len(model)
            assert sorted(mapping.folders()) == sorted({r.rpartition("/")[0] for r in model})
            for folder in mapping.folders():
                expected = sorted(v for r, v in model.items() if r.rpartition("/")[0] == folder)
                assert sorted(mapping.in_folder(folder)) == expected


@given(st.lists(st.tuples(st.booleans(), st.sampled_from(["i1", "i2", "a/x", "部署"]))))
def test_ids_say_when_an_id_came_and_went_as_a_counter_does(ops: list[tuple[bool, str]]) -> None:
    ids, counts = Ids(["i1"]), Counter(["i1"])
    for add, id_ in ops:
        if add:
            assert ids.add(id_) == (counts[id_] == 0)
            counts[id_] += 1
        elif counts[id_]:
            counts[id_] -= 1
            assert ids.remove(id_) == (counts[id_] == 0)
        assert {i for i in ("i1", "i2", "a/x", "部署") if i in ids} == set((+counts).keys())


def test_a_whole_root_compile_follows_what_no_batch_told(tmp_path: Path) -> None:
    """The daemon's periodic whole-root compile applies what it finds to its kept model:
    a file deleted, a folder removed, a file edited and one added while no watcher told."""
    import shutil

    root = tmp_path / "root"
    rc, config = RootConfig(root), Config()
    daemon = ScanCache(slim=True, packed=True)
    write_memories(root, range(40))
    compile_root(rc, config, cache=daemon)
    (root / "facts" / "1" / "m1.md").unlink()
    shutil.rmtree(root / "facts" / "2")
    edited = root / "facts" / "3" / "m3.md"
    edited.write_text(edited.read_text().replace("memory 3", "memory three"))
    write_memories(root, range(40, 41))
    report = compile_root(rc, config, cache=daemon)
    assert compile_root(rc, config, check=True, cache=ScanCache()).stale == []
    assert root / "facts" / "1" / "index.md" in report.written
    assert "memory three" in (root / "facts" / "3" / "index.md").read_text()
    assert "m1.md" not in (root / "facts" / "1" / "index.md").read_text()
