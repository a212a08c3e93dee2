"""Every source, read from files written as the tool writes them, through the import's gate.

Each test imports for real and asserts exactly what was written (ids, kinds), what was
refused (the planted secret, never repeated), what could not be read (one line naming
the file and the fix), that the source's files are byte for byte as before, and that a
second import writes nothing.
"""

from __future__ import annotations

from pathlib import Path

from memoryd.app import App
from memoryd.memory import parse
from memoryd.transfer import importing
from tests.transfer import fixtures as fx
from tests.transfer.conftest import Setup


def snapshot(top: Path) -> dict[str, bytes]:
    if top.is_file():
        return {str(top): top.read_bytes()}
    return {str(p): p.read_bytes() for p in sorted(top.rglob("*")) if p.is_file()}


def run(setup: Setup, source: str, path: Path | None, into: str | None = None
        ) -> importing.Report:  # fmt: skip
    return importing.run(App(cwd=setup.repo), source, path, into)


def outcomes(report: importing.Report) -> list[tuple[str, str | None, str | None]]:
    return [(i.outcome, i.id, i.kind) for i in report.plan.items]


def imported_twice(setup: Setup, source: str, path: Path | None, watched: Path,
                   into: str | None = None) -> importing.Report:  # fmt: skip
    """Import, check the source is untouched and that a second import writes nothing."""
    before = snapshot(watched)
    first = run(setup, source, path, into)
    assert snapshot(watched) == before
    again = run(setup, source, path, into)
    assert again.written == []
    assert again.plan.counts()[importing.ALREADY] == len(first.written)
    return first


def test_claude_code_folder(setup: Setup, tmp_path: Path) -> None:
    folder = fx.claude_code(tmp_path / "claude" / "memory")
    report = imported_twice(setup, "claude-code", folder, folder)
    assert outcomes(report) == [
        ("write", "preferences/the-user-prefers-short-answers-in-plain-english", "preference"),
        ("write", "proposals/feedback-pnpm", "rule-proposal"),
        ("write", "facts/project-deploy", "fact"),
        ("write", "facts/project-deploy-zh", "fact"),
        ("secret", None, "fact"),
    ]
    (secret,) = [i for i in report.plan.items if i.outcome == "secret"]
    assert secret.reason == (
        "looks like a secret: stripe-secret-key sk_l…6Wd1 (fingerprint d0a181a76afcf3edd2f8)"
    )
    assert [u.line() for u in report.plan.unreadable] == [
        f"{folder / 'user_broken.md'}: malformed YAML on line 3: the value of 'description' "
        "holds ': ' without quotes, which YAML reads as another key; put it in quotes: "
        'description: "fix: the colon breaks it"; fix the YAML between its \'---\' lines '
        "(or remove them) and import again"
    ]
    pnpm = parse((setup.project / "proposals/feedback-pnpm.md").read_bytes())
    assert pnpm.summary == "Always use pnpm, never npm, in this repository"
    assert pnpm.meta["source"] == f"claude-code:{folder / 'feedback_pnpm.md'}"
    assert "**Why:** the lockfile is pnpm-lock.yaml." in pnpm.body
    zh = parse((setup.project / "facts/project-deploy-zh.md").read_bytes())
    assert zh.summary == "部署前先跑 pnpm test，再检查迁移脚本是否幂等。"
    assert zh.meta["created"] == (folder / "project_deploy_zh.md").stat().st_mtime_ns // 10**6
    assert fx.SECRET not in "".join(setup.memories().values())


def test_claude_md_sections_are_picked_with_only(setup: Setup, tmp_path: Path) -> None:
    path = fx.claude_md(tmp_path / "CLAUDE.md")
    picked = importing.plan(App(cwd=setup.repo), "claude-code", path, only=["代码"])
    assert [(i.outcome, i.id, i.candidate.body) for i in picked.items] == [
        ("write", "preferences/代码风格", "函数名用动词开头。"),
    ]
    every = importing.plan(App(cwd=setup.repo), "claude-code", path)
    assert [i.candidate.summary for i in every.items] == ["Build", "代码风格"]


