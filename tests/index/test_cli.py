from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from memoryd.index.hits import bump_hits, read_hits
from tests.helpers import git, run_cli
from tests.index.conftest import write_memory


@pytest.fixture
def home(isolated_home: Path) -> Path:
    assert run_cli("init").returncode == 0
    return isolated_home / "memory"


def make_project(tmp_path: Path, name: str, body: str) -> Path:
    repo = tmp_path / name
    repo.mkdir()
    git(repo, "init", "-q")
    write_memory(repo / ".memory", "facts/where.md", body)
    return repo


def test_recall_searches_global_and_this_project_only(tmp_path: Path, home: Path) -> None:
    write_memory(home, "pitfalls/deploy.md", "部署脚本用 pnpm 而不是 npm", kind="pitfall")
    mine = make_project(tmp_path, "mine", "部署 in mine")
    make_project(tmp_path, "other", "部署 in other")
    (mine / "src").mkdir()
    done = run_cli("recall", "部署", "--json", cwd=mine / "src")
    assert done.returncode == 0, done.stderr
    hits = json.loads(done.stdout)
    assert {h["path"] for h in hits} == {
        str(home / "pitfalls/deploy.md"),
        str(mine.resolve() / ".memory/facts/where.md"),
    }
    assert hits[0]["scope"] == "project"  # the project prior wins a tie
    assert set(hits[0]) >= {"id", "path", "root", "scope", "kind", "summary", "score", "terms",
                            "snippet", "body"}  # fmt: skip
    other = run_cli("recall", "部署", "--json", "--project", str(tmp_path / "other"), cwd=tmp_path)
    assert "in other" in other.stdout and "in mine" not in other.stdout


def test_recall_text_output_and_empty_result(home: Path, tmp_path: Path) -> None:
    write_memory(home, "pitfalls/deploy.md", "The LockFile broke", summary="lockfile trouble")
    done = run_cli("recall", "lockfile", cwd=tmp_path)
    assert done.returncode == 0
    assert "1. pitfalls/deploy" in done.stdout and "«LockFile»" in done.stdout
    assert "matched: lockfile×" in done.stdout
    empty = run_cli("recall", "zeppelin", "--json", cwd=tmp_path)
    assert (empty.returncode, json.loads(empty.stdout)) == (0, [])
    assert "no memory matches 'zeppelin'" in empty.stderr
    plain = run_cli("recall", "zeppelin", cwd=tmp_path)
    assert (plain.returncode, plain.stdout) == (0, "")


def test_recall_shows_a_hit_without_a_body_once_and_says_why(home: Path, tmp_path: Path) -> None:
    """A file over search.max_file_bytes is indexed by its frontmatter alone: its snippet
    is its summary, and the text showed the summary twice, the second time marked. The
    text then said nothing of the body, though the MCP answer and ``memoryd context`` say
    it was not loaded: an agent took the summary for the whole memory."""
    with open(home.parent / "config.yaml", "a") as config:
        config.write("search:\n  max_file_bytes: 1000\n")
    big = write_memory(home, "facts/big.md", "zeppelin " * 200, kind="fact", summary="zeppelin manual")
    small = write_memory(home, "facts/small.md", "the zeppelin flies", summary="small zeppelin")
    size = big.stat().st_size
    note = (
        f"   [… body not loaded: {big} is {size} bytes, over the 1000-byte limit "
        "(search.max_file_bytes), so only its frontmatter is searched: read the file, or split "
        "it into smaller memories]"
    )
    for _ in range(2):  # the second may take the lean path: the same bytes
        done = run_cli("recall", "zeppelin", cwd=tmp_path, process=True)
        assert done.returncode == 0, done.stderr
        shown = [block.splitlines()[1:] for block in done.stdout.split("\n\n")]
        assert sorted(shown) == [
            ["   small zeppelin", "   the «zeppelin» flies", "   matched: zeppelin×2", f"   {small}"],
            ["   zeppelin manual", note, "   matched: zeppelin×1", f"   {big}"],
        ]
        done = run_cli("recall", "zeppelin", "--json", cwd=tmp_path, process=True)
        assert done.returncode == 0, done.stderr
        hits = {hit["id"]: hit for hit in json.loads(done.stdout)}
        assert (hits["facts/big"]["body"], hits["facts/big"]["oversized"]) == ("", True)
        assert "oversized" not in hits["facts/small"]


