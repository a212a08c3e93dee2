from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path

import pytest

from memoryd.compile.listing import ScanCache
from memoryd.compile.writer import compile_root
from memoryd.config.sections import Config, RootConfig
from memoryd.roots import ROOT_TEMPLATE
from tests.helpers import run_cli

CONFIG = Config()
DAMAGED = b"# Mine\n\n<!-- memoryd:begin rules -->\nhalf a block\n"
HUMAN = (
    "\ufeff# Mine  \r\n"  # BOM, trailing blanks, CRLF: all kept
    "<!-- memoryd:begin routing -->\r\n| old | `facts/a` |\r\n<!-- memoryd:end routing -->\r\n"
    "between \u4e2d\u6587\r\n\r\n"
    "<!-- memoryd:begin rules -->\r\n<!-- memoryd:end rules -->\r\n"
    "after\r\n<!-- memoryd:begin directory -->\r\n<!-- memoryd:end directory -->"
)


def mem(kind: str, summary: str, *load_when: str) -> str:
    triggers = ", ".join(load_when)
    return f"---\nkind: {kind}\nsummary: {summary}\nload_when: [{triggers}]\n---\nbody\n"


ROOTS: dict[str, dict[str, str | bytes]] = {
    "empty": {"ROOT.md": ROOT_TEMPLATE},
    "one-folder": {"rules/pnpm.md": mem("rule", "Use pnpm", "npm")},
    "nested": {
        "pitfalls/sqlite/cjk.md": mem("pitfall", "CJK tokens", "FTS5"),
        "pitfalls/sqlite/deep/wal.md": mem("pitfall", "WAL needs shm", "WAL"),
        "top.md": "no frontmatter\n",
    },
    "chinese": {
        "decisions/部署.md": mem("decision", "部署脚本用 pnpm 而不是 npm", "部署", "依赖"),
        "facts/接口.md": mem("fact", "接口返回 UTF-8", "接口"),
    },
    "damaged-markers": {"ROOT.md": DAMAGED, "facts/a.md": mem("fact", "A", "a")},
    "human-text": {"ROOT.md": HUMAN.encode(), "facts/a.md": mem("fact", "A", "a")},
}


def build(root: Path, files: Mapping[str, str | bytes]) -> None:
    root.mkdir(parents=True)
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())


def snapshot(root: Path) -> dict[str, tuple[bytes, int, int]]:
    return {
        p.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_ino, p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*.md"))
    }


def generated(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*.md"))
        if p.name in ("ROOT.md", "index.md")
    }


@pytest.mark.parametrize("name", sorted(ROOTS))
def test_a_second_compile_writes_nothing(name: str, tmp_path: Path) -> None:
    root = tmp_path / name
    build(root, ROOTS[name])
    first = compile_root(RootConfig(root), CONFIG, cache=ScanCache())
    before = snapshot(root)
    second = compile_root(RootConfig(root), CONFIG, cache=ScanCache())
    assert second.written == [] and second.removed == []
    assert snapshot(root) == before  # same bytes, same inodes, same mtimes: nothing written
    check = compile_root(RootConfig(root), CONFIG, check=True)
    assert check.stale == []
    folders = {str(Path(rel).parent) for rel in ROOTS[name] if rel != "ROOT.md"}
    indexes = {str(p.parent.relative_to(root)) for p in root.rglob("index.md")}
    assert indexes == folders
    assert {p.name for p in first.written} <= {"ROOT.md", "index.md"}


@pytest.mark.parametrize("name", sorted(ROOTS))
def test_two_separately_built_copies_compile_to_identical_bytes(name: str, tmp_path: Path) -> None:
    one, two = tmp_path / "device-one" / "memory", tmp_path / "elsewhere" / "copy"
    build(one, ROOTS[name])
    build(two, dict(reversed(list(ROOTS[name].items()))))  # other creation order, other times
    compile_root(RootConfig(one), Config(device="laptop"), cache=ScanCache())
    compile_root(RootConfig(two, scope="project"), Config(device="desktop"), cache=ScanCache())
    assert generated(one) == generated(two)
    assert generated(one)


