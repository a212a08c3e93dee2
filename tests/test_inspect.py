from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from memoryd.app import App
from memoryd.checks import Context, all_checks, register, run_checks
from memoryd.compile.writer import compile_root
from memoryd.config.sections import Config, RootConfig
from memoryd.findings import Finding
from memoryd.init.plugin import init_global
from memoryd.inspection import inspect
from tests.helpers import git, run_cli

FIX_COMPILE = "run 'memoryd compile' (the daemon does it on its own when it runs)"
EXTRACTION_OFF = (
    "extraction: off: no extract.command is configured, so nothing is extracted "
    "(set extract.command in config.yaml)"
)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def mem(summary: str = "S", **fields: str) -> str:
    extra = "".join(f"{k}: {v}\n" for k, v in fields.items())
    return f"---\nkind: fact\nsummary: {summary}\n{extra}---\nbody\n"


@pytest.fixture
def root(isolated_home: Path) -> Path:
    """A clean, compiled global root with two memories (inspect finds nothing)."""
    app = App()
    init_global(app)
    path = isolated_home / "memory"
    write(path / "facts/a.md", mem("A", load_when="[alpha]"))
    write(path / "decisions/b.md", mem("B"))
    compile_root(app.config.roots[0], app.config)
    return path


def recompile(root: Path) -> None:
    compile_root(RootConfig(root), Config())


def findings(config: str = "") -> list[tuple[str, str, str, str]]:
    app = App()
    if config:
        write(app.paths.config_file, config)
    result = inspect(app)
    home = app.paths.home
    assert home is not None
    return [(f.check, str(f.path.relative_to(home)), f.message, f.fix) for f in result.findings]


def test_a_clean_root_has_no_problems(root: Path) -> None:
    assert findings() == []
    done = run_cli("inspect")
    assert done.returncode == 0, done.stdout
    assert done.stdout.startswith(
        f"{root} (global root)\n  decisions/b  fact  global   hits 0    B\n"
    )
    assert done.stdout.endswith(f"2 memories\nno problems found\n\n{EXTRACTION_OFF}\n")


def test_the_json_listing_has_every_field_and_exit_1_on_problems(root: Path) -> None:
    write(root / "facts/c.md", "---\nkind: fact\npinned: true\nsuperseded_by: facts/a\n---\n")
    write(root / "facts/a.md", mem("A", supersedes="[facts/c]"))
    done = run_cli("inspect", "--json")
    assert done.returncode == 1
    data = json.loads(done.stdout)
    assert data["memories"][-1] == {
        "root": str(root), "scope": "global", "path": "facts/c.md", "id": "facts/c",
        "kind": "fact", "summary": None, "pinned": True, "superseded": True,
        "superseded_by": "facts/a", "hits": 0, "created": None, "updated": None, "type": None,
    }  # fmt: skip
    checks = {p["check"] for p in data["problems"]}
    assert checks == {"compiled.stale", "files.summary"}
    assert all(p["path"] and p["message"] and p["fix"] for p in data["problems"])


def test_a_compile_finding_has_no_empty_check_and_inspect_names_its_check(root: Path) -> None:
    """The compile's findings come from no inspect check: their JSON said "check": "",
    a name that names nothing. inspect reports the same finding under compiled.stale."""
    root_md = root / "ROOT.md"
    text = root_md.read_text()
    root_md.write_text(text[: text.index("<!-- memoryd:end")])  # a block that never ends
    line = text[: text.index("<!-- memoryd:begin rules")].count("\n") + 1
    compiled = run_cli("compile", "--json")
    assert compiled.returncode == 1
    [report] = json.loads(compiled.stdout)["roots"]
    [problem] = report["problems"]
    assert problem == {
        "path": str(root_md),
        "message": f"damaged markers, line {line}: block 'rules' begins but never ends",
        "fix": "repair the memoryd marker comments by hand (every begin needs its end, each "
        "block once) or delete them all to get fresh blocks, then run 'memoryd compile'",
    }
    inspected = json.loads(run_cli("inspect", "--json").stdout)["problems"]
    assert {"check": "compiled.stale", **problem} in inspected


Scenario = Callable[[Path], object]  # what it does to the root; what it returns is unused


def recompiled(change: Callable[[Path], None]) -> Scenario:
    """The scenario that makes ``change`` to the root and then compiles it."""

    def scenario(root: Path) -> None:
        change(root)
        recompile(root)

    return scenario