def test_recall_bad_limit_is_a_usage_error(home: Path, tmp_path: Path) -> None:
    done = run_cli("recall", "x", "--limit", "0", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == (
        "memoryd: error: --limit must be at least 1\n  hint: for example --limit 5\n"
    )


@pytest.mark.parametrize("query", ["", "   ", "?!", "  ... -- "])
def test_a_query_without_words_is_a_usage_error(home: Path, tmp_path: Path, query: str) -> None:
    done = run_cli("recall", query, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"memoryd: error: the query {query!r} has no word to search for\n"
        "  hint: give one or more words, e.g. memoryd recall sqlite lockfile\n"
    )


def test_project_outside_a_repository_is_refused(home: Path, tmp_path: Path) -> None:
    done = run_cli("recall", "x", "--project", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr == (
        f"memoryd: error: {tmp_path} is not inside a git repository\n"
        "  hint: pass --project a folder inside the project's repository\n"
    )


def test_no_hit_here_names_the_other_projects_that_match(home: Path, tmp_path: Path) -> None:
    """Nothing of this project matches, but a registered project's root does: the user is
    told where, not sent rewording a query that is fine; nothing of it is shown."""
    mine, other, third = (make_project(tmp_path, n, f"{n} notes") for n in ("mine", "other", "third"))
    for repo in (mine, other, third):
        assert run_cli("init", "--project", cwd=repo).returncode == 0
    write_memory(other / ".memory", "facts/db.md", "other uses postgres 16", kind="fact")
    roots = f"{home}, {mine.resolve()}/.memory"
    done = run_cli("recall", "postgres", cwd=mine)
    assert (done.returncode, done.stdout) == (0, "")
    assert done.stderr == (
        f"no memory matches 'postgres' (searched {roots}), but another project's root does "
        f"({other.resolve()}/.memory): search it with --project {other.resolve()}\n"
    )
    write_memory(third / ".memory", "facts/db.md", "third uses postgres 15", kind="fact")
    both = run_cli("recall", "postgres", "--json", cwd=mine)
    assert (both.returncode, json.loads(both.stdout)) == (0, [])
    assert both.stderr == (
        f"no memory matches 'postgres' (searched {roots}), but 2 other projects' roots do "
        f"({other.resolve()}/.memory, {third.resolve()}/.memory): search one with "
        f"--project {other.resolve()}\n"
    )
    for extra, searched in ((["--kind", "rule"], roots), (["--scope", "global"], str(home))):
        plain = run_cli("recall", "postgres", *extra, cwd=mine)  # what those would not find
        assert plain.stderr == (
            f"no memory matches 'postgres' (searched {searched}); "
            "try fewer or rarer words, or another language\n"
        )
    there = run_cli("recall", "postgres", "--project", str(other), cwd=mine)
    assert "other uses «postgres» 16" in there.stdout


def test_cli_sees_edits_without_a_daemon(home: Path, tmp_path: Path) -> None:
    path = write_memory(home, "facts/a.md", "alpha")
    assert "facts/a" in run_cli("recall", "alpha", cwd=tmp_path).stdout
    write_memory(home, "facts/a.md", "omega")
    assert run_cli("recall", "alpha", cwd=tmp_path).stdout == ""
    path.unlink()
    assert run_cli("recall", "omega", cwd=tmp_path).stdout == ""


def test_reindex_and_full_rebuild(home: Path, tmp_path: Path) -> None:
    write_memory(home, "facts/a.md", "alpha")
    first = json.loads(run_cli("reindex", "--json", cwd=tmp_path).stdout)
    # facts/a, ROOT.md, and the facts/index.md the reindex compiled (counted once each)
    assert len(first["added"]) == 3 and first["memories"] == 3
    assert first["changed"] == []
    again = json.loads(run_cli("reindex", "--json", cwd=tmp_path).stdout)
    assert again["added"] == [] and again["memories"] == 3 and again["compiled"] == []
    full = run_cli("reindex", "--full", cwd=tmp_path)
    assert full.returncode == 0
    assert full.stdout.startswith("indexed 3 memories in ")
    assert full.stdout.endswith("3 added, 0 changed, 0 removed\n")  # nothing recompiled


def test_reindex_recompiles_stale_root_md_and_index_md_once(home: Path, tmp_path: Path) -> None:
    """The index was brought up to date, but ROOT.md still listed last week's rules and a
    folder had no index.md: only 'memoryd compile' (or a recall after a change) fixed them."""
    assert run_cli("reindex", cwd=tmp_path).returncode == 0  # the index is up to date
    write_memory(home, "rules/r.md", "always pnpm", kind="rule", summary="use pnpm")
    assert run_cli("reindex", cwd=tmp_path).returncode == 0  # indexed and compiled
    assert "use pnpm" in (home / "ROOT.md").read_text()
    (home / "ROOT.md").write_text((home / "ROOT.md").read_text().replace("use pnpm", "old"))
    (home / "rules/index.md").unlink()
    for args in (["reindex"], ["reindex", "--full"]):
        done = run_cli(*args, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines()[1:] == [
            f"  recompiled: {home / 'ROOT.md'}",
            f"  recompiled: {home / 'rules/index.md'}",
        ]
        assert "use pnpm" in (home / "ROOT.md").read_text()
        assert (home / "rules/index.md").is_file()
        before = {p: p.read_bytes() for p in home.rglob("*.md")}
        again = run_cli(*args, "--json", cwd=tmp_path)
        assert json.loads(again.stdout)["compiled"] == []
        assert {p: p.read_bytes() for p in home.rglob("*.md")} == before  # a second run: same
        assert run_cli("inspect", cwd=tmp_path).returncode == 0
        (home / "ROOT.md").write_text((home / "ROOT.md").read_text().replace("use pnpm", "old"))
        (home / "rules/index.md").unlink()


def test_reindex_sorts_its_paths_only_for_json(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The text names only the counts: the sorted lists of every path are made for --json."""
    from memoryd.index.reconcile import ReconcileReport

    write_memory(home, "facts/a.md", "alpha")
    real = ReconcileReport.to_json

    def refused(self: ReconcileReport) -> dict[str, object]:
        raise AssertionError("the paths were sorted for the text")

    monkeypatch.setattr(ReconcileReport, "to_json", refused)
    done = run_cli("reindex", "--full", cwd=tmp_path)
    assert done.returncode == 0 and "3 added, 0 changed, 0 removed" in done.stdout, done.stderr
    monkeypatch.setattr(ReconcileReport, "to_json", real)
    data = json.loads(run_cli("reindex", "--full", "--json", cwd=tmp_path).stdout)
    assert data["full"] is True and data["memories"] == 3
    assert data["added"] == [str(home / p) for p in ("ROOT.md", "facts/a.md", "facts/index.md")]


def test_reindex_collects_garbage_rarely_while_it_works_and_as_before_after(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gc

    from memoryd.commands import reindex

    write_memory(home, "facts/a.md", "alpha")
    seen: list[tuple[int, int, int]] = []  # the collector's thresholds as the index opens
    from memoryd import index

    opened = index.open_index

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(gc.get_threshold())
        return opened(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(index, "open_index", spy)
    before = gc.get_threshold()
    done = run_cli("reindex", "--full", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert seen == [(reindex.REINDEX_GC_THRESHOLD, *before[1:])]
    assert gc.get_threshold() == before


def test_a_full_reindex_reads_and_parses_each_memory_once_and_compiles_the_same_bytes(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The compile after the index takes the frontmatter the index just parsed: it read
    and parsed every file a second time (a third of a cold reindex of 300k). A file
    changed too recently to trust its fingerprint is read again, and the compiled bytes
    are those of a compile that reads every file itself."""
    import collections

    from memoryd.compile import listing
    from memoryd.compile.listing import ScanCache
    from memoryd.compile.writer import compile_root
    from memoryd.config.loader import load_config
    from memoryd.index import loader
    from memoryd.paths import resolve_paths

    kinds = ["fact", "rule", "decision", "pitfall", "preference"]
    for i in range(300):
        meta: dict[str, object] = {"kind": kinds[i % 5], "summary": f"memory {i} 第{i}条"}
        if i % 7 == 0:
            meta["load_when"] = [f"topic {i % 4}", "deploy"]
        if i % 50 == 1:
            meta["superseded_by"] = f"{kinds[(i + 1) % 5]}s/m{i + 1}"
        if i == 33:
            meta["sync"] = False
        write_memory(home, f"{kinds[i % 5]}s/m{i}.md", f"body {i}", **meta)
    past = time.time() - 86_400  # settled: write_memory's day before 2027 is to come here
    for path in home.rglob("*.md"):
        os.utime(path, (past, past))
    fresh = home / "facts/fresh.md"  # just written: its fingerprint is not trusted yet
    fresh.write_text("---\nkind: fact\nsummary: fresh one\n---\nnew\n", encoding="utf-8")
    (home / "facts/image.md").write_bytes(b"\x89PNG\x00\x00binary")
    parsed: collections.Counter[bytes] = collections.Counter()
    for module in (loader, listing):
        real = module.parse

        def counting(raw: bytes, *args: object, real: object = real, **kw: object) -> object:
            parsed[raw] += 1
            return real(raw, *args, **kw)  # type: ignore[operator]

        monkeypatch.setattr(module, "parse", counting)
    done = run_cli("reindex", "--full", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    memories = [p for p in home.rglob("*.md") if p.name not in ("ROOT.md", "index.md")]
    times = {p.relative_to(home).as_posix(): parsed[p.read_bytes()] for p in memories}
    assert times.pop("facts/fresh.md") == 2
    assert times.pop("facts/image.md") == 1  # read by the index; the compile reads it itself
    assert len(times) == 300 and set(times.values()) == {1}, collections.Counter(times.values())
    config = load_config(resolve_paths())
    for root in config.roots:  # every file read by the compile itself: the same bytes
        cold = compile_root(root, config, check=True, cache=ScanCache(slim=True))
        assert cold.stale == [] and cold.problems == []
    assert "topic 3" in (home / "ROOT.md").read_text()
    assert "memory 32 " in (home / "decisions/index.md").read_text()
    # kept for the next command, as a compile that parsed them keeps them (the fresh file
    # is not: its fingerprint is not to be trusted)
    kept = ScanCache(slim=True, folder=resolve_paths().cache_dir / "listings").kept(home)
    assert kept is not None and sorted(kept) == sorted(times)


def test_a_full_reindex_keeps_no_object_per_memory_while_it_indexes_or_after(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the index pass parsed for the compile was an object per memory, held while
    the index's batches were written, and the compile's listing after it (444 MB at 300k
    memories, the floor 185, issue 39): both are packed as they come. A file removed or
    edited between the index pass and the compile is what the compile finds, and the
    bytes are those of a compile that reads every file itself."""
    import gc

    from memoryd.compile import listing, writer
    from memoryd.compile.blocks import Entry
    from memoryd.compile.listing import ScanCache, Scanned
    from memoryd.config.loader import load_config
    from memoryd.paths import resolve_paths

    def alive() -> int:
        gc.collect()
        return sum(type(o) in (Entry, Scanned) for o in gc.get_objects())

    kinds = ["fact", "rule", "decision", "pitfall", "preference"]
    for i in range(400):
        write_memory(home, f"{kinds[i % 5]}s/m{i}.md", f"body {i}", kind=kinds[i % 5],
                     summary=f"memory {i}", load_when=[f"topic {i % 3}"])  # fmt: skip
    monkeypatch.setattr(listing, "PACK_EVERY", 16)  # packed many times over, as at 300k
    gone, edited = home / "facts/m5.md", home / "rules/m6.md"
    counts: list[int] = []
    real = writer.compile_root

    def compile_root(*args: Any, **kw: Any) -> Any:
        counts.append(alive())  # the index pass done: what it parsed for the compile held
        if gone.exists():
            gone.unlink()
            edited.write_text(edited.read_text().replace("memory 6", "memory six"))
        return real(*args, **kw)

    monkeypatch.setattr(writer, "compile_root", compile_root)
    before = alive()
    done = run_cli("reindex", "--full", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    counts.append(alive())  # the compile's listing and model, kept for another compile
    assert max(counts) - before < 400 // 4, (before, counts)
    assert "memory six" in (home / "rules/index.md").read_text()
    assert "m5.md" not in (home / "facts/index.md").read_text()
    config = load_config(resolve_paths())
    for root in config.roots:  # every file read by the compile itself: the same bytes
        cold = real(root, config, check=True, cache=ScanCache(slim=True))
        assert cold.stale == [] and cold.problems == []


IMPORT_COLLECTIONS = """
import gc, sys
during = []
def watch(phase, info):
    if phase != "start":
        return
    try:
        frame = sys._getframe(1)
    except ValueError:  # collected with no Python frame below the callback
        return
    while frame is not None:  # the innermost of memoryd's modules being imported, if any
        name = frame.f_globals.get("__name__", "")
        if frame.f_code.co_name == "<module>" and name.startswith("memoryd"):
            during.append(name)
            return
        frame = frame.f_back
gc.callbacks.append(watch)
sys.argv = ["memoryd", *sys.argv[1:]]
from memoryd.entry import main
code = main()
sys.stderr.write("collected while importing: " + " ".join(during) + "\\n")
raise SystemExit(code)
"""


def test_reindex_collects_no_garbage_while_it_imports_its_modules(
    home: Path, tmp_path: Path
) -> None:
    """Importing memoryd's modules makes only long-lived objects (functions, classes,
    compiled patterns): the console script imports the CLI with the collector off, and
    reindex imports the index's modules while it collects rarely. A collection there
    walked every object made so far for nothing (27 of them, 3 ms of every command)."""
    write_memory(home, "facts/a.md", "alpha")
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_COLLECTIONS, "reindex", "--full"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("indexed 3 memories")
    assert done.stderr.splitlines()[-1] == "collected while importing: "


BUMPER = """
import sys
from pathlib import Path
from memoryd.index.hits import bump_hits
root = Path(sys.argv[1])
for _ in range(int(sys.argv[2])):
    bump_hits(root, ["facts/a", "facts/b"])
"""


def test_two_processes_bumping_at_once_lose_no_count(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    bump_hits(root, ["facts/a"])
    procs = [subprocess.Popen([sys.executable, "-c", BUMPER, str(root), "60"]) for _ in range(2)]
    for proc in procs:
        assert proc.wait(timeout=60) == 0
    assert read_hits(root) == {"facts/a": 121, "facts/b": 120}
    assert [p.name for p in root.iterdir()] == [".state.json"]


def test_two_cli_recalls_at_once_lose_no_count(home: Path, tmp_path: Path) -> None:
    write_memory(home, "facts/a.md", "alpha")
    assert run_cli("reindex", cwd=tmp_path).returncode == 0
    procs = [
        subprocess.Popen([sys.executable, "-m", "memoryd", "recall", "alpha"], cwd=tmp_path,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for _ in range(4)
    ]  # fmt: skip
    for proc in procs:
        assert proc.wait(timeout=60) == 0, proc.stderr.read() if proc.stderr else ""
    assert read_hits(home) == {"facts/a": 4}


def test_recall_without_a_daemon_recompiles_what_a_hand_edit_changed(
    home: Path, tmp_path: Path
) -> None:
    write_memory(home, "pitfalls/deploy.md", "pnpm only", summary="use pnpm")
    assert run_cli("recall", "pnpm", cwd=tmp_path).returncode == 0
    index = home / "pitfalls" / "index.md"
    assert "use pnpm" in index.read_text()
    write_memory(home, "pitfalls/deploy.md", "pnpm only", summary="use pnpm, never npm")
    assert run_cli("recall", "pnpm", cwd=tmp_path).returncode == 0
    # what the daemon would have done: the folder's index.md follows the memory at once,
    # so a later `memoryd context` (which sees nothing left to reconcile) is not stale
    assert "use pnpm, never npm" in index.read_text()
    context = run_cli("context", "pnpm", cwd=tmp_path)
    assert context.returncode == 0 and "use pnpm, never npm" in context.stdout


def test_recall_never_returns_compiled_files(home: Path, tmp_path: Path) -> None:
    write_memory(
        home, "pitfalls/deploy.md", "pnpm only", summary="use pnpm, never npm", load_when=["pnpm"]
    )
    assert run_cli("compile").returncode == 0
    assert "pnpm" in (home / "ROOT.md").read_text()  # both would match
    assert "use pnpm, never npm" in (home / "pitfalls" / "index.md").read_text()
    done = run_cli("recall", "pnpm", "--json", cwd=tmp_path)
    assert [h["path"] for h in json.loads(done.stdout)] == [str(home / "pitfalls/deploy.md")]


def test_recall_warns_of_a_hit_whose_frontmatter_does_not_parse(home: Path, tmp_path: Path) -> None:
    """Such a memory is found by its text alone (no kind, summary or pin), and only
    'memoryd inspect' said why. The second recall may take the lean path: it must not
    answer without the warning."""
    (home / "facts/hand.md").write_text("---\nkind: fact\nsummary: fix: do X\n---\nwombat\n")
    warning = (
        f"memoryd: warning: {home / 'facts/hand.md'}: malformed YAML on line 3: the value of "
        "'summary' holds ': ' without quotes, which YAML reads as another key; put it in "
        "quotes: summary: \"fix: do X\"; fix the YAML between the '---' lines at the top of "
        "the file\n"
    )
    for _ in range(2):
        done = run_cli("recall", "wombat", cwd=tmp_path, process=True)
        assert done.returncode == 0 and "facts/hand" in done.stdout
        assert done.stderr == warning
    (home / "facts/hand.md").write_text('---\nkind: fact\nsummary: "fix: do X"\n---\nwombat\n')
    assert run_cli("recall", "wombat", cwd=tmp_path, process=True).stderr == ""


def test_reindex_names_a_compiled_file_it_could_not_recompile(home: Path, tmp_path: Path) -> None:
    """A ROOT.md whose markers a hand edit damaged stays stale: the reindex said nothing,
    as if every derived file were fresh."""
    root_md = home / "ROOT.md"
    lines = root_md.read_text().splitlines(keepends=True)
    end = next(i for i, line in enumerate(lines) if line.startswith("<!-- memoryd:end"))
    root_md.write_text("".join(lines[:end] + lines[end + 1 :]))
    write_memory(home, "rules/r.md", "always pnpm", kind="rule", summary="use pnpm")
    compiled = run_cli("compile", cwd=tmp_path)
    assert compiled.returncode == 1
    finding = compiled.stdout.splitlines()[-2:]  # the problem and its fix
    assert finding[0].startswith(f"{root_md}: damaged markers, line ")
    done = run_cli("reindex", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-2:] == [f"  not recompiled: {finding[0]}", f"  {finding[1]}"]
    data = json.loads(run_cli("reindex", "--json", cwd=tmp_path).stdout)
    assert [(p["path"], p["message"]) for p in data["compile_problems"]] == [
        (str(root_md), finding[0].removeprefix(f"{root_md}: "))
    ]
    assert "use pnpm" not in root_md.read_text()  # left as the person left it
