"""memoryd's memories exported to Claude Code's format, read back by the real Claude Code.

``memoryd export claude-code`` writes the project's memories where Claude Code keeps its
auto memory; the next ``claude -p`` request carries the exported MEMORY.md (Claude Code
loads it into the system prompt), the model writes one more topic file there with the
Write tool, and ``memoryd import claude-code`` brings that one in while everything it
exported is recognised as already there.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from memoryd.memory import epoch_ms, parse
from tests.e2e.conftest import Project
from tests.e2e.fake_models import FakeModelAPI, Turn, call
from tests.e2e.test_claude_code import ask, claude, memory_dir, texts
from tests.helpers import run_cli

pytestmark = pytest.mark.e2e


def test_an_export_reaches_claude_codes_prompt_and_its_own_memory_comes_back(
    node_bin: Path, project: Project
) -> None:
    project.seed()
    project.remember("--kind", "decision", "--summary", "Deploy with Kamal", "One VPS is enough.")
    exported = run_cli("export", "claude-code", cwd=project.repo)
    assert exported.returncode == 0, exported.stderr
    folder = Path(exported.stdout.rstrip("\n").rsplit(" to ", 1)[1])
    index = (folder / "MEMORY.md").read_text()
    written = folder / "feedback_tabs.md"
    note = "---\nname: tabs\ndescription: The user indents Go with tabs\ntype: user\n---\nAsked twice.\n"
    turns = [call("Write", file_path=str(written), content=note), Turn(text="noted")]
    with FakeModelAPI(turns) as api:
        client = claude(node_bin, project, api)
        ask(client, "remember that I indent Go with tabs", "--allowedTools", "Write")
        sent = api.agent_requests()
    assert memory_dir(sent[0]) == folder  # the folder Claude Code itself uses
    assert index.splitlines()[2:] == [
        "- [部署只用 pnpm](rules_部署只用-pnpm.md) — rule",
        "- [Deploy with Kamal](decisions_deploy-with-kamal.md) — decision",
        "- [FTS5 unicode61 merges a Chinese run](pitfalls_fts5-unicode61-merges-a-chinese-run.md)"
        " — pitfall",
    ]
    for line in index.splitlines()[2:]:
        assert line in texts(sent[0]).replace("\\n", "\n")  # the index reached the model
    mine = parse(written.read_bytes())  # Claude Code files it under metadata, with a time
    assert (mine.meta["description"], mine.meta["metadata"]["type"]) == (
        "The user indents Go with tabs", "user",
    )  # fmt: skip
    back = run_cli("import", "claude-code", "--json", cwd=project.repo)
    assert back.returncode == 0, back.stderr
    assert '"written": [\n    "preferences/feedback-tabs"\n  ]' in back.stdout
    assert '"duplicate": 3' in back.stdout  # the exported three are memoryd's own already
    tabs = parse((project.memory / "preferences" / "feedback-tabs.md").read_bytes())
    assert (tabs.summary, tabs.body) == ("The user indents Go with tabs", "\nAsked twice.\n")
    modified = mine.meta["metadata"]["modified"]
    assert isinstance(modified, dt.datetime)  # YAML reads Claude Code's ISO time as a date
    assert tabs.meta["updated"] == tabs.meta["created"] == epoch_ms(modified)
    assert tabs.meta["source"] == f"claude-code:~/{written.relative_to(project.home)}"