def test_codex_task_groups_and_summary(setup: Setup, tmp_path: Path) -> None:
    folder = fx.codex(tmp_path / "codex" / "memories")
    report = imported_twice(setup, "codex", folder, folder)
    assert outcomes(report) == [
        ("write", "facts/proj-ci", "fact"),
        ("secret", None, "fact"),
        ("write", "preferences/user-profile", "preference"),
        ("write", "proposals/never-run-the-migrations-against-production-by-hand",
         "rule-proposal"),
        ("write", "facts/the-test-database-is-recreated-by-make-db-reset", "fact"),
    ]  # fmt: skip
    ci = parse((setup.project / "facts/proj-ci.md").read_bytes())
    assert ci.meta["load_when"] == ["pytest-xdist", "flaky", "ci"]
    assert ci.meta["updated"] == 1772918582000  # the updated_at the block cites
    assert "-p no:randomly" in ci.body


def test_codex_older_handbook_reports_the_broken_block(setup: Setup, tmp_path: Path) -> None:
    folder = fx.codex_old(tmp_path / "old")
    report = run(setup, "codex", folder)
    assert outcomes(report) == [("write", "facts/ruff-and-mypy-setup-of-the-repo", "fact")]
    assert [u.line() for u in report.plan.unreadable] == [
        f"{folder / 'MEMORY.md'}: block 2 has malformed YAML on line 3 of its header: "
        "expected ',' or ']', but got '<stream end>'; fix or remove the file, then import "
        "again (nothing was written for it)"
    ]
    ruff = parse((setup.project / "facts/ruff-and-mypy-setup-of-the-repo.md").read_bytes())
    assert ruff.meta["load_when"] == ["ruff", "mypy", "lint"]
    assert ruff.meta["created"] == 1770892200000


def test_claude_mem_database(setup: Setup, tmp_path: Path) -> None:
    db = fx.claude_mem(tmp_path / ".claude-mem" / "claude-mem.db", fx.CLAUDE_MEM_ROWS)
    report = imported_twice(setup, "claude-mem", db, db.parent)
    assert outcomes(report) == [
        ("write", "decisions/use-sqlite-fts5-for-search", "decision"),
        ("write", "pitfalls/修复中文分词", "pitfall"),
        ("secret", None, "fact"),
        ("elsewhere", None, None),
        ("write", "proposals/always-run-make-lint-before-pushing", "rule-proposal"),
    ]
    fts5 = parse((setup.project / "decisions/use-sqlite-fts5-for-search.md").read_bytes())
    assert (fts5.meta["created"], fts5.meta["updated"]) == (fx.BASE_MS, fx.BASE_MS)
    assert fts5.body == (
        "over Elasticsearch\n\nOne file, no server; trigram was too big.\n\n"
        "Facts:\n- FTS5 ships with Python's sqlite3\n\nConcepts: trade-off\n\n"
        "Files modified: src/index.py\n"
    )
    assert fts5.meta["source"] == f"claude-mem:{db}#observation-1"
    # into the global root, the other project's observation comes in too
    wide = run(setup, "claude-mem", db, into="global")
    assert [i.outcome for i in wide.plan.items] == [
        "duplicate", "duplicate", "secret", "write", "duplicate",
    ]  # fmt: skip


def test_claude_mem_that_is_not_a_database(setup: Setup, tmp_path: Path) -> None:
    bogus = tmp_path / "claude-mem.db"
    bogus.write_text("not sqlite")
    report = run(setup, "claude-mem", bogus)
    assert [u.line() for u in report.plan.unreadable] == [
        f"{bogus}: not a claude-mem database (file is not a database); give the path of "
        "claude-mem's database (claude-mem.db), or repair it with sqlite3"
    ]