def _unlisted(root: Path) -> None:
    write(root / "facts/new.md", mem("N"))


def _gone(root: Path) -> None:
    write(root / "facts/extra.md", mem("X"))
    recompile(root)
    (root / "facts/extra.md").unlink()
    write(root / "facts/z.md", mem("Z"))


def _dangling_symlink(root: Path) -> None:
    (root / "facts/link.md").symlink_to("nowhere.md")


def _tracked_state(root: Path) -> None:
    git(root, "init", "-q")
    write(root / ".state.json", "{}")
    git(root, "add", "-f", ".state.json")


SCENARIOS: dict[str, tuple[Scenario, list[tuple[str, str, str, str]]]] = {
    "index.md missing": (
        lambda r: (r / "facts/index.md").unlink(),
        [("compiled.stale", "memory/facts/index.md", "index.md is missing", FIX_COMPILE)],
    ),
    "index.md not listing a file": (
        _unlisted,
        [
            ("compiled.stale", "memory/facts/index.md", "index.md is stale: does not list new.md", FIX_COMPILE),
            ("compiled.stale", "memory/ROOT.md", "ROOT.md's compiled blocks are stale: directory", FIX_COMPILE),
        ],
    ),
    "index.md listing a gone file": (
        _gone,
        [
            ("compiled.stale", "memory/facts/index.md", "index.md is stale: does not list z.md; lists files that are gone: extra.md", FIX_COMPILE),
        ],
    ),
    "index.md left over": (
        lambda r: (r / "decisions/b.md").rename(r / "facts/b.md"),
        [
            ("compiled.stale", "memory/decisions/index.md", "index.md is left over: its folder holds no memory (compiling deletes it)", FIX_COMPILE),
            ("compiled.stale", "memory/facts/index.md", "index.md is stale: does not list b.md", FIX_COMPILE),
            ("compiled.stale", "memory/ROOT.md", "ROOT.md's compiled blocks are stale: directory", FIX_COMPILE),
        ],
    ),
    "ROOT.md missing": (
        lambda r: (r / "ROOT.md").unlink(),
        [("compiled.stale", "memory/ROOT.md", "ROOT.md is missing", FIX_COMPILE)],
    ),
    "ROOT.md routing stale": (
        lambda r: write(r / "facts/a.md", mem("A", load_when="[beta]")),
        [("compiled.stale", "memory/ROOT.md", "ROOT.md's compiled blocks are stale: routing", FIX_COMPILE)],
    ),
    "ROOT.md damaged markers": (
        lambda r: write(r / "ROOT.md", "<!-- memoryd:end rules -->\n"),
        [
            ("compiled.stale", "memory/ROOT.md", "damaged markers, line 1: end of block 'rules' without its begin",
             "repair the memoryd marker comments by hand (every begin needs its end, each block once) or delete them all to get fresh blocks, then run 'memoryd compile'"),
        ],
    ),
    "duplicate ids": (
        recompiled(lambda r: write(r / "decisions/b.md", mem("B", id="facts/a"))),
        [("ids.duplicate", "memory/facts/a.md", "id 'facts/a' is also the id of decisions/b.md",
          "give one of them another id (its 'id:' field, or its file name when it has none)"),
         ("files.malformed", "memory/decisions/b.md", "id 'facts/a' does not match its path (expected 'decisions/b')",
          "set 'id: decisions/b' (the id is the file's path), or remove the 'id:' line")],
    ),
    "supersedes pointing nowhere": (
        recompiled(lambda r: write(r / "facts/a.md", mem("A", load_when="[alpha]", supersedes="facts/x"))),
        [("links.supersedes", "memory/facts/a.md", "supersedes 'facts/x', which no memory in this root has",
          "correct the id in 'supersedes:' or remove it")],
    ),
    "superseded_by pointing nowhere": (
        recompiled(lambda r: write(r / "decisions/b.md", mem("B", superseded_by="decisions/x"))),
        [("links.supersedes", "memory/decisions/b.md", "superseded_by 'decisions/x', which no memory in this root has",
          "correct the id in 'superseded_by:' or remove it")],
    ),
    "supersedes without superseded_by": (
        recompiled(lambda r: write(r / "facts/a.md", mem("A", load_when="[alpha]", supersedes="[decisions/b]"))),
        [("links.supersedes", "memory/decisions/b.md", "'facts/a' supersedes this memory, but its 'superseded_by:' is absent",
          "set 'superseded_by: facts/a' in its frontmatter")],
    ),
    "superseded_by without supersedes": (
        recompiled(lambda r: write(r / "decisions/b.md", mem("B", superseded_by="facts/a"))),
        [("links.supersedes", "memory/facts/a.md", "'decisions/b' says this memory supersedes it, but its 'supersedes:' does not list 'decisions/b'",
          "add decisions/b to 'supersedes:' in its frontmatter")],
    ),
    "malformed frontmatter": (
        recompiled(lambda r: write(r / "facts/a.md", "---\nsummary: [open\n---\n")),
        [("files.malformed", "memory/facts/a.md", "malformed YAML on line 3: did not find expected ',' or ']'",
          "fix the YAML between the '---' lines at the top of the file")],
    ),
    "bad field": (
        recompiled(lambda r: write(r / "facts/a.md", mem("A", load_when="[alpha]", created="1700000000"))),
        [("files.malformed", "memory/facts/a.md", "created looks like epoch seconds (1700000000); write milliseconds (1700000000000)",
          "correct the 'created:' field in the frontmatter")],
    ),
    "key written twice": (
        lambda r: write(r / "facts/a.md",
                        "---\nkind: fact\nsummary: B\nsummary: A\nload_when: [alpha]\n---\nbody\n"),
        [("files.malformed", "memory/facts/a.md",
          "'summary' is written 2 times (lines 3 and 4): YAML keeps only the last",
          "keep one 'summary:' line in the frontmatter (delete the others)")],
    ),
    "dangling link": (
        _dangling_symlink,
        [("files.outside", "memory/facts/link.md",
          "is a link to nowhere.md, which leads to no file (the target is gone, or the "
          "link loops), so it is skipped",
          "delete the link, or point it at a memory file inside the root")],
    ),
    "no summary": (
        recompiled(lambda r: write(r / "decisions/b.md", "---\nkind: decision\n---\nbody\n")),
        [("files.summary", "memory/decisions/b.md", "has no summary, so index.md and recall show '(no summary)'",
          "add a one-line 'summary:' to its frontmatter")],
    ),
    ".state.json missing from .gitignore": (
        lambda r: (r / ".gitignore").write_text("*.tmp\n"),
        [("state.gitignore", "memory/.gitignore", "does not ignore .state.json (the per-device hit counts)",
          "add the line '.state.json' to {home}/memory/.gitignore (memoryd init does it)")],
    ),
    ".state.json tracked by git": (
        _tracked_state,
        [("state.gitignore", "memory/.state.json", "is tracked by git: every recall changes a tracked file and devices conflict on it",
          "git -C {home}/memory rm --cached .state.json, then commit")],
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_each_problem_is_reported_with_its_file_and_fix(
    name: str, root: Path, isolated_home: Path
) -> None:
    scenario, expected = SCENARIOS[name]
    scenario(root)
    want = [(c, p, m, f.format(home=isolated_home)) for c, p, m, f in expected]
    assert sorted(findings()) == sorted(want)


def test_an_unreadable_file_is_reported(
    root: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file indexed while it was readable, then chmod 000: the index keeps its row, and
    inspect said that row was of a file "which is gone" with a reindex fix that changes
    nothing. chmod stops no one running as root (as the tests may): the read is refused."""
    write(root / "facts/locked.md", mem("locked"))

    def refuse(file: str, *args: object, **kwargs: object) -> object:
        if str(file).endswith("locked.md"):
            raise PermissionError(13, "Permission denied", file)
        return open(file, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr("memoryd.compile.listing.open", refuse, raising=False)
    assert findings() == [
        ("files.unreadable", "memory/facts/locked.md", "cannot be read (Permission denied)",
         f"make it readable (chmod u+r {isolated_home}/memory/facts/locked.md) or move it out "
         "of the root"),
    ]  # fmt: skip


def test_an_oversized_file_is_reported(root: Path, isolated_home: Path) -> None:
    write(root / "facts/big.md", mem("big") + "x" * 300)
    recompile(root)
    assert findings("search:\n  max_file_bytes: 200\n") == [
        (
            "files.size",
            "memory/facts/big.md",
            "is 337 bytes, over the 200-byte limit (search.max_file_bytes): "
            "only its frontmatter is searched",
            "split it into smaller memories, or raise search.max_file_bytes in config.yaml",
        )
    ]


def test_a_missing_root_is_reported(root: Path, isolated_home: Path) -> None:
    config = f"roots:\n  - path: {root}\n  - path: {isolated_home}/gone\n    scope: project\n"
    assert findings(config) == [
        (
            "roots.missing",
            "gone",
            "this configured project root does not exist",
            "create it with 'memoryd init' (or 'memoryd init --project DIR'), "
            f"or remove it from {isolated_home}/config.yaml",
        )
    ]


def test_the_cli_prints_each_problem_with_its_fix(root: Path) -> None:
    (root / "facts/index.md").unlink()
    done = run_cli("inspect")
    assert done.returncode == 1
    assert done.stdout.endswith(
        f"{root}/facts/index.md: index.md is missing\n  fix: {FIX_COMPILE}\n1 problem(s) found\n"
        f"\n{EXTRACTION_OFF}\n"
    )


HAND_WRITTEN = {
    "colon": (
        "---\nkind: fact\nsummary: fix: do X  # see below\n---\nbody\n",
        "malformed YAML on line 3: the value of 'summary' holds ': ' without quotes, which "
        "YAML reads as another key; put it in quotes: summary: \"fix: do X\"",
    ),
    "tab": (
        "---\nkind: fact\nsummary: S\nload_when:\n\t- deploy\n---\nbody\n",
        "malformed YAML on line 5: YAML does not allow tabs; indent with spaces",
    ),
}


@pytest.mark.parametrize("name", sorted(HAND_WRITTEN))
def test_the_two_commonest_yaml_mistakes_are_said_in_memoryds_words(
    name: str, root: Path
) -> None:
    """PyYAML's own words ('mapping values are not allowed in this context', 'found
    character that cannot start any token') named neither the mistake nor its fix."""
    text, message = HAND_WRITTEN[name]
    write(root / "facts/hand.md", text)
    recompile(root)
    done = run_cli("inspect", process=True)
    assert done.returncode == 1
    assert f"{root}/facts/hand.md: {message}\n  fix: fix the YAML" in done.stdout


def test_a_new_check_is_one_registration(root: Path) -> None:
    class Pending:
        name = "zz.example"

        def run(self, ctx: Context) -> list[Finding]:
            return [Finding(r.path, "pending", "resolve it") for r in ctx.roots]

    try:
        register(Pending())
        names = [c.name for c in all_checks()]
        assert names == sorted(names) and "zz.example" in names
        found = run_checks(Context.build(App()))
        assert [(f.check, f.message) for f in found] == [("zz.example", "pending")]
    finally:
        from memoryd import checks

        checks._REGISTRY.pop("zz.example")


def test_hit_counts_come_from_the_state_file(root: Path) -> None:
    (root / ".state.json").write_text('{"hits": {"facts/a": 3}}')
    rows = {m.id: m.hits for m in inspect(App()).memories}
    assert rows == {"decisions/b": 0, "facts/a": 3}


def test_the_index_out_of_step_with_the_disk_is_reported(root: Path, isolated_home: Path) -> None:
    from memoryd.freshness import ensure_fresh
    from memoryd.runlock import DaemonLock

    app = App()
    ensure_fresh(app).close()  # the index now matches the disk
    write(isolated_home / "config.yaml", "daemon:\n  max_wait_ms: 0\n")
    (root / "decisions/b.md").rename(root / "facts/b.md")
    recompile(root)
    with DaemonLock(app.paths.lock_file):  # a "daemon" that has not caught up yet
        found = findings()
    fix = "run 'memoryd reindex' (and if a daemon runs, check 'memoryd status' for why it fell behind)"
    assert sorted(f for f in found if f[0] == "index.rows") == [
        (
            "index.rows",
            "memory/decisions/b.md",
            "the search index still has a row for this file, which is gone",
            fix,
        ),
        (
            "index.rows",
            "memory/decisions/index.md",
            "the search index still has a row for this file, which is gone",
            fix,
        ),
        (
            "index.rows",
            "memory/facts/b.md",
            "is missing from the search index, so recall cannot find it",
            fix,
        ),
    ]
    assert findings() == []  # without a daemon, inspect reconciles first
