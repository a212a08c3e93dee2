"""FTS5's big segments merged by the daemon, not inside a later save (memoryd.index.segments)."""

from __future__ import annotations

import pytest

from memoryd.index import IndexDB, recall, reconcile, segments
from tests.index.conftest import NOW_MS, World


def _structure(db: IndexDB) -> list[int]:
    (data,) = db.conn.execute("SELECT block FROM memories_fts_data WHERE id = 10").fetchone()
    return segments.sizes(data)


def _grow(world: World, db: IndexDB, batches: int) -> None:
    """Memories written in ``batches`` reconciles: a segment each, as FTS5 writes them."""
    for b in range(batches):
        for i in range(30):
            world.write(world.global_root, f"facts/b{b}-{i}.md",
                        f"tidal note {b} {i} about the harbour crane number {i * b}")  # fmt: skip
        reconcile(db, world.config)


def test_the_structure_record_lists_every_segment(world: World, db: IndexDB) -> None:
    _grow(world, db, 3)
    sizes = _structure(db)
    assert len(sizes) == 3 and all(pages >= 1 for pages in sizes)
    db.conn.execute("INSERT INTO memories_fts(memories_fts) VALUES ('optimize')")
    assert len(_structure(db)) == 1


def test_two_big_segments_are_merged_into_one_and_answers_stay(
    world: World, db: IndexDB, monkeypatch: pytest.MonkeyPatch
) -> None:
    _grow(world, db, 3)
    before = [h.id for h in recall(db, world.config, "harbour crane", world.roots, bump=False,
                                   now_ms=NOW_MS, limit=100)]  # fmt: skip
    assert segments.big_segments(db.conn) == 0 and not segments.tidy(db.conn)  # one page each
    monkeypatch.setattr(segments, "BIG_PAGES", 1)
    assert segments.big_segments(db.conn) == 3
    assert segments.tidy(db.conn)
    assert len(_structure(db)) == 1 and not segments.tidy(db.conn)  # one segment: nothing to do
    after = [h.id for h in recall(db, world.config, "harbour crane", world.roots, bump=False,
                                  now_ms=NOW_MS, limit=100)]  # fmt: skip
    assert after == before and len(before) == 90
    db.conn.execute("INSERT INTO memories_fts(memories_fts, rank) VALUES ('integrity-check', 0)")


def test_a_record_this_code_cannot_read_merges_nothing(world: World, db: IndexDB) -> None:
    _grow(world, db, 2)
    db.conn.execute("UPDATE memories_fts_data SET block = x'0000000105' WHERE id = 10")
    assert segments.big_segments(db.conn) == 0


def test_a_v2_record_is_read_with_its_five_more_numbers_a_segment() -> None:
    v1 = bytes([0, 0, 0, 1, 1, 2, 7, 0, 2, 1, 1, 0xCF, 0x3B, 2, 11, 11])  # 10171: two bytes
    v2 = bytes([0, 0, 0, 1, 0xFF, 0, 0, 1, 1, 2, 7, 0, 2]) + bytes(
        [1, 1, 0xCF, 0x3B, 0, 0, 0, 0, 5, 2, 11, 11, 0, 0, 0, 0, 1]
    )
    assert segments.sizes(v1) == segments.sizes(v2) == [10171, 1]