def test_an_empty_root_gets_the_template_and_the_blocks(tmp_path: Path) -> None:
    root = tmp_path / "m"
    build(root, {"ROOT.md": ROOT_TEMPLATE})  # as memoryd init writes it
    report = compile_root(RootConfig(root), CONFIG)
    assert report.written == [root / "ROOT.md"]
    text = (root / "ROOT.md").read_text()
    assert text.startswith(ROOT_TEMPLATE + "\n<!-- memoryd:begin rules")
    assert "| decisions/ | 0 |" in text


def test_a_root_without_memories_gets_no_root_md_it_does_not_have(tmp_path: Path) -> None:
    """What git leaves of a project's .memory/ after switching to a branch without it
    (its empty folders) got an untracked ROOT.md, and git refused to switch back."""
    root = tmp_path / "m"
    build(root, {})
    (root / "rules").mkdir()
    assert compile_root(RootConfig(root), CONFIG, check=True).stale == []
    assert compile_root(RootConfig(root), CONFIG).written == []
    assert not (root / "ROOT.md").exists()
    (root / "rules" / "pnpm.md").write_text(mem("rule", "Use pnpm", "npm"))
    written = compile_root(RootConfig(root), CONFIG).written
    assert sorted(written) == [root / "ROOT.md", root / "rules" / "index.md"]


def test_damaged_markers_are_a_problem_and_the_file_is_left_alone(tmp_path: Path) -> None:
    root = tmp_path / "m"
    build(root, ROOTS["damaged-markers"])
    report = compile_root(RootConfig(root), CONFIG)
    assert (root / "ROOT.md").read_bytes() == DAMAGED
    assert report.written == [root / "facts" / "index.md"]
    [problem] = report.problems
    assert problem.path == root / "ROOT.md"
    assert problem.message == "damaged markers, line 3: block 'rules' begins but never ends"
    assert "every begin needs its end" in problem.fix


def test_human_text_before_between_and_after_blocks_survives(tmp_path: Path) -> None:
    root = tmp_path / "m"
    build(root, ROOTS["human-text"])
    compile_root(RootConfig(root), CONFIG)
    data = (root / "ROOT.md").read_bytes()
    assert data.startswith("\ufeff# Mine  \r\n<!-- memoryd:begin routing".encode())
    text = data.decode()
    assert "-->\r\nbetween \u4e2d\u6587\r\n\r\n<!-- memoryd:begin rules" in text
    assert "<!-- memoryd:end rules -->\r\nafter\r\n<!-- memoryd:begin directory" in text
    assert text.endswith("<!-- memoryd:end directory -->")  # no newline was there, none added
    assert "\n" not in text.replace("\r\n", "")
    assert "| [facts/](facts/index.md) | 1 |" in text


def test_a_change_recompiles_only_its_folder_and_root_md_when_it_shows(tmp_path: Path) -> None:
    root = tmp_path / "m"
    build(root, {**ROOTS["nested"], **ROOTS["chinese"]})
    past = 1_700_000_000
    for path in root.rglob("*.md"):
        os.utime(path, (past, past))
    cache = ScanCache()
    compile_root(RootConfig(root), CONFIG, cache=cache)
    cache.parsed = 0
    changed = root / "pitfalls/sqlite/cjk.md"
    changed.write_text(mem("pitfall", "CJK tokens, now bigrams", "FTS5"))
    report = compile_root(RootConfig(root), CONFIG, [changed], cache=cache)
    assert report.written == [root / "pitfalls/sqlite/index.md"]
    assert cache.parsed == 1  # the other memories came from the cache
    changed.write_text(mem("pitfall", "CJK tokens, now bigrams", "FTS5", "bigram"))
    report = compile_root(RootConfig(root), CONFIG, [changed], cache=cache)
    assert report.written == [root / "ROOT.md"]  # the index shows no triggers: unchanged


def test_a_folder_that_loses_its_last_memory_loses_its_index(tmp_path: Path) -> None:
    root = tmp_path / "m"
    build(root, ROOTS["nested"])
    compile_root(RootConfig(root), CONFIG)
    gone = root / "pitfalls/sqlite/deep/wal.md"
    gone.unlink()
    report = compile_root(RootConfig(root), CONFIG, [gone])
    assert report.removed == [root / "pitfalls/sqlite/deep/index.md"]
    assert report.written == [root / "ROOT.md"]
    assert not (root / "pitfalls/sqlite/deep/index.md").exists()
    shutil.rmtree(root / "pitfalls")  # a whole folder tree at once
    report = compile_root(RootConfig(root), CONFIG, [root / "pitfalls"])
    assert report.written == [root / "ROOT.md"]
    assert "pitfalls/sqlite/" not in (root / "ROOT.md").read_text()


