"""The lean ``memoryd recall`` (memoryd.lean_recall) prints the full CLI's bytes, or declines.

Every case runs both paths as real processes on the same state: the console script's
entry point (``memoryd.entry``, lean first) and the full CLI (``memoryd.cli.main``),
restoring each root's ``.state.json`` in between, and compares exit code, stdout,
stderr and the hit counts written. A probe records which modules the entry point
loaded, so each case also asserts which path answered: a case meant for the lean path
that silently fell back would compare the full path with itself.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memoryd.index.hits import bump_hits, read_hits, render
from memoryd.paths import resolve_paths
from memoryd.runlock import DaemonLock
from tests.helpers import git, run_cli
from tests.index.conftest import write_memory

OLD = "2023-03-05"  # every memory is years old: the decay sits at its floor, scores are stable
ENTRY = (
    "import os, sys\n"
    "from memoryd.entry import main\n"
    "try:\n"
    "    code = main()\n"
    "finally:\n"
    "    with open(os.environ['LEAN_PROBE'], 'w') as probe:\n"
    "        probe.write(' '.join(sorted(sys.modules)))\n"
    "raise SystemExit(code)\n"
)
FULL = "from memoryd.cli import main\nraise SystemExit(main())\n"


class Home:
    """An initialised home: a global root, a project repository with its root, settled."""

    def __init__(self, base: Path, tmp_path: Path) -> None:
        self.base = base
        self.global_root = base / "memory"
        self.repo = tmp_path / "repo"
        self.project_root = self.repo / ".memory"
        self.probe = tmp_path / "probe.txt"
        self.more: list[Path] = []  # other roots a test searches

    def roots(self) -> list[Path]:
        return [self.global_root, self.project_root, *self.more]

    def settle(self) -> None:
        past = time.time() - 60
        for root in self.roots():
            for file in root.glob("**/*.md"):
                os.utime(file, (past, past))
        os.utime(resolve_paths().config_file, (past, past))

    def settled_index(self) -> None:
        """One more full recall: it checks the index file the last writes left (the lean
        path trusts only a checked file) and changes nothing."""
        assert self.run(FULL, ["recall", "pnpm"], self.repo).returncode == 0

    def run(self, script: str, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "LEAN_PROBE": str(self.probe)}
        return subprocess.run(
            [sys.executable, "-c", script, *args],
            cwd=cwd, env=env, capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip

    def states(self) -> dict[Path, bytes | None]:
        found = {}
        for root in self.roots():
            file = root / ".state.json"
            found[file] = file.read_bytes() if file.exists() else None
        return found

    def restore(self, states: dict[Path, bytes | None]) -> None:
        for file, data in states.items():
            if data is None:
                file.unlink(missing_ok=True)
            else:
                file.write_bytes(data)

    def both(self, args: list[str], cwd: Path | None = None) -> tuple[Result, Result]:
        """(entry point, full CLI) on the same state; the entry point's probe kept."""
        cwd = cwd or self.repo
        before = self.states()
        lean = self.run(ENTRY, args, cwd)
        lean_states, modules = self.states(), set(self.probe.read_text().split())
        self.restore(before)
        full = self.run(FULL, args, cwd)
        return Result(lean, lean_states, modules), Result(full, self.states(), set())


class Result:
    def __init__(
        self, done: subprocess.CompletedProcess[str], states: dict[Path, bytes | None],
        modules: set[str],
    ) -> None:  # fmt: skip
        self.code, self.out, self.err = done.returncode, done.stdout, done.stderr
        self.states, self.modules = states, modules

    @property
    def lean(self) -> bool:
        return "memoryd.lean_recall" in self.modules and "memoryd.cli" not in self.modules

    def same_as(self, other: Result) -> None:
        assert (self.code, self.out, self.err) == (other.code, other.out, other.err)
        assert self.states == other.states


@pytest.fixture
def home(isolated_home: Path, tmp_path: Path) -> Iterator[Home]:
    yield _world(Home(isolated_home, tmp_path))


