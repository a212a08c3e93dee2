"""The daemon knows its own compile writes before its watcher can report them.

The watcher reports a compile's rename onto ROOT.md at once, and the batch worker
settles it ``quiet_ms`` (150 ms) later, while a compile of several files, each one
fsynced with its folder, may still be running. A write the daemon learns of only when
the compile returns is then taken for a user's edit: one more reindex and compile, and
the own-write count that tests and ``memoryd status`` read does not move.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memoryd import fsutil
from memoryd.daemon.batching import Op
from memoryd.daemon.indexing import Engine, OwnWrites
from tests.daemon.harness import app_with_root, memory


def test_a_compile_write_settled_before_the_compile_returns_is_the_daemons_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    app, root = app_with_root()
    [root_config] = [r for r in app.config.roots if r.path == root]
    rule = root / "rules" / "deploy.md"
    rule.write_text(memory("部署 only with pnpm", kind="rule"))
    engine = Engine(app.paths)
    settled: dict[Path, dict[Path, Op]] = {}
    write = fsutil.atomic_write

    def write_then_settle(path: Path, data: bytes, mode: int | None = None) -> None:
        write(path, data, mode)
        # the watcher has seen the rename: the worker settles its batch, the compile goes on
        ops = {path: Op.MODIFIED}
        engine.own.drop_own(ops)
        settled[path] = ops

    monkeypatch.setattr(fsutil, "atomic_write", write_then_settle)
    written = engine.compile(app.config, root_config, [rule])
    assert {root / "ROOT.md", root / "rules" / "index.md"} <= set(written)
    assert set(settled) == set(written)
    assert settled == {path: {} for path in written}  # every one dropped as the daemon's own


def test_an_earlier_write_reported_after_the_next_is_announced_is_still_own(
    tmp_path: Path,
) -> None:
    own, path = OwnWrites(), tmp_path / "ROOT.md"
    own.expect(path, b"first\n")
    path.write_bytes(b"first\n")
    own.expect(path, b"second\n")  # the next compile announced, not yet written
    ops = {path: Op.MODIFIED}
    assert own.drop_own(ops) == 1 and ops == {}  # the first write's late event
    path.write_bytes(b"second\n")
    ops = {path: Op.MODIFIED}
    assert own.drop_own(ops) == 1 and ops == {}
    path.write_bytes("a hand edit 手改\n".encode())
    ops = {path: Op.MODIFIED}
    assert own.drop_own(ops) == 0 and ops == {path: Op.MODIFIED}  # a real change
    path.write_bytes(b"second\n")  # our record went with the hand edit: a change again
    assert own.drop_own({path: Op.MODIFIED}) == 0


def test_an_announced_deletion_is_own_and_only_the_last_two_hashes_count(
    tmp_path: Path,
) -> None:
    own, path = OwnWrites(), tmp_path / "index.md"
    for n in range(3):
        own.expect(path, f"v{n}\n".encode())
    path.write_bytes(b"v0\n")  # older than the last two announced: not as the daemon left it
    assert own.drop_own({path: Op.MODIFIED}) == 0
    own.expect(path, b"v3\n")
    own.expect(path, None)
    path.unlink()
    ops = {path: Op.DELETED}
    assert own.drop_own(ops) == 1 and ops == {}


def test_once_the_last_write_is_seen_an_earlier_state_is_a_change_again(tmp_path: Path) -> None:
    own, path = OwnWrites(), tmp_path / "facts" / "index.md"
    path.parent.mkdir()
    own.expect(path, None)  # the daemon deletes it (its folder lost its last memory)...
    own.expect(path, b"- facts/a\n")  # ...and writes it again (a memory came back)
    path.write_bytes(b"- facts/a\n")
    assert own.drop_own({path: Op.CREATED}) == 1
    path.unlink()  # now the user deletes it: not the daemon's deletion of before
    ops = {path: Op.DELETED}
    assert own.drop_own(ops) == 0 and ops == {path: Op.DELETED}


def test_the_daemons_writes_vouch_for_the_index_file_they_checkpoint() -> None:
    """The daemon's checkpoints change the main file all day: a command that opened it
    next read every page (a second at 100k memories) unless the writes vouched for it."""
    from memoryd.index import schema

    app, root = app_with_root()
    [root_config] = [r for r in app.config.roots if r.path == root]
    engine = Engine(app.paths)
    engine.open()
    engine.db.conn.execute("PRAGMA wal_autocheckpoint = 1")  # every commit checkpoints
    try:
        for i in range(3):
            (root / "facts" / f"f{i}.md").write_text(memory(f"fact {i} 部署"))
            engine.refresh(app.config, root_config, None)
            marker = schema._marker(app.paths.index_db).read_text()
            assert marker == schema._stamp(app.paths.index_db)
    finally:
        engine.close()
