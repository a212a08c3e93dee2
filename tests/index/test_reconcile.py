from __future__ import annotations

import dataclasses
import importlib
import os
import shutil
import sqlite3
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memoryd.config.sections import SearchConfig
from memoryd.index import IndexDB, open_index, recall, reconcile
from memoryd.index.browse import Browser, Query
from memoryd.index.loader import Read, Spread
from tests.index.conftest import World, write_memory

# the package's `reconcile` attribute is the function; the test patches the module
loader_module = importlib.import_module("memoryd.index.loader")
reconcile_module = importlib.import_module("memoryd.index.reconcile")


def indexed(db: IndexDB) -> dict[str, str]:
    return {r.id: r.body.strip() for r in db.rows()}


def test_add_edit_delete_rename(world: World, db: IndexDB) -> None:
    root = world.global_root
    a = world.write(root, "facts/a.md", "alpha", kind="fact")
    b = world.write(root, "facts/b.md", "beta")
    report = reconcile(db, world.config)
    assert sorted(report.added) == [a, b] and indexed(db) == {"facts/a": "alpha", "facts/b": "beta"}

    assert not reconcile(db, world.config).modified  # nothing changed: nothing written
    world.write(root, "facts/a.md", "alpha two", kind="fact")
    report = reconcile(db, world.config)
    assert report.changed == [a] and indexed(db)["facts/a"] == "alpha two"

    assert fts_count(db, '"alpha"') == 1 and fts_count(db, '"two"') == 1
    b.unlink()
    assert reconcile(db, world.config).removed == [b]
    assert fts_count(db, '"beta"') == 0  # the FTS row went with the memories row
    c = a.with_name("c.md")
    a.rename(c)
    report = reconcile(db, world.config)
    assert (report.added, report.removed) == ([c], [a])
    assert indexed(db) == {"facts/c": "alpha two"}
    assert recall(db, world.config, "alpha", world.roots, bump=False)[0].path == c


def test_a_report_lists_paths_as_pathlib_sorts_them_and_counts_them(
    world: World, db: IndexDB
) -> None:
    """The report gathers str and sorts by path parts, as PosixPath does: "a/b" before
    "a-b", where a plain str sort puts "-" (0x2d) before "/" (0x2f)."""
    root = world.global_root
    names = ["facts/a-b.md", "facts/a/b.md", "facts/a.md", "facts/a/a-b.md", "facts/a0.md"]
    written = [world.write(root, name, f"note {i}") for i, name in enumerate(names)]
    report = reconcile(db, world.config)
    assert report.added == sorted(written) and report.count("added") == 5
    assert report.to_json()["added"] == [str(p) for p in sorted(written)]
    assert report.added != [Path(p) for p in sorted(map(str, written))]  # the order differs
    for path in written[:2]:
        path.unlink()
    report = reconcile(db, world.config)
    assert report.removed == sorted(written[:2]) and report.count("removed") == 2
    assert report.modified and (report.added, report.count("changed")) == ([], 0)


def test_only_reconciles_the_changed_paths(world: World, db: IndexDB) -> None:
    root = world.global_root
    a = world.write(root, "facts/a.md", "alpha")
    b = world.write(root, "facts/b.md", "beta")
    reconcile(db, world.config)
    world.write(root, "facts/b.md", "beta two")
    c = world.write(root, "facts/c.md", "gamma")
    a.unlink()
    report = reconcile(db, world.config, only=[a, c])
    assert (report.added, report.removed, report.changed) == ([c], [a], [])
    assert indexed(db)["facts/b"] == "beta"  # not in the batch: untouched
    assert reconcile(db, world.config, only=[b]).changed == [b]


def test_only_handles_folders_moved_and_deleted(world: World, db: IndexDB) -> None:
    root = world.global_root
    world.write(root, "team/x.md", "xray")
    world.write(root, "team/deep/y.md", "yankee")
    reconcile(db, world.config)
    (root.path / "team").rename(root.path / "crew")
    report = reconcile(db, world.config, only=[root.path / "team", root.path / "crew"])
    assert len(report.removed) == 2 and len(report.added) == 2
    assert sorted(r.id for r in db.rows()) == ["crew/deep/y", "crew/x"]


def test_git_hidden_and_temp_files_are_skipped_generated_are_indexed(
    world: World, db: IndexDB
) -> None:
    root = world.global_root.path
    write_memory(root, ".git/x.md", "in git")
    write_memory(root, "facts/.hidden.md", "hidden")
    write_memory(root, "facts/a.md~", "backup")
    write_memory(root, "ROOT.md", "# Memory")
    write_memory(root, "facts/index.md", "- a")
    reconcile(db, world.config)
    assert sorted(r.id for r in db.rows()) == ["ROOT", "facts/index"]


def test_symlinks_are_not_followed_out_of_a_root(world: World, db: IndexDB, tmp_path: Path) -> None:
    outside = write_memory(tmp_path / "elsewhere", "secret.md", "outside")
    (world.global_root.path / "link.md").symlink_to(outside)
    (world.global_root.path / "dir").symlink_to(outside.parent)
    reconcile(db, world.config)
    reconcile(db, world.config, only=[world.global_root.path / "link.md"])
    assert db.rows() == []