def test_serena_project_and_global(setup: Setup) -> None:
    folder = fx.serena(setup.repo, setup.home)
    report = imported_twice(setup, "serena", None, setup.repo / ".serena")
    assert outcomes(report) == [
        ("secret", None, "fact"),
        ("write", "facts/style-and-conventions", "fact"),
        ("write", "facts/suggested-commands", "fact"),
        ("write", "facts/architecture-data-flow", "fact"),
        ("write", "facts/global-editor-setup", "fact"),
    ]
    (secret,) = [i for i in report.plan.items if i.outcome == "secret"]
    assert secret.candidate.summary == "(summary withheld: it holds the secret)"
    style = parse((setup.project / "facts/style-and-conventions.md").read_bytes())
    assert style.summary == "Type hints everywhere; 中文注释可以"
    assert style.body == "Docstrings in Google style.\n"
    assert style.meta["source"] == f"serena:{folder / 'style_and_conventions.md'}"
    glob = parse((setup.project / "facts/global-editor-setup.md").read_bytes())
    assert glob.meta["source"] == "serena:~/.serena/memories/global/editor_setup.md"


def test_cline_memory_bank(setup: Setup) -> None:
    folder = fx.cline(setup.repo)
    report = imported_twice(setup, "cline", None, folder)
    assert outcomes(report) == [
        ("write", "facts/projectbrief-core-requirements", "fact"),
        ("write", "facts/projectbrief-goals", "fact"),
        ("write", "facts/productcontext-why-this-exists", "fact"),
        ("write", "facts/activecontext-current-focus", "fact"),
        ("secret", None, "fact"),
        ("write", "decisions/systempatterns-architecture", "decision"),
        ("write", "decisions/systempatterns-key-decisions", "decision"),
        ("write", "facts/techcontext-stack", "fact"),
        ("write", "facts/progress-what-works", "fact"),
        ("write", "facts/progress-known-issues", "fact"),
    ]
    goals = parse((setup.project / "facts/projectbrief-goals.md").read_bytes())
    assert (goals.summary, goals.body) == (
        "Project Brief: Goals", "- Files are the truth\n- 中文检索可用\n",
    )  # fmt: skip


def test_openmemory_zip(setup: Setup, tmp_path: Path) -> None:
    archive = fx.openmemory_zip(tmp_path / "memories_export_u.zip")
    report = imported_twice(setup, "mem0", archive, archive)
    assert outcomes(report) == [
        ("write", "preferences/prefers-dark-roast-coffee-and-中文回复", "preference"),
        ("write", "facts/works-on-the-billing-service-in-go", "fact"),
        ("secret", None, "fact"),
    ]
    coffee = parse((setup.project / "preferences/prefers-dark-roast-coffee-and-中文回复.md").read_bytes())
    assert coffee.summary == "Prefers dark roast coffee and 中文回复"
    assert (coffee.meta["created"], coffee.meta["updated"]) == (1759305600000, 1759392000000)
    assert coffee.meta["load_when"] == ["preferences"]


def test_mem0_that_is_not_an_export(setup: Setup, tmp_path: Path) -> None:
    bogus = tmp_path / "export.json"
    bogus.write_text('{"categories": [], "total": 0}')
    report = run(setup, "mem0", bogus)
    assert [u.line() for u in report.plan.unreadable] == [
        f"{bogus}: is not a mem0 export (no 'memories' or 'results' list in it); export again "
        "from OpenMemory (Settings, Export) and import the zip as it is"
    ]


def test_letta_memfs(setup: Setup) -> None:
    folder = fx.letta(setup.home)
    report = imported_twice(setup, "letta", None, folder)
    assert outcomes(report) == [
        ("secret", None, "fact"),
        ("write", "facts/reference-project-notes", "fact"),
        ("write", "preferences/system-human", "preference"),
        ("write", "preferences/system-persona", "preference"),
    ]
    human = parse((setup.project / "preferences/system-human.md").read_bytes())
    assert (human.summary, human.meta.get("pinned")) == ("What I know about the user", True)
    notes = parse((setup.project / "facts/reference-project-notes.md").read_bytes())
    assert "pinned" not in notes.meta
    assert [u.line() for u in report.plan.unreadable] == [
        f"{folder / 'reference/broken.md'}: malformed YAML on line 3: did not find expected "
        "',' or ']'; fix the YAML between its '---' lines (or remove them) and import again"
    ]
