"""Round trips: memoryd's jsonl through an import and an export loses no field (for every
input, a property), and Claude Code's format brings memoryd's fields back."""

from __future__ import annotations

import json
import string
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memoryd.app import App
from memoryd.init.plugin import init_project
from memoryd.memory import MIN_EPOCH_MS
from memoryd.transfer import exporting, importing
from tests.helpers import git, run_cli
from tests.transfer.conftest import Setup

# Text as people write it: letters, Chinese, punctuation, YAML's special characters,
# words YAML would read as other types. Lower-case letters only: a random run of mixed
# case and digits is what the secret scanner is for, and would rightly be refused.
CHARS = string.ascii_lowercase + "   .,:;!?-#'\"[]{}&*|>%@`" + "中文记忆部署测试检索"
words = st.text(alphabet=string.ascii_lowercase + "中文部署", min_size=1, max_size=8)
line = st.text(alphabet=CHARS, max_size=40).map(lambda s: " ".join(s.split()))
yamlish = st.sampled_from(["yes", "no", "null", "~", "123", "1.5", "2024-03-05", "- x", "on"])
body = st.text(alphabet=CHARS + "\n", max_size=120)
stamp = st.integers(min_value=MIN_EPOCH_MS, max_value=4_102_444_800_000)
FOLDERS = ("facts", "notes", "decisions", "preferences", "pitfalls", "proposals")
KINDS = ("fact", "preference", "decision", "pitfall", "rule-proposal", "note", "bugfix")


def tag(i: int) -> str:
    """A word of its own for record ``i``: no two records can cover each other's terms."""
    return "zq" + string.ascii_lowercase[i % 26] * 2 + string.ascii_lowercase[i // 26] + "x"


@st.composite
def records(draw: st.DrawFn) -> list[dict[str, Any]]:
    count = draw(st.integers(min_value=1, max_value=6))
    names = draw(st.lists(st.from_regex(r"[a-z][a-z0-9-]{0,12}", fullmatch=True),
                          min_size=count, max_size=count, unique=True))  # fmt: skip
    out: list[dict[str, Any]] = []
    for i, name in enumerate(names):
        summary = " ".join(f"{tag(i)} {draw(st.one_of(line, yamlish))}".split())
        record: dict[str, Any] = {
            "id": f"{draw(st.sampled_from(FOLDERS))}/{name}",
            "kind": draw(st.sampled_from(KINDS)),
            "summary": summary,
            "body": draw(body),
            "created": draw(stamp),
            "updated": draw(stamp),
            "load_when": draw(st.lists(words, max_size=3)),
            "pinned": draw(st.booleans()),
            "supersedes": draw(st.sampled_from([None, *(r["id"] for r in out)])),
            "source": draw(st.one_of(st.none(), line.filter(bool), yamlish)),
        }
        extra = draw(st.dictionaries(st.sampled_from(["highlight", "team", "cites"]),
                                     st.one_of(line.filter(bool), yamlish), max_size=2))  # fmt: skip
        if extra:
            record["extra"] = extra
        out.append(record)
    return out


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(given_records=records())
def test_jsonl_import_then_export_is_lossless(setup: Setup, given_records: list[dict[str, Any]]
                                              ) -> None:  # fmt: skip
    """Each example imports into a project of its own (the setup's roots stay as they are).
    Only a memory holding all of another's terms is a duplicate here: records with a few
    shared words are distinct memories, and the duplicate check has tests of its own."""
    config = App().paths.config_file
    if "duplicate_coverage" not in config.read_text():
        config.write_text(config.read_text() + "search:\n  duplicate_coverage: 1.0\n")
    with tempfile.TemporaryDirectory(dir=setup.repo.parent) as scratch:
        repo = Path(scratch) / "other"
        repo.mkdir()
        git(repo, "init", "-q")
        app = App(cwd=repo)
        init_project(app, repo)
        source = Path(scratch) / "in.jsonl"
        source.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in given_records))
        report = importing.run(app, "jsonl", source)
        assert report.plan.counts()["write"] == len(given_records), report.as_dict()
        out = exporting.export(App(cwd=repo), "jsonl", "project")
    exported = [json.loads(line) for line in out.text.splitlines()]
    assert exported == sorted(given_records, key=lambda r: r["id"])