def _world(h: Home) -> Home:
    assert run_cli("init").returncode == 0
    h.repo.mkdir()
    git(h.repo, "init", "-q")
    g, p = h.global_root, h.project_root
    write_memory(g, "pitfalls/deploy.md", "部署脚本用 pnpm, never npm.", summary="部署 uses pnpm",
                 kind="pitfall", updated=OLD)  # fmt: skip
    write_memory(g, "facts/sqlite.md", "SQLite WAL mode: readers never block the writer.",
                 summary="sqlite wal", kind="fact", updated=OLD, load_when=["sqlite", "数据库"])  # fmt: skip
    write_memory(g, "decisions/merge.md", "The merge freeze starts Thursdays; deployments wait.",
                 summary="merge freeze", kind="decision", updated=OLD, pinned=True)  # fmt: skip
    write_memory(g, "facts/ｗｉｄｅ.md", "Ｆｕｌｌｗｉｄｔｈ ＳＱＬｉｔｅ text, 配置文件 in 日本語 テスト.",
                 updated=OLD)  # fmt: skip
    assert run_cli("init", "--project", cwd=h.repo).returncode == 0
    write_memory(p, "pitfalls/ci.md", "CI deploys with pnpm; the cache key is the lockfile.",
                 summary="ci pnpm cache", kind="pitfall", updated=OLD)  # fmt: skip
    h.settle()
    assert "pnpm" in h.run(FULL, ["recall", "pnpm"], h.repo).stdout  # indexes, compiles
    h.settle()  # the compiled files recall just wrote
    assert h.run(FULL, ["recall", "pnpm"], h.repo).returncode == 0  # their rows, the snapshot
    h.settled_index()
    return h


