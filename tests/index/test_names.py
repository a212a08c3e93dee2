"""File names that are not UTF-8: reported, never a crash of the whole index."""

from __future__ import annotations

import os
from pathlib import Path

from memoryd.index import IndexDB, recall, reconcile
from memoryd.index.reconcile import NOT_UTF8
from tests.helpers import run_cli
from tests.index.conftest import World


def non_utf8_memory(folder: Path) -> Path:
    """``facts/caf\\xe9.md`` (Latin-1 bytes), written through the bytes API as a Windows
    share or an old archive leaves it."""
    raw = os.fsencode(folder) + b"/caf\xe9.md"
    with open(raw, "wb") as handle:
        handle.write(b"---\nkind: fact\nsummary: latte at the old cafe\n---\nlatte art\n")
    return Path(os.fsdecode(raw))


def test_a_non_utf8_name_is_reported_and_every_other_memory_is_indexed(
    world: World, db: IndexDB
) -> None:
    world.write(world.global_root, "facts/tea.md", "latte or tea", kind="fact", summary="tea")
    (world.global_root.path / "facts").mkdir(exist_ok=True)
    odd = non_utf8_memory(world.global_root.path / "facts")
    report = reconcile(db, world.config)
    assert [p.name for p in report.added] == ["tea.md"]
    assert report.unknown == [(odd, NOT_UTF8)]
    assert [h.id for h in recall(db, world.config, "latte", world.roots, bump=False)] == [
        "facts/tea"
    ]
    assert reconcile(db, world.config).unknown == [(odd, NOT_UTF8)]  # every time, no crash
    assert reconcile(db, world.config, only=[odd]).unknown == [(odd, NOT_UTF8)]  # the watcher's


def test_recall_and_inspect_say_what_to_do_about_it(isolated_home: Path) -> None:
    assert run_cli("init").returncode == 0
    facts = isolated_home / "memory" / "facts"
    facts.mkdir(exist_ok=True)
    odd = non_utf8_memory(facts)
    done = run_cli("recall", "latte")
    assert done.returncode == 0  # nothing else to find: not an internal error
    assert "internal error" not in done.stderr
    inspect = run_cli("inspect")
    assert inspect.returncode == 1
    assert (
        f"{odd}: has a file name that is not valid UTF-8, so the search index cannot hold it "
        "and recall never finds it (sync still carries it)\n"
        "  fix: rename it to a UTF-8 name, e.g. mv it from a shell whose locale is UTF-8\n"
    ) in inspect.stdout