def test_a_second_jsonl_import_writes_nothing_and_a_changed_line_is_refused(
    setup: Setup, tmp_path: Path
) -> None:
    path = tmp_path / "in.jsonl"
    lines = [
        {"id": "facts/a", "kind": "fact", "summary": "alpha bravo", "body": "x"},
        {"id": "rules/no-friday", "kind": "rule", "summary": "Never deploy on Friday"},
        {"id": ".hidden/x", "kind": "fact", "summary": "hidden charlie"},
        "not an object",
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n{broken\n")
    first = importing.run(App(cwd=setup.repo), "jsonl", path)
    assert [(i.outcome, i.id, i.kind) for i in first.plan.items] == [
        ("write", "facts/a", "fact"),
        ("write", "proposals/no-friday", "rule-proposal"),
        ("refused", None, "fact"),
    ]
    assert first.plan.items[2].reason == (
        "refusing id '.hidden/x': memoryd never reads .hidden/x.md (a name starting with '.' "
        "or a folder it skips), so recall could never find it"
    )
    assert [u.line() for u in first.plan.unreadable] == [
        f"{path}:4: a JSON str, not an object; make the line one JSON object with at least "
        "'kind' and 'summary' (or remove it)",
        f"{path}:5: not JSON (Expecting property name enclosed in double quotes at column 2); "
        "make the "
        "line one JSON object with at least 'kind' and 'summary' (or remove it)",
    ]
    again = importing.run(App(cwd=setup.repo), "jsonl", path)
    assert again.written == [] and again.plan.counts()["already"] == 2
    lines[0] = {"id": "facts/a", "kind": "fact", "summary": "delta echo", "body": "y"}
    path.write_text(json.dumps(lines[0]) + "\n")
    changed = importing.run(App(cwd=setup.repo), "jsonl", path)
    assert [(i.outcome, i.reason) for i in changed.plan.items] == [
        ("refused", f"a different memory with id 'facts/a' exists in {setup.project}"),
    ]


def test_claude_code_round_trip_keeps_memoryds_fields(setup: Setup, tmp_path: Path) -> None:
    """export claude-code, then import that folder into another project: kinds, times,
    triggers, pins and sources come back; iron rules come back as proposals."""
    for args in (
        ("--kind", "decision", "--summary", "Deploy with Kamal", "--load-when", "部署",
         "--pinned", "One VPS is enough."),
        ("--kind", "rule", "--summary", "部署只用 pnpm"),
        ("--kind", "pitfall", "--summary", "FTS5 unicode61 merges a Chinese run", "bigrams"),
    ):  # fmt: skip
        done = run_cli("remember", *args, cwd=setup.repo)
        assert done.returncode == 0, done.stderr
    folder = tmp_path / "claude" / "memory"
    done = run_cli("export", "claude-code", "--out", str(folder), cwd=setup.repo)
    assert done.stdout == (
        f"exported 3 memories of {setup.project} as claude-code to {folder}\n"
    ), done.stderr
    assert (folder / "MEMORY.md").read_text() == (
        "# Memory index\n\n"
        "- [Deploy with Kamal](decisions_deploy-with-kamal.md) — decision\n"
        "- [部署只用 pnpm](rules_部署只用-pnpm.md) — rule\n"
        "- [FTS5 unicode61 merges a Chinese run](pitfalls_fts5-unicode61-merges-a-chinese-run.md)"
        " — pitfall\n"
    )
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    init_project(App(cwd=other), other)
    report = importing.run(App(cwd=other), "claude-code", folder)
    assert [(i.outcome, i.id, i.kind) for i in report.plan.items] == [
        ("write", "decisions/deploy-with-kamal", "decision"),
        ("write", "pitfalls/fts5-unicode61-merges-a-chinese-run", "pitfall"),
        ("write", "proposals/部署只用-pnpm", "rule-proposal"),
    ]
    before = exporting.export(App(cwd=setup.repo), "jsonl", "project").text.splitlines()
    after = exporting.export(App(cwd=other), "jsonl", "project").text.splitlines()
    for old, new in zip(map(json.loads, before), map(json.loads, after), strict=True):
        assert new["source"] == f"claude-code:{folder / (old['id'].replace('/', '_') + '.md')}"
        if old["kind"] == "rule":
            old["kind"], old["id"] = "rule-proposal", "proposals/" + old["id"].split("/")[1]
        assert {**new, "source": None} == {**old, "source": None}


def test_links_are_kept_both_ways_and_inspect_finds_nothing_wrong(setup: Setup,
                                                                   tmp_path: Path) -> None:  # fmt: skip
    """A record superseding a memory already in the root marks it superseded, as remember
    does; one superseding an earlier record of the same import marks that one."""
    assert run_cli("remember", "--kind", "fact", "--summary", "Old deploy: Capistrano",
                   cwd=setup.repo).returncode == 0  # fmt: skip
    path = tmp_path / "in.jsonl"
    records = [
        {"id": "facts/kamal", "kind": "fact", "summary": "Deploy with Kamal",
         "supersedes": "facts/old-deploy-capistrano"},
        {"id": "facts/first", "kind": "fact", "summary": "First alpha"},
        {"id": "facts/second", "kind": "fact", "summary": "Second bravo", "supersedes": "facts/first"},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    report = importing.run(App(cwd=setup.repo), "jsonl", path)
    assert report.written == ["facts/kamal", "facts/first", "facts/second"]
    old = (setup.project / "facts/old-deploy-capistrano.md").read_text()
    assert "superseded_by: facts/kamal\n" in old
    assert "superseded_by: facts/second\n" in (setup.project / "facts/first.md").read_text()
    checked = run_cli("inspect", cwd=setup.repo)
    assert "no problems found" in checked.stdout, checked.stdout
