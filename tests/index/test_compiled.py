"""A compiled ROOT.md or index.md keeps its row but gives FTS5 no text.

They repeat the memories' summaries (recall never returns them), and their text was more
than a quarter of what a cold index tokenized. The full-text table is contentless, so a
row's tokens must leave exactly as they came: these tests hold the incremental index to
a fresh one built from the same files, token instance by token instance.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memoryd.index import IndexDB, open_index, recall, reconcile, schema
from memoryd.index.store import compiled
from memoryd.paths import resolve_paths
from tests.index.conftest import World, write_memory


def instances(db: IndexDB) -> set[tuple[str, str, str, int]]:
    """Every token FTS5 holds, as (path, term, column, offset)."""
    vocab = (
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.v USING fts5vocab(main, memories_fts, instance)"
    )
    db.conn.execute(vocab)
    paths = dict(db.conn.execute("SELECT rowid, path FROM memories"))
    rows = db.conn.execute("SELECT doc, term, col, offset FROM temp.v")
    return {
        (paths.get(doc, f"<no row {doc}>"), term, col, offset) for doc, term, col, offset in rows
    }


def fresh(world: World, tmp_path: Path) -> set[tuple[str, str, str, int]]:
    """The token instances of an index built from nothing on the same files."""
    paths = resolve_paths({"MEMORYD_HOME": str(tmp_path / "fresh-home")})
    with open_index(paths) as db:
        reconcile(db, world.config)
        return instances(db)


def _compiled_files(world: World) -> tuple[Path, Path]:
    root = world.global_root.path
    (root / "ROOT.md").write_text("# Memory\n\nzephyr routing table, mistral rules\n")
    (root / "facts").mkdir(exist_ok=True)
    (root / "facts" / "index.md").write_text("- facts/wind: zephyr and sirocco\n")
    return root / "ROOT.md", root / "facts" / "index.md"


def test_compiled_files_keep_their_rows_and_give_fts5_no_text(world: World, db: IndexDB) -> None:
    root_md, index_md = _compiled_files(world)
    wind = world.write(world.global_root, "facts/wind.md", "a zephyr is a west wind", kind="fact")
    reconcile(db, world.config)
    rows = {str(r.path): r for r in db.rows()}
    assert set(rows) == {str(root_md), str(index_md), str(wind)}
    assert "mistral" in rows[str(root_md)].body  # the row keeps the text
    assert {path for path, *_ in instances(db)} == {str(wind)}
    hits = recall(db, world.config, "zephyr", world.roots, bump=False)
    assert [h.path for h in hits] == [wind]
    assert recall(db, world.config, "mistral sirocco", world.roots, bump=False) == []


def test_changing_and_removing_compiled_files_leaves_the_index_a_fresh_one_would_be(
    world: World, db: IndexDB, tmp_path: Path
) -> None:
    root_md, index_md = _compiled_files(world)
    wind = world.write(world.global_root, "facts/wind.md", "a zephyr is a west wind")
    project_index = world.project_root.path / "index.md"
    project_index.write_text("project zephyr\n")
    reconcile(db, world.config)
    root_md.write_text("# Memory\n\nbora and foehn\n")
    index_md.write_text("- facts/wind: a new line about chinook\n")
    world.write(world.global_root, "facts/wind.md", "a zephyr is a west wind, the foehn a warm one")
    reconcile(db, world.config)
    project_index.unlink()
    index_md.unlink()
    reconcile(db, world.config)
    assert instances(db) == fresh(world, tmp_path)
    db.conn.execute("INSERT INTO memories_fts(memories_fts, rank) VALUES ('integrity-check', 0)")
    assert [h.path for h in recall(db, world.config, "foehn", world.roots, bump=False)] == [wind]


def test_a_file_named_like_a_compiled_one_elsewhere_is_indexed(world: World, db: IndexDB) -> None:
    """Only a plugin root's own ROOT.md is compiled; a ROOT.md in a folder is a memory, and a
    root of another layout has no compiled files."""
    nested = write_memory(world.global_root.path, "notes/ROOT.md", "monsoon season")
    reconcile(db, world.config)
    assert [h.path for h in recall(db, world.config, "monsoon", world.roots, bump=False)] == [
        nested
    ]
    root = str(world.global_root.path)
    assert compiled(f"{root}/ROOT.md", root, "plugin")
    assert compiled(f"{root}/a/b/index.md", root, "plugin")
    assert not compiled(f"{root}/notes/ROOT.md", root, "plugin")
    assert not compiled(f"{root}/ROOT.md", root, "claude")
    assert not compiled(f"{root}/a/index.md.bak", root, "plugin")


def test_an_index_of_tokenizer_2_is_rebuilt_so_no_compiled_text_is_left_to_delete(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    """Version 2 gave ROOT.md its text: deleting it now would tell FTS5 of no tokens and
    leave them there, so such an index is rebuilt from the files."""
    root_md, _ = _compiled_files(world)
    with open_index(world.paths) as db:
        reconcile(db, world.config)
        rowid = db.conn.execute("SELECT rowid FROM memories WHERE path = ?", (str(root_md),))
        (number,) = rowid.fetchone()
        db.conn.execute(  # as version 2 left it
            "INSERT INTO memories_fts(memories_fts, rowid, id, summary, load_when, body) "
            "VALUES ('delete', ?, '', '', '', '')",
            (number,),
        )
        db.conn.execute(
            "INSERT INTO memories_fts(rowid, id, summary, load_when, body) "
            "VALUES (?, 'root', '', '', 'zephyr routing table mistral rules')",
            (number,),
        )
        db.conn.execute(f"PRAGMA user_version = {schema.SCHEMA_VERSION * 100 + 2}")
    with caplog.at_level("INFO"), open_index(world.paths) as db:
        assert db.conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 0
        reconcile(db, world.config)
        assert instances(db) == set()
    assert "the tokenizer changed (version 2, now 8): rebuilding the index" in caplog.text


def test_a_summary_equal_to_the_body_leaves_as_it_came(
    world: World, db: IndexDB, tmp_path: Path
) -> None:
    """A summary that is the whole body gives FTS5 no tokens (memoryd.index.store.fts_tokens);
    edits that make it so and undo it take out exactly what went in."""
    path = world.write(world.global_root, "facts/tide.md", "neap tide", summary="Neap  tide")
    reconcile(db, world.config)
    assert {(term, col) for _, term, col, _ in instances(db)} == {
        ("fact", "id"), ("tide", "id"), ("neap", "body"), ("tide", "body")
    }
    for summary, body in [("neap", "neap tide"), ("spring tide", "spring tide"),
                          ("", "spring tide"), ("spring tide", "spring tide")]:  # fmt: skip
        world.write(world.global_root, "facts/tide.md", body, summary=summary)
        reconcile(db, world.config)
        assert instances(db) == fresh(world, tmp_path / summary.replace(" ", "-"))
    db.conn.execute("INSERT INTO memories_fts(memories_fts, rank) VALUES ('integrity-check', 0)")
    path.unlink()
    reconcile(db, world.config)
    assert instances(db) == set()