def test_a_team_proposal_is_listed_in_no_compiled_file_until_accepted(tmp_path: Path) -> None:
    """The compiled files are committed: another device's index.md and ROOT.md listed what
    its index leaves out (the incremental model kept proposals; issue 42's simulation)."""
    root = tmp_path / "m"
    proposal = mem("rule-proposal", "Never push on Fridays", "push").replace(
        "---\nbody", "status: proposed\ndevice: ann-laptop\n---\nbody"
    )
    build(root, {"facts/known.md": mem("fact", "Known", "k"), "facts/new.md": proposal,
                 "rules/fri.md": proposal.replace("rule-proposal", "rule")})  # fmt: skip
    cache = ScanCache()
    for changed in (None, [root / "facts/new.md"]):  # a full compile, then the daemon's
        compile_root(RootConfig(root), CONFIG, changed, cache=cache)
        compiled = b"\n".join(generated(root).values()).decode()
        assert "facts/known" in compiled
        assert "facts/new" not in compiled and "Fridays" not in compiled, compiled
        assert not (root / "rules/index.md").exists()
    accepted = root / "rules/fri.md"
    accepted.write_text(accepted.read_text().replace("status: proposed\n", ""))
    compile_root(RootConfig(root), CONFIG, [accepted], cache=cache)
    assert "Never push on Fridays" in (root / "ROOT.md").read_text()
    assert "fri.md" in (root / "rules/index.md").read_text()


def test_an_index_md_memoryd_did_not_write_is_never_deleted(tmp_path: Path) -> None:
    root = tmp_path / "m"
    build(root, {"notes/index.md": "my own notes\n"})
    report = compile_root(RootConfig(root), CONFIG)
    assert (root / "notes/index.md").read_text() == "my own notes\n"
    [problem] = report.problems
    assert problem.path == root / "notes/index.md"
    assert (
        problem.message == "this folder holds no memory and its index.md was not written by memoryd"
    )


def test_an_index_md_a_person_wrote_is_never_replaced(tmp_path: Path) -> None:
    """memoryd would only delete an index.md it wrote, but replaced one a person wrote (a
    folder's own overview, Obsidian's or MkDocs' index.md) as soon as a memory was there."""
    root = tmp_path / "m"
    mine = b"# My notes\r\n\r\nThe overview I keep by hand.\r\n"
    build(
        root,
        {"notes/index.md": mine, "notes/a.md": mem("fact", "A"), "facts/b.md": mem("fact", "B")},
    )
    for check in (True, False):
        report = compile_root(RootConfig(root), CONFIG, check=check)
        assert (root / "notes/index.md").read_bytes() == mine
        assert root / "notes/index.md" not in report.written + report.stale
        assert [(p.path, p.message) for p in report.problems] == [
            (
                root / "notes/index.md",
                "index.md was not written by memoryd, so it is left as it is and this "
                "folder's memories get no compiled index",
            )
        ]
    assert "- [b.md](b.md) `facts/b`: B" in (root / "facts/index.md").read_text()