def test_a_fifo_read_in_its_place_is_refused_at_once(tmp_path: Path) -> None:
    """A file swapped for a FIFO between the walk and the read (the walk skips FIFOs):
    opening it waited for a writer, and the reconcile with it, for good."""
    pipe = tmp_path / "pipe.md"
    os.mkfifo(pipe)
    raised: list[OSError] = []

    def read() -> None:
        try:
            loader_module.read_file(str(pipe), 1000)
        except OSError as exc:
            raised.append(exc)

    worker = threading.Thread(target=read, daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive():  # the open waits for a writer: be one, so the thread can end
        os.close(os.open(pipe, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(10)
        pytest.fail("the read waited on the FIFO")
    assert [loader_module.reason(exc) for exc in raised] == ["not a regular file"]


def test_unreadable_file_is_unknown_and_keeps_its_row(
    world: World, db: IndexDB, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Tests run as root here, where chmod cannot deny a read: make the read fail instead.
    a = world.write(world.global_root, "facts/a.md", "alpha")
    reconcile(db, world.config)
    world.write(world.global_root, "facts/a.md", "alpha changed")
    real = loader_module.read_file

    def deny(path: str, cap: int):  # type: ignore[no-untyped-def]
        if path == str(a):
            raise PermissionError(13, "Permission denied")
        return real(path, cap)

    monkeypatch.setattr(loader_module, "read_file", deny)
    report = reconcile(db, world.config)
    assert report.unknown == [(a, "Permission denied")] and not report.modified
    assert indexed(db) == {"facts/a": "alpha"}


def test_a_file_without_a_row_is_read_without_a_stat_and_its_failures_still_reported(
    world: World, db: IndexDB, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cold index reads each new file without an ``os.stat`` first (the read's ``fstat``
    gives the fingerprint); a file that then cannot be read is unknown with its reason,
    one gone since the walk leaves no row, and a file with a row is still checked by stat."""
    root = world.global_root
    a = world.write(root, "facts/a.md", "alpha")
    denied = world.write(root, "facts/denied.md", "beta")
    gone = world.write(root, "facts/gone.md", "gamma")
    statted: list[str] = []
    real_stat = os.stat
    real_read: Callable[[str, int], Read] = loader_module.read_file

    def stat(path: str | os.PathLike[str], *args: Any, **kwargs: Any) -> os.stat_result:
        statted.append(os.fspath(path))
        return real_stat(path, *args, **kwargs)

    def read(path: str, cap: int) -> Read:
        if path == str(denied):
            raise PermissionError(13, "Permission denied")
        if path == str(gone):
            raise FileNotFoundError(2, "No such file or directory")
        return real_read(path, cap)

    monkeypatch.setattr(os, "stat", stat)
    monkeypatch.setattr(loader_module, "read_file", read)
    report = reconcile(db, world.config)
    assert not {str(a), str(denied), str(gone)} & set(statted)
    assert report.added == [a] and report.unknown == [(denied, "Permission denied")]
    assert indexed(db) == {"facts/a": "alpha"}
    statted.clear()
    assert not reconcile(db, world.config).modified
    assert str(a) in statted  # a row's fingerprint is checked against the file's


def _phases_seen(monkeypatch: pytest.MonkeyPatch, denied: str | None = None) -> list[str]:
    """The loader's reads and records, in the order they happen ("read", "record"); a read
    of ``denied`` fails as a file without permission does."""
    order: list[str] = []
    real_read: Callable[[str, int], Read] = loader_module.read_file
    real_record = loader_module.record

    def read(path: str, cap: int) -> Read:
        order.append("read")
        if path == denied:
            raise PermissionError(13, "Permission denied")
        return real_read(path, cap)

    def record(*args: object) -> object:
        order.append("record")
        return real_record(*args)

    monkeypatch.setattr(loader_module, "read_file", read)
    monkeypatch.setattr(loader_module, "record", record)
    return order


def test_a_chunk_is_loaded_phase_by_phase_with_what_load_gives_file_by_file(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """load_many reads every file of a chunk before it parses any, and answers as load
    does for each: a row and its tokens, the same hash (no row), gone, unreadable,
    oversized, broken frontmatter; each file's checked_ns taken right after its read."""
    root = world.global_root
    paths = [
        world.write(root, "facts/a.md", "部署脚本 alpha", summary="第一"),
        world.write(root, "facts/same.md", "unchanged"),
        root.path / "facts/gone.md",
        world.write(root, "facts/denied.md", "beta"),
        world.write(root, "facts/big.md", "needle " * 400, summary="haystack"),
    ]
    (root.path / "facts/broken.md").write_text("---\nx: [\n---\nbroken\n")
    paths.append(root.path / "facts/broken.md")
    same = loader_module.read_file(str(paths[1]), 1 << 20).hash
    items = [(str(p), same if p == paths[1] else None) for p in paths]
    order = _phases_seen(monkeypatch, denied=str(paths[3]))
    before = time.time_ns()
    many = loader_module.load_many(root, items, 1000)
    assert order == ["read"] * 6 + ["record"] * 3
    one = [loader_module.load(root, path, 1000, old) for path, old in items]

    def unstamped(result: object) -> object:  # checked_ns is the clock's: compared apart
        if isinstance(result, loader_module.Loaded):
            row = None if result.row is None else tuple(v for i, v in enumerate(result.row) if i != 17)
            return result._replace(checked_ns=0, row=row)
        return result

    assert [unstamped(r) for r in many] == [unstamped(r) for r in one]
    assert [type(r).__name__ for r in many] == ["Loaded"] * 2 + ["Failed"] * 2 + ["Loaded"] * 2
    assert many[1].row is None and many[2].gone and not many[3].gone and many[4].oversized
    stamps = [r.checked_ns for r in many if isinstance(r, loader_module.Loaded)]
    assert before <= min(stamps) and stamps == sorted(stamps)


def test_a_chunk_holds_a_bounded_size_of_files_in_memory_before_their_rows(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reconcile hands load_many a thousand files at a time, and load_many reads them
    until LOAD_BYTES are held, makes those rows, then reads on: a chunk of files near the
    size cap never sits in memory all at once, and every file comes out as in one window."""
    root = world.global_root
    paths = [world.write(root, f"facts/n{i}.md", f"note {i} " + "x" * 300) for i in range(5)]
    items = [(str(p), None) for p in paths]
    whole = loader_module.load_many(root, items, 1 << 20)
    size = paths[0].stat().st_size
    order = _phases_seen(monkeypatch)
    monkeypatch.setattr(loader_module, "LOAD_BYTES", 2 * size)  # two files a window
    windows = loader_module.load_many(root, items, 1 << 20)
    assert order == ["read", "read", "record", "record"] * 2 + ["read", "record"]
    assert [r._replace(checked_ns=0, row=r.row[:17]) for r in windows] == [
        r._replace(checked_ns=0, row=r.row[:17]) for r in whole
    ]
    assert loader_module.LOAD_CHUNK == 1024


def test_unlistable_folder_keeps_its_rows(
    world: World, db: IndexDB, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = world.write(world.global_root, "facts/a.md", "alpha")
    reconcile(db, world.config)
    facts = a.parent
    real_scandir = os.scandir

    def scandir(path):  # type: ignore[no-untyped-def]
        if Path(path) == facts:
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    report = reconcile(db, world.config)
    assert report.removed == [] and report.unknown[0][0] == a
    assert indexed(db) == {"facts/a": "alpha"}


def test_missing_root_keeps_its_rows(world: World, db: IndexDB) -> None:
    world.write(world.global_root, "facts/a.md", "alpha")
    reconcile(db, world.config)
    world.global_root.path.rename(world.global_root.path.with_name("moved"))
    report = reconcile(db, world.config)
    assert report.unknown and not report.removed and len(db.rows()) == 1


def test_oversized_file_is_indexed_by_frontmatter_only(world: World, db: IndexDB) -> None:
    big = world.write(world.global_root, "facts/big.md", "needle " * 400, summary="haystack")
    config = dataclasses.replace(world.config, search=SearchConfig(max_file_bytes=1000))
    report = reconcile(db, config)
    assert report.oversized == [big]
    (row,) = db.rows()
    assert row.body == "" and row.summary == "haystack" and row.size > 1000
    assert [p.code for p in row.problems] == ["file.oversized"]
    assert recall(db, config, "needle", world.roots, bump=False) == []
    assert len(recall(db, config, "haystack", world.roots, bump=False)) == 1


def test_malformed_frontmatter_is_indexed_by_body_with_problems(world: World, db: IndexDB) -> None:
    path = world.global_root.path / "facts" / "bad.md"
    path.parent.mkdir()
    path.write_text("---\nkind: [unclosed\n---\nthe zeppelin body\n")
    reconcile(db, world.config)
    (row,) = db.rows()
    assert row.id == "facts/bad" and "zeppelin" in row.body
    assert row.problems[0].code == "frontmatter.yaml"


def test_same_size_edit_within_the_mtime_tick_is_seen(world: World, db: IndexDB) -> None:
    path = world.global_root.path / "a.md"
    path.write_text("alpha\n")
    reconcile(db, world.config)
    st = path.stat()
    path.write_text("omega\n")  # same size...
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # ...and same mtime
    assert reconcile(db, world.config).changed == [path]


def test_deleted_database_is_rebuilt_from_the_files(world: World) -> None:
    world.write(world.global_root, "facts/a.md", "alpha")
    with open_index(world.paths) as db:
        reconcile(db, world.config)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{world.paths.index_db}{suffix}").unlink(missing_ok=True)
    with open_index(world.paths) as db:
        assert db.rows() == []
        reconcile(db, world.config)
        assert indexed(db) == {"facts/a": "alpha"}


@pytest.mark.parametrize("discard", [False, True], ids=["open", "discard"])
@pytest.mark.parametrize("damage", ["garbage", "foreign", "future"])
def test_corrupt_or_unknown_database_is_moved_aside(
    world: World, damage: str, discard: bool
) -> None:
    world.write(world.global_root, "facts/a.md", "alpha")
    file = world.paths.index_db
    file.parent.mkdir(parents=True, exist_ok=True)
    if damage == "garbage":
        file.write_bytes(b"this is not a database" * 100)
    else:
        conn = sqlite3.connect(file)
        conn.execute("CREATE TABLE other (x)")
        if damage == "future":
            conn.execute("PRAGMA application_id = 1835363684")
            conn.execute("PRAGMA user_version = 99999")
        conn.commit()
        conn.close()
    with open_index(world.paths, discard=discard) as db:
        reconcile(db, world.config)
        assert indexed(db) == {"facts/a": "alpha"}
    aside = [p.name for p in file.parent.iterdir() if ".bad-" in p.name]
    assert len(aside) == 1


def test_a_discarded_index_is_checked_once_emptied_not_page_by_page_before(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``reindex --full`` (``discard``) drops the old tables first and then runs
    quick_check on what is left (the new schema and the free list), where a checked open
    reads every page of an index it is about to throw away."""
    from memoryd.index import schema

    for i in range(200):
        world.write(world.global_root, f"facts/a{i}.md", f"alpha {i} " * 100)
    with open_index(world.paths) as db:
        reconcile(db, world.config)
    os.utime(world.paths.index_db)  # the file now differs from the checked (from outside)
    live: list[int] = []  # the pages in use when quick_check ran
    real_check = schema.quick_check

    def counted(conn: sqlite3.Connection) -> str:
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        live.append(pages - conn.execute("PRAGMA freelist_count").fetchone()[0])
        return real_check(conn)

    monkeypatch.setattr(schema, "quick_check", counted)
    with open_index(world.paths, discard=True) as db:
        assert db.rows() == [] and live and max(live) < 20  # the empty schema's ten pages
        assert len(reconcile(db, world.config).added) == 200
    live.clear()
    os.utime(world.paths.index_db)
    with open_index(world.paths) as db:  # a checked open of the rebuilt file
        assert len(db.rows()) == 200 and live and min(live) > 100


@pytest.mark.parametrize("discard", [False, True], ids=["open", "discard"])
def test_corrupted_pages_are_detected(world: World, discard: bool) -> None:
    """A checked open finds the damage and moves the file aside. A discarded index
    (``reindex --full``) is dropped first: damage the drop does not read goes with the
    dropped pages, and damage it reads, or that the check finds afterwards, moves the file
    aside. Either way the rebuilt index is whole and passes quick_check."""
    from memoryd.index import schema

    for i in range(300):
        world.write(world.global_root, f"facts/a{i}.md", f"alpha {i} " * 50)
    with open_index(world.paths) as db:
        reconcile(db, world.config)
        db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    file = world.paths.index_db
    data = bytearray(file.read_bytes())
    for offset in range(4096 * 3, len(data) - 4096, 4096 * 2):
        data[offset + 100 : offset + 400] = os.urandom(300)
    file.write_bytes(bytes(data))
    with open_index(world.paths, discard=discard) as db:
        reconcile(db, world.config)
        assert len(db.rows()) == 300 and fts_count(db, '"alpha"') == 300
        assert schema.quick_check(db.conn) == "ok"
    assert discard or any(".bad-" in p.name for p in file.parent.iterdir())


def test_reset_rebuilds_from_nothing(world: World, db: IndexDB) -> None:
    world.write(world.global_root, "facts/a.md", "alpha")
    reconcile(db, world.config)
    db.reset()
    assert db.rows() == []
    assert len(reconcile(db, world.config).added) == 1


def test_large_batches_load_in_worker_processes_with_the_same_result(
    world: World, tmp_path: Path
) -> None:
    for i in range(40):
        body = f"部署脚本 {i} lockfile" if i % 2 else f"plain words {i}"
        world.write(world.global_root, f"facts/f{i:02}.md", body, summary=f"第{i}条")
    (world.global_root.path / "facts" / "bad.md").write_text("---\nx: [\n---\nbroken\n")
    with open_index(world.paths) as db:
        serial = reconcile(db, world.config)
        expected = db.rows()
        db.reset()
        parallel = reconcile(db, world.config, spread=Spread(min_files=5, min_cpus=1, chunk=7))
        assert sorted(parallel.added) == sorted(serial.added)
        assert [dataclasses.replace(r, mtime_ns=0) for r in db.rows()] == [
            dataclasses.replace(r, mtime_ns=0) for r in expected
        ]
        # the FTS rows written from worker tokens delete cleanly: a contentless table
        # given the wrong tokens on 'delete' keeps matching the deleted rowids
        assert fts_count(db, '"部署"') == 20
        for path in world.global_root.path.rglob("*.md"):
            path.unlink()
        assert len(reconcile(db, world.config).removed) == 41
        assert fts_count(db, '"部署"') == 0
        assert fts_count(db, '"plain"') == 0


def fts_count(db: IndexDB, expression: str) -> int:
    sql = "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?"
    return int(db.conn.execute(sql, (expression,)).fetchone()[0])


@pytest.mark.parametrize(
    "worker",
    [
        "import sys; sys.stdin.buffer.read(64); sys.exit(3)",  # dies after its first request
        "import sys, time; sys.stdout.buffer.write(b'\\x05' + bytes(7) + b'junk!'); time.sleep(1)",
        # a well-framed answer whose pickle holds invalid UTF-8: loads() raises
        # UnicodeDecodeError, which is no UnpicklingError
        "import sys, time; sys.stdin.buffer.read(64); "
        "sys.stdout.buffer.write(bytes([8]) + bytes(7) + b'X\\x02\\x00\\x00\\x00\\xff\\xfe.'); "
        "time.sleep(1)",
    ],
    ids=["dies", "garbles", "undecodable"],
)
def test_a_failing_worker_only_means_this_process_loads_the_rest(
    world: World, caplog: pytest.LogCaptureFixture, worker: str
) -> None:
    for i in range(30):
        world.write(world.global_root, f"facts/f{i:02}.md", f"部署 note {i}", summary=f"s{i}")
    with open_index(world.paths) as db:
        serial = reconcile(db, world.config)
        expected = db.rows()
        db.reset()
        command = (sys.executable, "-c", worker)
        spread = Spread(min_files=5, min_cpus=1, chunk=4, worker=command)
        parallel = reconcile(db, world.config, spread=spread)
        assert parallel.added == serial.added
        assert [dataclasses.replace(r, mtime_ns=0) for r in db.rows()] == [
            dataclasses.replace(r, mtime_ns=0) for r in expected
        ]
        assert fts_count(db, '"部署"') == 30
    assert "worker processes failed" in caplog.text


def test_a_machine_with_fewer_cpus_than_the_spread_asks_loads_in_this_process(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    """Workers buy wall time with CPU: below ``min_cpus`` none is started, however large
    the batch (here a worker would fail at once, and say so in the log)."""
    for i in range(12):
        world.write(world.global_root, f"facts/f{i:02}.md", f"部署 note {i}")
    failing = (sys.executable, "-c", "import sys; sys.exit(3)")
    with open_index(world.paths) as db:
        spread = Spread(min_files=5, min_cpus=(os.cpu_count() or 1) + 1, worker=failing)
        assert reconcile(db, world.config, spread=spread).count("added") == 12
        assert fts_count(db, '"部署"') == 12
        assert "worker processes failed" not in caplog.text
        db.reset()
        reconcile(db, world.config, spread=dataclasses.replace(spread, min_cpus=1))
        assert fts_count(db, '"部署"') == 12
    assert "worker processes failed" in caplog.text  # the same spread with workers


def test_a_schema_1_index_migrates_and_stays_consistent(world: World) -> None:
    from memoryd.index import schema, tokenizer

    world.write(world.global_root, "facts/a.md", "部署 alpha")
    world.write(world.global_root, "facts/b.md", "部署 beta")
    file = world.paths.index_db
    file.parent.mkdir(parents=True, exist_ok=True)
    old = sqlite3.connect(file, isolation_level=None)  # as memoryd with schema 1 left it
    old.create_function("memoryd_tokens", 1, tokenizer.index_text, deterministic=True)
    for statement in schema._statements(schema.MIGRATIONS[1]):
        old.execute(statement)
    old.execute(f"PRAGMA application_id = {schema.APPLICATION_ID}")
    old.execute(f"PRAGMA user_version = {100 + tokenizer.TOKENIZER_VERSION}")
    old.execute(  # a row written through schema 1's triggers, for a file edited since
        "INSERT INTO memories (path, root, scope, layout, id, size, mtime_ns, checked_ns, hash, "
        "body) VALUES (?, ?, 'global', 'plugin', 'facts/a', 1, 1, 1, 'old', 'stale 旧文')",
        (str(world.global_root.path / "facts" / "a.md"), str(world.global_root.path)),
    )
    old.close()
    with open_index(world.paths) as db:
        triggers = db.conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        assert triggers.fetchall() == []
        plan = db.conn.execute(  # schema 3: fingerprints come from their own index
            "EXPLAIN QUERY PLAN SELECT path, size, mtime_ns, checked_ns, hash FROM memories "
            "WHERE root = ?",
            ("x",),
        ).fetchall()
        assert "COVERING INDEX memories_fingerprint" in plan[0][-1]
        assert db.conn.execute("PRAGMA user_version").fetchone()[0] == schema.USER_VERSION
        assert fts_count(db, '"stale"') == 1
        report = reconcile(db, world.config)
        assert (len(report.added), len(report.changed)) == (1, 1)
        assert fts_count(db, '"stale"') == 0  # the old tokens left with the old text
        assert fts_count(db, '"旧文"') == 0
        assert fts_count(db, '"部署"') == 2
        (world.global_root.path / "facts" / "a.md").unlink()
        assert len(reconcile(db, world.config).removed) == 1
        assert fts_count(db, '"部署"') == 1
        page = Browser(db).page([world.global_root.path], Query(), hits={}, findings={})
        assert [(r["id"], r["folder"]) for r in page.rows] == [("facts/b", "facts")]  # schema 4


def test_an_index_of_the_unstemmed_tokenizer_is_rebuilt_from_the_files(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    from memoryd.index import schema

    world.write(world.global_root, "facts/a.md", "we deployed twice")
    with open_index(world.paths) as db:
        reconcile(db, world.config)
        # as tokenizer 1 left it: "deployed" stored whole, so "deploy" would never find it
        db.conn.execute("DELETE FROM memories")
        db.conn.execute("INSERT INTO memories_fts(memories_fts) VALUES ('delete-all')")
        db.conn.execute(
            "INSERT INTO memories (path, root, scope, layout, id, size, mtime_ns, checked_ns, "
            "hash, body) VALUES (?, ?, 'global', 'plugin', 'facts/a', 1, 1, 1, 'h', 'x')",
            (str(world.global_root.path / "facts" / "a.md"), str(world.global_root.path)),
        )
        db.conn.execute(f"PRAGMA user_version = {schema.SCHEMA_VERSION * 100 + 1}")
    with caplog.at_level("INFO"), open_index(world.paths) as db:
        assert db.conn.execute("PRAGMA user_version").fetchone()[0] == schema.USER_VERSION
        assert db.conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 0
        assert len(reconcile(db, world.config).added) == 1
        assert fts_count(db, '"deploy"') == 1
    assert "the tokenizer changed (version 1, now 8): rebuilding the index" in caplog.text
    assert not list(world.paths.index_db.parent.glob("*.bad-*"))  # rebuilt, not moved aside


def test_an_index_of_tokenizer_3_reads_a_frontmatter_with_an_impossible_date_again(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    """Tokenizer 3 read no field of a frontmatter holding 2023-02-30 (PyYAML failed it
    whole); the file has not changed since, so only the version bump reads it again."""
    from memoryd.index import schema

    path = world.global_root.path / "facts" / "odd.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("---\nid: facts/odd\nsummary: quokka rota\ncreated: 2023-02-30\n---\nbody\n")
    with open_index(world.paths) as db:
        reconcile(db, world.config)
        assert fts_count(db, '"quokka"') == 1
        db.conn.execute(  # as tokenizer 3 left it: no summary indexed
            "UPDATE memories SET summary = NULL WHERE path = ?", (str(path),)
        )
        db.conn.execute("INSERT INTO memories_fts(memories_fts) VALUES ('delete-all')")
        db.conn.execute(f"PRAGMA user_version = {schema.SCHEMA_VERSION * 100 + 3}")
    with caplog.at_level("INFO"), open_index(world.paths) as db:
        assert len(reconcile(db, world.config).added) == 1
        assert fts_count(db, '"quokka"') == 1
        summary = db.conn.execute("SELECT summary FROM memories WHERE path = ?", (str(path),))
        assert summary.fetchone()[0] == "quokka rota"
    assert "the tokenizer changed (version 3, now 8): rebuilding the index" in caplog.text


def test_an_index_of_tokenizer_4_reads_a_frontmatter_with_spaced_fences_again(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    """Tokenizer 4 read '--- ' as no fence: the file, unchanged since, is read again."""
    from memoryd.index import schema

    path = world.global_root.path / "facts" / "spaced.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("--- \nsummary: quokka rota\n---\t\nbody\n")
    with open_index(world.paths) as db:
        reconcile(db, world.config)
        db.conn.execute(  # as tokenizer 4 left it: no summary
            "UPDATE memories SET summary = NULL WHERE path = ?", (str(path),)
        )
        db.conn.execute(f"PRAGMA user_version = {schema.SCHEMA_VERSION * 100 + 4}")
    with caplog.at_level("INFO"), open_index(world.paths) as db:
        assert len(reconcile(db, world.config).added) == 1
        summary = db.conn.execute("SELECT summary FROM memories WHERE path = ?", (str(path),))
        assert summary.fetchone()[0] == "quokka rota"
    assert "the tokenizer changed (version 4, now 8): rebuilding the index" in caplog.text


def test_quick_check_runs_again_only_when_the_file_changed(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    statements: list[str] = []
    real_connect = sqlite3.connect

    def traced(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn: sqlite3.Connection = real_connect(*args, **kwargs)
        conn.set_trace_callback(statements.append)
        return conn

    def checks() -> int:
        return statements.count("PRAGMA quick_check")

    monkeypatch.setattr(sqlite3, "connect", traced)  # memoryd.index.schema's sqlite3
    world.write(world.global_root, "facts/a.md", "alpha")
    with open_index(world.paths) as db:
        reconcile(db, world.config)
        db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the main file changes
    assert checks() == 1
    for _ in range(3):
        with open_index(world.paths) as db:
            assert len(db.rows()) == 1
    assert checks() == 1  # changed by its own writes, which vouched for it: not read again
    world.write(world.global_root, "facts/b.md", "beta")
    with open_index(world.paths) as db:  # a write whose close checkpoints (the last one)
        reconcile(db, world.config)
    with open_index(world.paths) as db:
        assert len(db.rows()) == 2
    assert checks() == 1
    os.utime(world.paths.index_db)  # touched from outside
    with open_index(world.paths):
        pass
    assert checks() == 2
    other = real_connect(world.paths.index_db)  # another program's write, and checkpoint
    other.execute("CREATE TABLE elsewhere (x)")
    other.close()
    with open_index(world.paths) as db:
        assert len(db.rows()) == 2
    assert checks() == 3


def test_a_write_vouches_only_for_the_file_it_opened(world: World) -> None:
    """A file put in its place while a connection wrote (a restore, a copy) is checked
    by the next open, as any file from elsewhere is."""
    world.write(world.global_root, "facts/a.md", "alpha")
    with open_index(world.paths) as db:
        reconcile(db, world.config)
        marker = world.paths.index_db.with_name("index.sqlite3.checked")
        before = marker.read_text()
        shutil.copy(world.paths.index_db, world.paths.index_db.with_name("copy"))
        os.replace(world.paths.index_db.with_name("copy"), world.paths.index_db)
        db.conn.execute("DELETE FROM memories WHERE 0")  # no row: total_changes moves not
        world.write(world.global_root, "facts/b.md", "beta")
        reconcile(db, world.config)  # writes to the file it opened, now unlinked
    assert marker.read_text() == before


def test_a_file_two_roots_list_has_one_row_with_the_last_roots_tokens(
    world: World, db: IndexDB
) -> None:
    """A new path is inserted without a look-up first; a path another root already indexed
    takes the update branch, whose 'delete' must remove exactly the first root's tokens."""
    outer = world.global_root
    inner = dataclasses.replace(outer, path=outer.path / "team", scope="project")
    path = world.write(inner, "a.md", "alpha 部署")
    reconcile(db, world.config, [outer])
    assert reconcile(db, world.config, [inner]).added == [path]  # new to this root
    rows = db.rows()
    assert [(r.path, r.root, r.id) for r in rows] == [(path, inner.path, "a")]
    assert fts_count(db, '"alpha"') == 1 and fts_count(db, '"team"') == 0  # the id is "a" now
    world.write(inner, "a.md", "beta")
    reconcile(db, world.config, [inner])
    assert (fts_count(db, '"alpha"'), fts_count(db, '"部署"'), fts_count(db, '"beta"')) == (0, 0, 1)


def test_rows_written_in_bulk_get_their_own_tokens_around_a_path_that_had_a_row(
    world: World, db: IndexDB
) -> None:
    """A batch is inserted with one executemany and its rowids read back by path: a path
    that already had a row (another root's) in the middle of the batch takes the update
    branch, and every other row's tokens go in under that row's own rowid."""
    from memoryd.index.tokenizer import index_text

    outer = world.global_root
    inner = dataclasses.replace(outer, path=outer.path / "team", scope="project")
    world.write(inner, "m.md", "middle 部署")
    reconcile(db, world.config, [outer])  # team/m.md now has outer's row
    words = {"a": "alpha", "b": "bravo", "m": "mike", "x": "xray", "y": "yankee"}
    for name, word in words.items():
        world.write(inner, f"{name}.md", f"{word} note")
    report = reconcile(db, world.config, [inner])
    assert (report.count("added"), report.count("changed")) == (5, 0)
    rowid_of = dict(db.conn.execute("SELECT id, rowid FROM memories"))
    assert sorted(rowid_of) == sorted(words)  # one row per file, with inner's ids
    sql = "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?"
    found = {n: [r for (r,) in db.conn.execute(sql, (f'"{index_text(w)}"',))] for n, w in words.items()}
    assert found == {name: [rowid] for name, rowid in rowid_of.items()}
    assert fts_count(db, '"middle"') == 0 and fts_count(db, '"note"') == 5


def test_a_batch_of_new_rows_takes_its_rowids_in_order_without_reading_them_back(
    world: World, db: IndexDB
) -> None:
    """Rows that are all new get consecutive rowids (AUTOINCREMENT, after a gap a deleted
    row left): their tokens go in under them with no look-up of the rowids by path."""
    from memoryd.index.tokenizer import index_text

    root = world.global_root
    world.write(root, "facts/gone.md", "gone")
    reconcile(db, world.config)
    (root.path / "facts/gone.md").unlink()
    reconcile(db, world.config)  # the highest rowid so far is free again, and not reused
    words = {f"n{i}": word for i, word in enumerate(["alpha", "bravo", "部署", "delta", "echo"])}
    for name, word in words.items():
        world.write(root, f"facts/{name}.md", f"{word} note")
    seen: list[str] = []
    db.conn.set_trace_callback(seen.append)
    assert reconcile(db, world.config).count("added") == 5
    db.conn.set_trace_callback(None)
    assert not [sql for sql in seen if sql.startswith("SELECT path, rowid")]
    rowid_of = {i.removeprefix("facts/"): r for i, r in db.conn.execute("SELECT id, rowid FROM memories")}
    assert sorted(rowid_of) == sorted(words) and min(rowid_of.values()) == 2
    sql = "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?"
    found = {n: [r for (r,) in db.conn.execute(sql, (f'"{index_text(w).split()[0]}"',))] for n, w in words.items()}
    assert found == {name: [rowid] for name, rowid in rowid_of.items()}


@pytest.mark.parametrize("setting", [1, 0])
def test_reset_drops_the_old_pages_without_zeroing_them_and_keeps_the_setting(
    world: World, setting: int
) -> None:
    """secure_delete (on in Debian's SQLite) zeroes every page a drop frees: a reset leaves
    the freed pages as they are for the rebuild to overwrite, and sets it back after."""
    world.write(world.global_root, "facts/a.md", "alpha " * 3000)  # pages to free
    seen: list[str] = []
    with open_index(world.paths) as db:
        reconcile(db, world.config)
        db.conn.execute(f"PRAGMA secure_delete = {setting}")
        db.conn.set_trace_callback(seen.append)
        db.reset()
        db.conn.set_trace_callback(None)
        assert db.conn.execute("PRAGMA secure_delete").fetchone() == (setting,)
        assert db.count() == 0
    first_drop = next(i for i, sql in enumerate(seen) if sql.startswith("DROP TABLE"))
    assert "PRAGMA secure_delete = FAST" in seen[:first_drop]


def test_a_new_or_reset_index_gathers_large_batches_in_memory(world: World) -> None:
    """FTS5's hashsize is raised on a new index and on reset (reindex --full), so a large
    write batch becomes one segment of the full-text index, not one per megabyte."""
    from memoryd.index import schema

    def hashsize(db: IndexDB) -> object:
        found = db.conn.execute("SELECT v FROM memories_fts_config WHERE k = 'hashsize'")
        return found.fetchone()

    with open_index(world.paths) as db:
        assert hashsize(db) == (schema.FTS_HASHSIZE,)
        db.conn.execute("DELETE FROM memories_fts_config WHERE k = 'hashsize'")
        db.reset()
        assert hashsize(db) == (schema.FTS_HASHSIZE,)


@pytest.mark.parametrize("size", [0, 1, 65_535, 65_537, 300_001])
def test_read_file_reads_the_whole_file_or_the_head_and_hashes_all_of_it(
    tmp_path: Path, size: int
) -> None:
    import hashlib

    data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    path = tmp_path / "f.md"
    path.write_bytes(data)
    digest = hashlib.blake2b(data, digest_size=16).hexdigest()
    whole = loader_module.read_file(str(path), cap=size)
    assert (whole.data, whole.size, whole.hash, whole.oversized) == (data, size, digest, False)
    if size > loader_module.HEAD_BYTES:
        head = loader_module.read_file(str(path), cap=size - 1)
        assert (head.data, head.size, head.hash, head.oversized) == (
            data[: loader_module.HEAD_BYTES], size, digest, True
        )


def test_a_large_pass_writes_with_a_larger_page_cache_and_gives_it_back(
    world: World, db: IndexDB, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memoryd.index import store

    monkeypatch.setattr(reconcile_module, "BULK_FILES", 3)
    seen: list[int] = []
    put_many = store.put_many

    def spy(conn: sqlite3.Connection, items: list[tuple[object, ...]]) -> None:
        seen.append(conn.execute("PRAGMA cache_size").fetchone()[0])
        put_many(conn, items)  # type: ignore[arg-type]

    monkeypatch.setattr(store, "put_many", spy)
    (before,) = db.conn.execute("PRAGMA cache_size").fetchone()
    for name in ("a", "b", "c"):
        world.write(world.global_root, f"facts/{name}.md", f"note {name}")
    assert reconcile(db, world.config).count("added") == 3
    assert seen == [-reconcile_module.BULK_CACHE_KIB]
    assert db.conn.execute("PRAGMA cache_size").fetchone() == (before,)
    changed = world.write(world.global_root, "facts/a.md", "note a, again")
    assert reconcile(db, world.config, only=[changed]).count("changed") == 1  # a small pass
    assert seen[1:] == [before]


def test_a_file_is_read_with_one_read_and_a_short_read_is_read_again_later(
    world: World, db: IndexDB, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No second read to confirm the end of a file; a read cut short (as a network file
    system may) leaves a row whose size differs from the file's, so the next reconcile
    reads the file again instead of trusting the short text."""
    path = world.write(world.global_root, "facts/a.md", "alpha beta gamma " * 10)
    reads: list[int] = []
    real_read = os.read

    def short_read(fd: int, size: int) -> bytes:
        reads.append(size)
        return real_read(fd, size)[: 20 if len(reads) == 1 else None]

    monkeypatch.setattr(loader_module.os, "read", short_read)
    reconcile(db, world.config)
    assert len(reads) == 1 and db.rows()[0].size == 20 != path.stat().st_size
    monkeypatch.setattr(loader_module.os, "read", real_read)
    reconcile(db, world.config)
    assert db.rows()[0].body.strip() == ("alpha beta gamma " * 10).strip()


def test_a_cold_index_of_small_memories_is_one_transaction_and_one_fts5_segment(
    world: World, db: IndexDB
) -> None:
    """Batches end at BATCH_BYTES of text, not at a file count a root of small memories
    reaches first: 6000 files of 100 bytes go in with one commit, and FTS5 holds them in
    one segment, which every query reads once (two would each be read apart)."""
    folder = world.global_root.path / "facts"
    folder.mkdir(parents=True)
    past = time.time() - 86_400
    for i in range(6000):
        path = folder / f"n{i}.md"
        path.write_text(f"note {i} about deploy 部署 number {i * 7}\n" + "x" * 40 + "\n")
        os.utime(path, (past, past))
    commits: list[str] = []
    db.conn.set_trace_callback(lambda sql: commits.append(sql) if sql == "COMMIT" else None)
    assert reconcile(db, world.config).count("added") == 6000
    db.conn.set_trace_callback(None)
    assert commits == ["COMMIT"]
    (segments,) = db.conn.execute("SELECT count(DISTINCT segid) FROM memories_fts_idx").fetchone()
    assert segments == 1



def test_a_damaged_page_is_warned_of_in_one_line(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    """SQLite's quick_check answers a damaged page in two lines ("*** in database main ***"
    and the fault): the warning that moves the index aside is one line all the same."""
    for n in range(40):
        world.write(world.global_root, f"facts/m{n}.md", f"alpha {n} " * 50)
    file = world.paths.index_db
    with open_index(world.paths) as db:
        reconcile(db, world.config)
    with open(file, "r+b") as handle:  # page 3: a b-tree page of the memories
        handle.seek(2 * 4096)
        handle.write(b"\xff" * 4096)
    os.utime(file, ns=(time.time_ns(), time.time_ns() + 10**9))  # not the checked stamp
    with open_index(world.paths) as db:
        reconcile(db, world.config)
        assert len(indexed(db)) == 40
    [warning] = [r.getMessage() for r in caplog.records if "unusable" in r.getMessage()]
    assert warning.startswith(
        f"index: {file} is unusable (quick_check failed: *** in database main ***; Page 3: "
    )
    assert "\n" not in warning and warning.endswith(" and rebuilding")


def test_an_index_that_cannot_be_moved_aside_is_not_said_to_be(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    from memoryd.index import schema

    file = tmp_path / "index.sqlite3"
    file.write_bytes(b"not a database")

    def read_only(src: str, dst: str) -> None:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), src)

    monkeypatch.setattr(os, "replace", read_only)  # memoryd.index.schema's os
    with pytest.raises(OSError, match="Read-only file system"):
        schema.move_aside(file, "unable to open database file")
    assert [r for r in caplog.records if "moved to" in r.getMessage()] == []
    assert file.read_bytes() == b"not a database"
