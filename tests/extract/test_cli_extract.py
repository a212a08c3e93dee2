"""memoryd extract: a recipe tried by hand on one real session, writing nothing."""

from __future__ import annotations

import json
from pathlib import Path

from memoryd.extract.prompt import PROMPT
from tests.extract.agents import ClaudeSession, OpenCodeDB, OpenCodeJSON
from tests.extract.conftest import TURNS, World, claude_turns
from tests.helpers import run_cli


def memory_files(world: World) -> list[Path]:
    return [p for p in (*world.repo.rglob("*.md"), *world.global_root.rglob("*.md"))
            if p.name not in ("ROOT.md", "index.md")]  # fmt: skip


def test_extract_shows_the_stdin_then_what_the_command_would_write(world: World) -> None:
    session = ClaudeSession(world.projects, world.repo)
    claude_turns(session, TURNS)
    shown = run_cli("extract", str(session.file), cwd=world.repo)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith(PROMPT.format(max_memories=8))
    assert "### user\nNever force-push to main, ever.\n" in shown.stdout
    assert world.calls() == []

    ran = run_cli("extract", str(session.file), "--run", cwd=world.repo)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == (
        f"4 memories would be written from claude:{session.session} (4 turns):\n"
        "- pitfall (project): 部署脚本用 pnpm 而不是 npm,因为 lockfile 不兼容\n"
        "- preference (global): 用中文回答\n"
        "- rule (project): Never force-push to main\n"
        "- fact (project): The staging API key\n"
        "skipped item 5: kind 'rules' is not one of preference, decision, pitfall, fact, rule, "
        "rule-proposal\n"
        "skipped item 6: kind None is not one of preference, decision, pitfall, fact, rule, "
        "rule-proposal\n"
    )
    assert memory_files(world) == [] and not (world.repo / ".memory").exists()
    assert not (world.app().paths.state_dir / "extract.json").exists()
    data = json.loads(run_cli("extract", str(session.file), "--run", "--json").stdout)
    assert [m["kind"] for m in data["memories"]] == ["pitfall", "preference", "rule", "fact"]

    world.mode.write_text("fail")
    failed = run_cli("extract", str(session.file), "--run")
    assert failed.returncode == 1
    assert failed.stderr == (
        "memoryd: error: the extractor failed: the command failed with exit code 3\n"
        "  stderr: warming up\n"
        "  stderr: error: model quota exceeded for claude-haiku-4-5\n"
        f"  hint: try the command by hand: memoryd extract {session.file} | <command>\n"
    )


def test_extract_finds_opencode_sessions_and_names_bad_input(world: World, tmp_path: Path) -> None:
    db = OpenCodeDB(world.opencode)
    sid = db.session(world.repo)
    db.turn(sid, "部署脚本为什么用 pnpm?", "因为 lockfile 不兼容。")
    db.close()
    shown = run_cli("extract", sid)
    assert shown.returncode == 0, shown.stderr
    assert f"the new part of opencode session {sid} in {world.repo}" in shown.stdout
    store = OpenCodeJSON(world.opencode)
    old = store.session(world.repo)
    store.turn(old, "old question", "old answer")
    assert "### user\nold question" in run_cli("extract", old).stdout

    missing = run_cli("extract", "ses_nope")
    assert missing.returncode == 1
    assert missing.stderr == (
        f"memoryd: error: 'ses_nope' is neither a .jsonl transcript nor an OpenCode session in "
        f"{world.opencode}\n"
        "  hint: pass ~/.claude/projects/<slug>/<session>.jsonl or an OpenCode ses_ id\n"
    )
    gone = run_cli("extract", str(tmp_path / "gone.jsonl"))
    assert gone.returncode == 1
    assert gone.stderr == (
        f"memoryd: error: cannot read {tmp_path / 'gone.jsonl'}\n"
        "  hint: pass an existing Claude Code .jsonl file\n"
    )
    other = tmp_path / "notes.jsonl"  # a .jsonl that is no transcript: said, not an empty prompt
    other.write_bytes(b'not json at all\n{"type": "summary", "summary": "x"}\n\x00\x01')
    empty = run_cli("extract", str(other))
    assert (empty.returncode, empty.stdout) == (1, "")
    assert empty.stderr == (
        f"memoryd: error: {other} holds no turn to extract from (no user prompt or model text)\n"
        "  hint: pass a Claude Code transcript: ~/.claude/projects/<slug>/<session>.jsonl\n"
    )
    world.configure(settle_ms=20000)
    off = run_cli("extract", sid, "--run")
    assert off.returncode == 2
    assert off.stderr == (
        "memoryd: error: no extract.command is configured, so nothing is extracted\n"
        "  hint: set extract.command in config.yaml (docs/agents.md)\n"
    )
