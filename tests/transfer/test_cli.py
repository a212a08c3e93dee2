"""``memoryd import`` and ``memoryd export`` on the command line: the dry run is the run's
list, bad inputs are one line with the next step, an export never overwrites what
memoryd did not write."""

from __future__ import annotations

import json
from pathlib import Path

from memoryd.app import App
from memoryd.memory import parse
from tests.helpers import git, run_cli
from tests.transfer import fixtures as fx
from tests.transfer.conftest import Setup


def test_the_dry_run_lists_exactly_what_the_run_writes(setup: Setup, tmp_path: Path) -> None:
    db = fx.claude_mem(tmp_path / "claude-mem.db", fx.CLAUDE_MEM_ROWS)
    before = setup.memories()
    dry = run_cli("import", "claude-mem", str(db), "--dry-run", "--json", cwd=setup.repo)
    assert dry.returncode == 0, dry.stderr
    assert setup.memories() == before  # nothing written
    planned = json.loads(dry.stdout)
    assert planned["dry_run"] is True and planned["written"] == []
    wanted = [i["id"] for i in planned["items"] if i["outcome"] == "write"]
    done = run_cli("import", "claude-mem", str(db), "--json", cwd=setup.repo)
    assert json.loads(done.stdout)["written"] == wanted
    assert sorted(setup.memories()) == sorted(f"{i}.md" for i in wanted)
    text = run_cli("import", "claude-mem", str(db), "--dry-run", cwd=setup.repo)
    assert text.stdout.splitlines() == [
        f"secret: Payment webhook secret location <- claude-mem:{db}#observation-3: looks like "
        "a secret: stripe-secret-key sk_l…6Wd1 (fingerprint d0a181a76afcf3edd2f8)",
        f"would write 0 memories into {setup.project} (project); 0 duplicates skipped, "
        "3 already imported, 1 refused as secrets, 0 refused, 1 of other projects, 0 unreadable",
    ]


def test_a_dry_run_into_a_project_with_no_memory_yet_makes_nothing(
    setup: Setup, tmp_path: Path
) -> None:
    """The plan named the project root by creating it (and registering it in config.yaml),
    as remember's first write does: a dry run must leave the disk as it found it."""
    fresh = tmp_path / "elsewhere" / "proj"  # the rows' project, by its folder's name
    fresh.mkdir(parents=True)
    git(fresh, "init", "-q")
    db = fx.claude_mem(tmp_path / "claude-mem.db", fx.CLAUDE_MEM_ROWS)
    config = App().paths.config_file
    before = config.read_bytes()
    dry = run_cli("import", "claude-mem", str(db), "--dry-run", "--json", cwd=fresh)
    assert dry.returncode == 0, dry.stderr
    assert not (fresh / ".memory").exists()
    assert config.read_bytes() == before
    planned = json.loads(dry.stdout)
    assert planned["root"] == str(fresh / ".memory") and planned["scope"] == "project"
    done = run_cli("import", "claude-mem", str(db), "--into", "global", "--dry-run", cwd=fresh)
    assert done.returncode == 0 and not (fresh / ".memory").exists()
    wanted = [i["id"] for i in planned["items"] if i["outcome"] == "write"]
    ran = run_cli("import", "claude-mem", str(db), "--json", cwd=fresh)
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["written"] == wanted and wanted
    assert sorted(setup.memories(fresh / ".memory")) == sorted(f"{i}.md" for i in wanted)
    assert str(fresh / ".memory") in config.read_text()  # registered as remember would


def test_into_global_and_only(setup: Setup) -> None:
    fx.cline(setup.repo)
    done = run_cli("import", "cline", "--into", "global", "--only", "system patterns",
                   cwd=setup.repo)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert sorted(setup.memories(setup.global_root)) == [
        "decisions/systempatterns-architecture.md", "decisions/systempatterns-key-decisions.md",
    ]  # fmt: skip
    assert setup.memories() == {}