@pytest.fixture(params=["xdg", "plain"])
def default_home(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Home:
    """A user's machine: no MEMORYD_HOME, the folders platformdirs picks (XDG variables
    set, or only HOME); the global root is OpenCode's memory folder."""
    monkeypatch.delenv("MEMORYD_HOME")
    if request.param == "plain":
        for name in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
            monkeypatch.delenv(name)
    paths = resolve_paths()
    assert str(paths.cache_dir).startswith(str(tmp_path / "home"))  # never the real home
    h = Home(paths.config_dir, tmp_path)
    h.global_root = paths.default_global_root
    return _world(h)


LEAN_CASES = [
    ["recall", "pnpm"],
    ["recall", "部署"],
    ["recall", "部署脚本", "pnpm"],
    ["recall", "署"],  # one CJK character: a prefix search
    ["recall", "sqlite"],  # the full-width memory matches too; a load_when term
    ["recall", "数据库"],
    ["recall", "テスト"],
    ["recall", "when", "is", "the", "merge", "freeze"],  # stop words left out
    ["recall", "the"],  # nothing but stop words: searched as they are
    ["recall", "deploy"],  # the stem finds "deployments" and "deploys"
    ["recall", "nosuchwordanywhere"],  # no result: a hint on stderr, exit 0
    ["recall", "--json", "pnpm"],
    ["recall", "nosuchwordanywhere", "--json"],
    ["recall", "pnpm", "--limit", "1"],
    ["recall", "pnpm", "--scope", "global"],
    ["recall", "nosuchwordanywhere", "--scope", "global"],  # the note names the global root
    ["recall", "pnpm", "--scope", "project", "--json"],
    ["recall", "--kind", "pitfall", "pnpm"],
    ["recall", "pnpm", "--markers", "layered"],
    ["recall", 'AND NEAR("x" *', "pnpm"],  # FTS5 operators are plain words
]


@pytest.mark.parametrize("args", LEAN_CASES, ids=lambda a: " ".join(a[1:]))
@pytest.mark.parametrize("daemon", [False, True], ids=["reconciling", "daemon-running"])
def test_the_lean_path_prints_the_full_paths_bytes(
    home: Home, args: list[str], daemon: bool
) -> None:
    if daemon:
        with DaemonLock(resolve_paths().lock_file):
            lean, full = home.both(args)
    else:
        lean, full = home.both(args)
    assert lean.lean, "the entry point fell back to the full CLI"
    lean.same_as(full)
    assert (lean.out.strip() in ("", "[]")) == ("nosuchwordanywhere" in args)


@pytest.mark.skipif(sys.platform != "linux", reason="the folders' shortcut is Linux's XDG rule")
@pytest.mark.parametrize("args", [["recall", "pnpm"], ["recall", "--json", "部署"]])
def test_without_memoryd_home_the_lean_path_finds_the_default_folders(
    default_home: Home, args: list[str]
) -> None:
    lean, full = default_home.both(args)
    assert lean.lean, "the entry point fell back to the full CLI"
    lean.same_as(full)
    assert "platformdirs" not in lean.modules
    with DaemonLock(resolve_paths().lock_file):
        lean, full = default_home.both(args)
    assert lean.lean
    lean.same_as(full)


def test_a_snapshot_for_other_folders_is_not_used(
    default_home: Home, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Written while XDG_STATE_HOME named another folder: the same config and cache, but
    the daemon's lock is elsewhere, so the lean path must not trust the snapshot."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "other-state"))
    lean, full = default_home.both(["recall", "pnpm"])
    assert not lean.lean
    lean.same_as(full)
    assert "pnpm" in lean.out


def test_outside_the_project_and_with_project_option(home: Home, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    lean, full = home.both(["recall", "pnpm"], cwd=elsewhere)
    assert lean.lean
    lean.same_as(full)
    assert "ci.md" not in lean.out  # no project root outside the repository
    lean, full = home.both(["recall", "pnpm", "--project", str(home.repo)], cwd=elsewhere)
    assert lean.lean
    lean.same_as(full)
    assert "ci.md" in lean.out


def test_hit_counts_are_written_alike(home: Home) -> None:
    lean, full = home.both(["recall", "pnpm"])
    assert lean.lean
    assert lean.states[home.global_root / ".state.json"] is not None
    assert read_hits(home.global_root)["pitfalls/deploy"] >= 1
    lean.same_as(full)


def test_hit_counts_are_read_for_the_hits_alone(home: Home) -> None:
    """The lean path finds the counts of its candidates in the sorted file, appended hits
    included, and parses no JSON (at 100k memories parsing every count cost more than the
    query): the full path, which parses them all, ranks and counts alike."""
    counts = {f"facts/other{n:04d}": n for n in range(3000)}
    counts.update({"pitfalls/ci": 2, "pitfalls/deploy": 40})
    file = home.global_root / ".state.json"
    file.write_text(render({"hits": counts}), encoding="utf-8")
    bump_hits(home.global_root, ["facts/sqlite"] * 3)
    lean, full = home.both(["recall", "pnpm", "wal"])
    assert lean.lean
    assert "json" not in lean.modules
    lean.same_as(full)


FALLBACK_CASES = [
    (["recall", ""], 2, "memoryd: error: the query '' has no word to search for"),
    (["recall", "...", "!!"], 2, "memoryd: error: the query '... !!' has no word to search for"),
    (["recall", "pnpm", "--limit", "0"], 2, "memoryd: error: --limit must be at least 1"),
    (["recall", "pnpm", "--limit", "x"], 2, "argument --limit: invalid int value: 'x'"),
    (["recall", "pnpm", "--scope", "nowhere"], 2, "argument --scope: invalid choice: 'nowhere'"),
    (["recall", "pnpm", "--lim", "1"], 0, "pnpm"),  # argparse's abbreviation: the full path
    (["recall", "pnpm", "--nosuch"], 2, "unrecognized arguments: --nosuch"),
    (["recall", "pnpm", "--project", "/"], 1, "/ is not inside a git repository"),
    (["recall", "-h"], 0, "usage: memoryd recall"),
    (["recall", "pnpm", "--everywhere"], 0, "pnpm"),
]


@pytest.mark.parametrize(("args", "code", "text"), FALLBACK_CASES, ids=str)
def test_everything_else_is_the_full_paths(
    home: Home, args: list[str], code: int, text: str
) -> None:
    lean, full = home.both(args)
    assert not lean.lean, "the lean path answered a case it must leave to the full CLI"
    lean.same_as(full)
    assert lean.code == code
    assert text in lean.out + lean.err


def test_no_hit_with_another_project_registered_is_the_full_paths(
    home: Home, tmp_path: Path
) -> None:
    """Only the full path looks in the other registered projects for the note; a hit
    here needs no note, and the lean path gives it."""
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    assert run_cli("init", "--project", cwd=other).returncode == 0
    write_memory(other / ".memory", "facts/db.md", "other uses postgres", updated=OLD)
    home.more.append(other / ".memory")
    home.settle()
    home.settled_index()
    lean, full = home.both(["recall", "postgres"])
    assert not lean.lean
    lean.same_as(full)
    assert f"but another project's root does ({other.resolve()}/.memory)" in lean.err
    home.settle()  # what that compiled in the other project, and its rows
    assert home.run(FULL, ["recall", "pnpm"], home.repo).returncode == 0
    home.settled_index()
    found, again = home.both(["recall", "pnpm"])
    assert found.lean
    found.same_as(again)


def test_a_broken_config_is_reported_not_read_from_the_snapshot(home: Home) -> None:
    config = resolve_paths().config_file
    config.write_text("roots: [\n", encoding="utf-8")
    past = time.time() - 60
    os.utime(config, (past, past))
    lean, full = home.both(["recall", "pnpm"])
    assert not lean.lean
    lean.same_as(full)
    assert lean.code == 1
    assert f"memoryd: error: {config}:2:1: not valid YAML" in lean.err


def test_without_a_daemon_a_changed_file_is_reconciled_first(home: Home) -> None:
    memory = home.global_root / "facts" / "sqlite.md"
    memory.write_text(memory.read_text(encoding="utf-8") + "Checkpoint starvation: vacuum.\n")
    past = time.time() - 60  # settled, and the size changed: only a reconcile sees it
    os.utime(memory, (past, past))
    done = home.run(ENTRY, ["recall", "starvation"], home.repo)
    assert "facts/sqlite" in done.stdout, done.stderr
    modules = set(home.probe.read_text().split())
    assert "memoryd.cli" in modules  # declined by the lean path, reconciled by the full one
    home.settle()  # the recompiled ROOT.md and index.md
    assert home.run(FULL, ["recall", "starvation"], home.repo).returncode == 0
    home.settled_index()
    lean, full = home.both(["recall", "starvation"])
    assert lean.lean
    lean.same_as(full)
    assert "facts/sqlite" in lean.out


def test_with_a_daemon_a_changed_file_is_left_to_the_daemon(home: Home) -> None:
    memory = home.global_root / "facts" / "sqlite.md"
    memory.write_text(memory.read_text(encoding="utf-8") + "Checkpoint starvation: vacuum.\n")
    with DaemonLock(resolve_paths().lock_file):
        lean, full = home.both(["recall", "starvation"])
    assert lean.lean
    lean.same_as(full)
    assert lean.out == ""  # not yet indexed: the daemon would have reconciled it


@pytest.mark.parametrize("how", ["older tokenizer", "deleted"])
def test_an_index_emptied_under_a_running_daemon_is_reconciled(home: Home, how: str) -> None:
    index = resolve_paths().index_db
    if how == "older tokenizer":  # memoryd upgraded while the old daemon runs
        with sqlite3.connect(index) as conn:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            conn.execute(f"PRAGMA user_version = {version - 1}")
        conn.close()
    else:  # the cache folder cleaned out
        for file in index.parent.glob(index.name + "*"):
            file.unlink()
    with DaemonLock(resolve_paths().lock_file):
        done = home.run(ENTRY, ["recall", "sqlite"], home.repo)
        again = home.run(ENTRY, ["recall", "sqlite"], home.repo)
    assert done.returncode == 0, done.stderr
    assert "1. facts/sqlite  (fact, global, score " in done.stdout, done.stderr
    assert "1. facts/sqlite  (fact, global, score " in again.stdout, again.stderr


def test_an_unlisted_project_root_is_reconciled_even_with_a_daemon(
    home: Home, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")  # its .memory exists, but config.yaml does not list it
    write_memory(other / ".memory", "facts/new.md", "zanzibar release train", updated=OLD)
    home.more.append(other / ".memory")
    with DaemonLock(resolve_paths().lock_file):
        done = home.run(ENTRY, ["recall", "zanzibar"], other)
        assert "facts/new" in done.stdout  # the daemon does not watch this root
        assert "memoryd.cli" in set(home.probe.read_text().split())  # a new file: full path
        home.settle()
        assert home.run(FULL, ["recall", "zanzibar"], other).returncode == 0
        home.settled_index()
        lean, full = home.both(["recall", "zanzibar"], cwd=other)
    assert lean.lean  # nothing changed since: the lean path checked the unlisted root itself
    lean.same_as(full)
    assert "facts/new" in lean.out


def test_an_unreadable_state_file_is_the_full_paths_warning(home: Home) -> None:
    (home.global_root / ".state.json").write_text("{not json", encoding="utf-8")
    lean, full = home.both(["recall", "pnpm"])
    assert not lean.lean
    lean.same_as(full)
    assert "memoryd: WARNING: ignoring unreadable" in lean.err


def test_a_changed_config_is_read_again(home: Home) -> None:
    config = resolve_paths().config_file
    text = config.read_text(encoding="utf-8")
    config.write_text(text + "search:\n  limit: 1\n", encoding="utf-8")
    past = time.time() - 60
    os.utime(config, (past, past))
    lean, full = home.both(["recall", "pnpm"])
    assert not lean.lean  # no snapshot for this config.yaml yet; the full path writes it
    lean.same_as(full)
    assert lean.out.count("\n   matched: ") == 1
    home.settled_index()
    lean, full = home.both(["recall", "pnpm"])
    assert lean.lean
    lean.same_as(full)
    assert lean.out.count("\n   matched: ") == 1


def test_a_hit_over_the_size_cap_is_said_alike(home: Home) -> None:
    """A file over search.max_file_bytes has no body in the index: both paths say that it
    was not loaded, in the text and in the JSON (the lean path from its snapshot's cap)."""
    config = resolve_paths().config_file
    text = config.read_text(encoding="utf-8")
    config.write_text(text + "search:\n  max_file_bytes: 1000\n", encoding="utf-8")
    big = write_memory(home.global_root, "facts/zeppelin.md", "zeppelin mooring " * 100,
                       summary="zeppelin manual", kind="fact", updated=OLD)  # fmt: skip
    home.settle()
    assert home.run(FULL, ["recall", "zeppelin"], home.repo).returncode == 0  # indexes it
    home.settle()
    assert home.run(FULL, ["recall", "zeppelin"], home.repo).returncode == 0  # the snapshot
    home.settled_index()
    note = (
        f"   [… body not loaded: {big} is {big.stat().st_size} bytes, over the 1000-byte "
        "limit (search.max_file_bytes), so only its frontmatter is searched: read the file, "
        "or split it into smaller memories]\n"
    )
    lean, full = home.both(["recall", "zeppelin"])
    assert lean.lean
    lean.same_as(full)
    assert "\n   zeppelin manual\n" + note + "   matched: zeppelin×2\n" in lean.out
    lean, full = home.both(["recall", "--json", "zeppelin"])
    assert lean.lean
    lean.same_as(full)
    assert [(hit["id"], hit["body"], hit["oversized"]) for hit in json.loads(lean.out)] == [
        ("facts/zeppelin", "", True)
    ]


def test_lean_recalls_at_once_lose_no_count(home: Home) -> None:
    before = read_hits(home.global_root)["pitfalls/deploy"]
    env = {**os.environ, "LEAN_PROBE": os.devnull}
    procs = [
        subprocess.Popen([sys.executable, "-c", ENTRY, "recall", "--scope", "global", "pnpm"],
                         cwd=home.repo, env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
        for _ in range(4)
    ]  # fmt: skip
    for proc in procs:
        assert proc.wait(timeout=60) == 0, proc.stderr.read() if proc.stderr else ""
    after = read_hits(home.global_root)["pitfalls/deploy"]
    assert after == before + 4
    lean, _full = home.both(["recall", "pnpm"])
    assert lean.lean  # the four were lean too: nothing they did sends the next one back


def _index_files() -> list[Path]:
    db = resolve_paths().index_db
    return [db, *(db.with_name(db.name + end) for end in ("-wal", "-shm", ".checked"))]


def test_a_kept_connection_answers_again_as_a_new_one_would(home: Home) -> None:
    """The daemon keeps its index connection between answers (lean_recall.Kept): the same
    connection answers the next recall, in the bytes a connection of its own gives."""
    from memoryd.lean_recall import Kept, answer

    kept, cwd = Kept(), str(home.repo)
    with DaemonLock(resolve_paths().lock_file):
        before = home.states()
        first = answer(["pnpm"], os.environ, cwd, kept=kept)
        (identity, conn), = kept.held.values()
        home.restore(before)
        again = answer(["pnpm"], os.environ, cwd, kept=kept)
        assert kept.held[str(resolve_paths().index_db)] == (identity, conn)  # used again
        again_states = home.states()
        home.restore(before)
        alone = answer(["pnpm"], os.environ, cwd)
        assert home.states() == again_states
    assert first is not None and "pitfalls/deploy" in first[1]
    assert first == again == alone
    kept.close()
    assert kept.held == {}
    with pytest.raises(sqlite3.ProgrammingError, match="closed database"):
        conn.execute("SELECT 1")


def test_a_new_index_file_gets_a_new_connection_and_the_old_one_is_closed(home: Home) -> None:
    from memoryd.lean_recall import Kept, answer

    kept, cwd = Kept(), str(home.repo)
    with DaemonLock(resolve_paths().lock_file):
        assert answer(["pnpm"], os.environ, cwd, kept=kept) is not None
        (old_identity, old), = kept.held.values()
        for file in _index_files():  # the index moved aside: the next full recall builds anew
            file.unlink(missing_ok=True)
        assert answer(["pnpm"], os.environ, cwd, kept=kept) is None  # no checked index: declined
        assert kept.held == {str(resolve_paths().index_db): (old_identity, old)}
    for _ in range(2):  # a new file: indexed and compiled, then the compiled files' rows
        home.settle()
        assert home.run(FULL, ["recall", "pnpm"], home.repo).returncode == 0
    home.settled_index()
    with DaemonLock(resolve_paths().lock_file):
        answered = answer(["pnpm"], os.environ, cwd, kept=kept)
        (identity, conn), = kept.held.values()
    assert answered is not None and "pitfalls/deploy" in answered[1]
    assert identity != old_identity and conn is not old
    with pytest.raises(sqlite3.ProgrammingError, match="closed database"):
        old.execute("SELECT 1")
    kept.close()


def test_a_kept_connection_holds_no_read_transaction(home: Home) -> None:
    """Between answers the kept connection reads nothing: the daemon's writer can still
    truncate the WAL (an open read would keep the WAL growing)."""
    from memoryd.lean_recall import Kept, answer

    kept = Kept()
    with DaemonLock(resolve_paths().lock_file):
        for words in (["pnpm"], ["部署"], ["nosuchwordanywhere"], ["sqlite", "--json"]):
            assert answer(words, os.environ, str(home.repo), kept=kept) is not None
    writer = sqlite3.connect(resolve_paths().index_db)
    try:
        busy, _log, _done = writer.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    finally:
        writer.close()
    assert busy == 0
    kept.close()


def test_a_commit_between_the_candidates_and_their_rows_changes_neither(
    home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lean path reads its candidates and then the kept rows in one read transaction,
    as the full path does: the daemon's commit in between (here: a row deleted on another
    connection after ranking began) neither removes a kept row from under the answer
    (which then declined) nor mixes two versions of the index."""
    from memoryd.index import pick, ranking  # pick (both paths') calls rank
    from memoryd.lean_recall import answer

    real_rank = ranking.rank

    def rank_after_a_commit(*args: object, **kwargs: object) -> object:
        other = sqlite3.connect(resolve_paths().index_db)
        with other:
            other.execute("DELETE FROM memories WHERE id = 'pitfalls/deploy'")
        other.close()
        return real_rank(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pick, "rank", rank_after_a_commit)
    with DaemonLock(resolve_paths().lock_file):  # no reconcile first: the daemon's job
        answered = answer(["pnpm"], os.environ, str(home.repo))
    assert answered is not None and "pitfalls/deploy" in answered[1]
    check = sqlite3.connect(resolve_paths().index_db)
    try:  # the commit did land: the answer read the version before it
        assert check.execute("SELECT count(*) FROM memories WHERE id = 'pitfalls/deploy'").fetchone() == (0,)
    finally:
        check.close()