def test_an_unreadable_memory_leaves_its_folder_and_root_md_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "m"
    build(
        root,
        {
            "facts/a.md": mem("fact", "A"),
            "decisions/b.md": mem("decision", "B"),
            "facts/broken.md": mem("fact", "Broken"),
        },
    )

    def refuse(file: str, *args: object, **kwargs: object) -> object:
        if str(file).endswith("broken.md"):  # chmod 000 stops no one running as root
            raise PermissionError(13, "Permission denied", file)
        return open(file, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr("memoryd.compile.listing.open", refuse, raising=False)
    report = compile_root(RootConfig(root), CONFIG)
    assert report.written == [root / "decisions/index.md"]
    assert not (root / "facts/index.md").exists()
    [problem] = report.problems
    assert problem.path == root / "facts/broken.md"
    assert problem.message.startswith("cannot be read (Permission denied)")


def test_a_link_to_no_file_is_no_memory_and_leaves_compile_alone(tmp_path: Path) -> None:
    """A dangling link (or one that loops) holds no memory to keep a listing for."""
    root = tmp_path / "m"
    build(root, {"facts/a.md": mem("fact", "A")})
    (root / "facts/broken.md").symlink_to(root / "facts/missing-target.md")
    report = compile_root(RootConfig(root), CONFIG)
    assert report.problems == []
    assert "broken" not in (root / "facts/index.md").read_text(encoding="utf-8")


def test_other_layouts_and_missing_roots_are_not_compiled(tmp_path: Path) -> None:
    root = tmp_path / "m"
    build(root, ROOTS["one-folder"])
    assert compile_root(RootConfig(root, layout="claude"), CONFIG).written == []
    assert compile_root(RootConfig(tmp_path / "nowhere"), CONFIG).written == []
    assert not (root / "ROOT.md").exists()


def test_init_compiles_a_fresh_root(isolated_home: Path) -> None:
    assert run_cli("init").returncode == 0
    text = (isolated_home / "memory" / "ROOT.md").read_text()
    assert text.startswith(ROOT_TEMPLATE + "\n<!-- memoryd:begin rules")
    done = run_cli("compile", "--check")
    assert (done.returncode, done.stdout) == (0, "every compiled file is up to date\n")


def test_compile_check_names_each_stale_file_and_writes_nothing(isolated_home: Path) -> None:
    root = isolated_home / "memory"
    assert run_cli("init").returncode == 0
    (root / "facts2").mkdir()
    (root / "facts2/a.md").write_text(mem("fact", "A", "a"))
    before = snapshot(root)
    done = run_cli("compile", "--check")
    assert done.returncode == 1
    assert done.stdout == f"stale: {root / 'facts2/index.md'}\nstale: {root / 'ROOT.md'}\n"
    assert "2 compiled file(s) stale: run 'memoryd compile' to refresh them" in done.stderr
    assert snapshot(root) == before
    done = run_cli("compile", "--json")
    assert done.returncode == 0, done.stderr
    [report] = json.loads(done.stdout)["roots"]
    assert report["written"] == [str(root / "facts2/index.md"), str(root / "ROOT.md")]
    assert run_cli("compile", "--check").returncode == 0


def test_compile_reports_damaged_markers_with_exit_1(isolated_home: Path) -> None:
    root = isolated_home / "memory"
    build(root, {"ROOT.md": DAMAGED})
    done = run_cli("compile")
    assert done.returncode == 1
    assert done.stdout.startswith(
        f"{root / 'ROOT.md'}: damaged markers, line 3: block 'rules' begins but never ends\n"
        "  fix: repair the memoryd marker comments by hand"
    )
    assert (root / "ROOT.md").read_bytes() == DAMAGED


def test_local_only_memories_stay_out_of_compiled_files_that_are_committed(tmp_path: Path) -> None:
    files = {
        "facts/shared.md": mem("fact", "Shared", "both"),
        "facts/mine.md": "---\nkind: rule\nsummary: Local rule\nload_when: [here]\nsync: false\n---\n",
    }
    synced, local = tmp_path / "synced", tmp_path / "local"
    build(synced, files)
    build(local, files)
    compile_root(RootConfig(synced, scope="global"), CONFIG)  # commits: what git carries
    compile_root(RootConfig(local, scope="project"), CONFIG)  # never commits
    assert "mine.md" not in (synced / "facts/index.md").read_text()
    assert "Local rule" not in (synced / "ROOT.md").read_text()
    assert "| here |" not in (synced / "ROOT.md").read_text()
    assert "mine.md" in (local / "facts/index.md").read_text()
    assert "- Local rule (`facts/mine`)" in (local / "ROOT.md").read_text()


@pytest.mark.parametrize("name", sorted(ROOTS))
def test_the_daemons_slim_cache_compiles_the_same_bytes(name: str, tmp_path: Path) -> None:
    full, slim = tmp_path / "full", tmp_path / "slim"
    files = {**ROOTS[name], "facts/mine.md": "---\nsummary: here only\nsync: false\n---\n"}
    build(full, files)
    build(slim, files)
    for _ in range(2):  # the second compile reads the listing back from each cache
        compile_root(RootConfig(full), CONFIG, cache=ScanCache())
        compile_root(RootConfig(slim), CONFIG, cache=ScanCache(slim=True))
        assert generated(slim) == generated(full)
    assert not any(b"here only" in data for data in generated(slim).values())  # sync: false