def test_bad_inputs_say_the_next_step(setup: Setup, tmp_path: Path) -> None:
    cases = {
        ("import", "claude-men"): (
            "memoryd: error: unknown source 'claude-men' (did you mean 'claude-mem'?)\n  hint: "
            "use one of: claude-code, codex, claude-mem, serena, cline, mem0, letta, jsonl\n"
        ),
        ("import", "mem0"): (
            "memoryd: error: a mem0 import needs the PATH of the mem0/OpenMemory export (the "
            "zip, memories.json or memories.jsonl.gz)\n  hint: memoryd import mem0 PATH\n"
        ),
        ("import", "codex", str(tmp_path / "nope")): (
            f"memoryd: error: {tmp_path / 'nope'} does not exist: there is no Codex memories "
            "folder (~/.codex/memories) to import there\n  hint: give the PATH of the Codex "
            "memories folder (~/.codex/memories): memoryd import codex PATH\n"
        ),
        ("export", "yaml"): (
            "memoryd: error: unknown export format 'yaml'\n  hint: use one of: claude-code, jsonl\n"
        ),
        ("export", "jsonl", "--root", "/nowhere"): (
            "memoryd: error: /nowhere is not a memory root memoryd knows\n  hint: use --root "
            "global, --root project, or a root that 'memoryd status' lists\n"
        ),
    }
    for args, error in cases.items():
        done = run_cli(*args, cwd=setup.repo)
        assert (done.returncode, done.stdout, done.stderr) == (
            1 if "/nowhere" in args else 2, "", error,
        ), args  # fmt: skip


def test_export_jsonl_to_a_file_and_to_stdout(setup: Setup, tmp_path: Path) -> None:
    run_cli("remember", "--kind", "fact", "--summary", "部署用 Kamal", "一台机器够了", cwd=setup.repo)
    out = run_cli("export", "jsonl", cwd=setup.repo).stdout
    (record,) = map(json.loads, out.splitlines())
    assert (record["summary"], record["body"], record["source"]) == ("部署用 Kamal", "一台机器够了", None)
    assert "部署用 Kamal" in out  # UTF-8 as it is, not \\u escapes
    done = run_cli("export", "jsonl", "--out", str(tmp_path / "dump"), cwd=setup.repo)
    assert done.stdout == (
        f"exported 1 memories of {setup.project} as jsonl to {tmp_path / 'dump/memories.jsonl'}\n"
    )
    assert (tmp_path / "dump/memories.jsonl").read_text() == out


def test_claude_export_appends_to_an_index_and_never_overwrites_a_foreign_file(
    setup: Setup, tmp_path: Path
) -> None:
    folder = tmp_path / "memory"
    folder.mkdir()
    (folder / "MEMORY.md").write_text("# Memory Index\n\n- [Old](old.md) — kept\n")
    run_cli("remember", "--kind", "fact", "--summary", "Alpha bravo", cwd=setup.repo)
    run_cli("remember", "--kind", "fact", "--summary", "Charlie delta echo",
            "--supersedes", "facts/alpha-bravo", cwd=setup.repo)  # fmt: skip
    done = run_cli("export", "claude-code", "--out", str(folder), cwd=setup.repo)
    assert done.returncode == 0, done.stderr
    assert (folder / "MEMORY.md").read_text() == (
        "# Memory Index\n\n- [Old](old.md) — kept\n"
        "- [Charlie delta echo](facts_charlie-delta-echo.md) — fact\n"
    )  # the superseded memory is not exported
    topic = parse((folder / "facts_charlie-delta-echo.md").read_bytes())
    assert topic.meta["description"] == "Charlie delta echo"
    assert topic.meta["metadata"]["type"] == "project"
    again = run_cli("export", "claude-code", "--out", str(folder), "--json", cwd=setup.repo)
    assert json.loads(again.stdout)["written"] == []  # nothing changed, nothing rewritten
    (folder / "facts_charlie-delta-echo.md").write_text("---\nname: mine\n---\nmine\n")
    refused = run_cli("export", "claude-code", "--out", str(folder), cwd=setup.repo)
    assert (refused.returncode, refused.stderr) == (1, (
        f"memoryd: error: refusing to export: {folder} has topic files of the same names that "
        "memoryd did not write: facts_charlie-delta-echo.md\n  hint: export into another "
        "folder with --out DIR, or move those files away first\n"
    ))  # fmt: skip
    assert (folder / "facts_charlie-delta-echo.md").read_text() == "---\nname: mine\n---\nmine\n"
