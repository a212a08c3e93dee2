"""Files people wrote stay as they wrote them when memoryd links, unlinks or accepts."""

from __future__ import annotations

import json
from pathlib import Path

from memoryd.app import App
from tests.agent.conftest import Setup
from tests.agent.test_cli_remember import recall_ids, refused, remember
from tests.helpers import run_cli

HAND = (
    "---\r\n"
    "# Written by hand in 2024; keep this comment.\r\n"
    "id: decisions/deploy\r\n"
    "kind: decision\r\n"
    'summary: "Deploy with Capistrano: the old way"   # quoted on purpose\r\n'
    "load_when: [deploy, 部署]\r\n"
    "owner: {team: ops, pager: yes}\r\n"
    "tags:\r\n"
    "    - ruby\r\n"
    "    - legacy\r\n"
    "created: 1700000000000\r\n"
    "---\r\n"
    "Capistrano deploys from the `deploy` branch.\r\n"
)


def write(path: Path, text: str) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    return path.read_bytes()


def test_supersedes_inserts_one_line_and_forget_removes_only_it(setup: Setup) -> None:
    old = setup.project / "decisions" / "deploy.md"
    before = write(old, HAND)
    remember(
        setup, "--kind", "decision", "--summary", "Deploy with Kamal now",
        "--id", "decisions/kamal", "--supersedes", "decisions/deploy",
    )  # fmt: skip
    expected = before.replace(
        b"created: 1700000000000\r\n",
        b"created: 1700000000000\r\nsuperseded_by: decisions/kamal\r\n",
    )
    assert old.read_bytes() == expected
    done = run_cli("forget", "decisions/kamal", cwd=setup.repo)
    assert done.returncode == 0, done.stderr
    assert old.read_bytes() == before


def test_a_latin1_file_keeps_its_bytes_when_it_is_superseded_and_unlinked(setup: Setup) -> None:
    """Its text is read with replacement characters: the edit wrote those back, so every
    é of the person's file became U+FFFD for good, in a command that said "remembered"."""
    old = setup.project / "facts" / "cafe.md"
    old.parent.mkdir(parents=True, exist_ok=True)
    before = b"---\nkind: fact\nsummary: caf\xe9 opens at 8\n---\nThe caf\xe9 by the office.\n"
    old.write_bytes(before)
    remember(
        setup, "--kind", "fact", "--summary", "The coffee place opens at 9 now",
        "--id", "facts/coffee", "--supersedes", "facts/cafe",
    )  # fmt: skip
    assert old.read_bytes() == before.replace(
        b"at 8\n---", b"at 8\nsuperseded_by: facts/coffee\n---"
    )
    done = run_cli("forget", "facts/coffee", cwd=setup.repo)
    assert done.returncode == 0, done.stderr
    assert old.read_bytes() == before


def test_superseding_a_malformed_memory_is_refused_before_anything_is_written(
    setup: Setup,
) -> None:
    """The new memory was written, and then the command failed on the old one's YAML: a
    retry met the new memory as a duplicate, and the old one never learnt of it."""
    old = setup.project / "facts" / "ports.md"
    write(old, "---\nkind: fact\nsummary: ports\nload_when: [db, port\n---\nPostgres on 5433.\n")
    assert run_cli("compile", cwd=setup.repo).returncode == 0
    stderr = refused(
        setup, "--kind", "fact", "--summary", "Postgres moved to 5434",
        "--supersedes", "facts/ports", "Postgres is on 5434 now.",
    )  # fmt: skip
    assert stderr == (
        "memoryd: error: refusing to remember: --supersedes 'facts/ports': memoryd cannot "
        f"rewrite a memory whose frontmatter is malformed ({old})\n"
        "  hint: fix the YAML between the '---' lines by hand first (memoryd inspect shows "
        "where)\n"
    )


def test_accept_changes_only_the_kind_id_and_updated_lines(setup: Setup) -> None:
    proposal = setup.project / "proposals" / "lint.md"
    write(
        proposal,
        "---\n# the agent proposed this after the March incident\nid: proposals/lint\n"
        "kind: rule-proposal\nsummary: Always run the linter before pushing\n"
        "load_when: [push, ci]   # both\nupdated: 1700000000000\n---\nRun `ruff check`.\n",
    )
    done = run_cli("accept", "proposals/lint", cwd=setup.repo)
    assert done.returncode == 0, done.stderr
    rule = (setup.project / "rules" / "lint.md").read_text(encoding="utf-8")
    head, _, updated = rule.partition("updated: ")
    assert head == (
        "---\n# the agent proposed this after the March incident\nid: rules/lint\n"
        "kind: rule\nsummary: Always run the linter before pushing\n"
        "load_when: [push, ci]   # both\n"
    )
    stamp, _, rest = updated.partition("\n")
    assert int(stamp) > 1700000000000 and rest == "---\nRun `ruff check`.\n"


def test_an_agent_cannot_supersede_a_pinned_memory(setup: Setup) -> None:
    remember(
        setup, "--kind", "preference", "--summary", "Use pnpm for every install",
        "--id", "preferences/pnpm", "--pinned",
    )  # fmt: skip
    stderr = refused(
        setup, "--agent", "--kind", "preference", "--summary", "Use yarn berry instead",
        "--supersedes", "preferences/pnpm",
    )  # fmt: skip
    assert stderr == (
        "memoryd: error: refusing to remember: 'preferences/pnpm' is pinned, and a pinned "
        "memory is never replaced automatically\n"
        "  hint: save the new memory without supersedes, or ask the user to run "
        "'memoryd remember --supersedes preferences/pnpm'\n"
    )
    person = remember(
        setup, "--kind", "preference", "--summary", "Use yarn berry instead",
        "--supersedes", "preferences/pnpm",
    )  # fmt: skip
    assert person["supersedes"] == "preferences/pnpm"
    assert recall_ids(setup, "yarn") == [person["id"]]


def recall_json(setup: Setup, *words: str) -> list[str]:
    done = run_cli("recall", "--json", *words, cwd=setup.repo)
    assert done.returncode in (0, 1), done.stderr
    return [hit["id"] for hit in json.loads(done.stdout)] if done.stdout else []


def test_a_dangling_superseded_by_hides_nothing(setup: Setup) -> None:
    write(
        setup.project / "rules" / "tags.md",
        "---\nkind: rule\nsummary: Tag every release with its version\nload_when: [release]\n"
        "superseded_by: rules/gone-for-good\n---\nUse `git tag -s vX.Y.Z`.\n",
    )
    done = run_cli("compile", cwd=setup.repo)
    assert done.returncode == 0, done.stderr
    root_md = (setup.project / "ROOT.md").read_text(encoding="utf-8")
    assert "- Tag every release with its version (`rules/tags`)" in root_md
    assert "| release | `rules/tags` |" in root_md
    assert "| [rules/](rules/index.md) | 1 |" in root_md
    index = (setup.project / "rules" / "index.md").read_text(encoding="utf-8")
    assert "- [tags.md](tags.md) `rules/tags`: Tag every release with its version" in index
    assert recall_json(setup, "release") == ["rules/tags"]
    report = run_cli("inspect", cwd=setup.repo)
    assert "superseded_by 'rules/gone-for-good', which no memory in this root has" in report.stdout


def test_root_md_counts_only_current_memories(setup: Setup) -> None:
    remember(
        setup, "--kind", "decision", "--summary", "Deploy with Capistrano", "--id", "decisions/cap"
    )
    remember(
        setup, "--kind", "decision", "--summary", "Deploy with Kamal",
        "--id", "decisions/kamal", "--supersedes", "decisions/cap",
    )  # fmt: skip
    root_md = (setup.project / "ROOT.md").read_text(encoding="utf-8")
    assert (
        "| [decisions/](decisions/index.md) | 1 | Decisions and the reasons for them |" in root_md
    )


def test_the_mcp_tool_relays_that_damaged_markers_kept_root_md_as_it_was(setup: Setup) -> None:
    from tests.agent.test_mcp import call

    root_md = setup.project / "ROOT.md"
    root_md.write_text("# Memory\n<!-- memoryd:end routing -->\n", encoding="utf-8")
    error, text = call(
        App(cwd=setup.repo), "memory_remember", kind="fact", summary="CI runs on arm64 runners"
    )
    assert not error
    assert text == (
        "Saved facts/ci-runs-on-arm64-runners (project memory, kind fact).\n"
        f"ROOT.md was not updated (tell the user): {root_md}: damaged markers, line 2: end of "
        "block 'routing' without its begin\n"
        "  fix: repair the memoryd marker comments by hand (every begin needs its end, each "
        "block once) or delete them all to get fresh blocks, then run 'memoryd compile'"
    )
