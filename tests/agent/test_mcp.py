from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import ContentBlock, TextContent, TextResourceContents

from memoryd.agent.mcp_server import build_server
from memoryd.app import App
from memoryd.cli import main
from tests.agent.conftest import Setup
from tests.agent.test_cli_remember import SECRET
from tests.helpers import run_cli
from tests.layouts.test_index import CLAUDE, LAYERED, build

TOOLS = {"memory_recall", "memory_remember", "memory_forget", "memory_inspect", "memory_context"}


def session(work: Callable[[Client], Awaitable[Any]], app: App | None = None) -> Any:
    """Run ``work`` against the server through a real in-memory client session."""

    async def main() -> Any:
        async with Client(build_server(app or App())) as client:
            return await work(client)

    return anyio.run(main)


def test_the_five_tools_have_specific_names_schemas_and_teaching_descriptions() -> None:
    tools = {t.name: t for t in session(lambda c: c.list_tools()).tools}
    assert set(tools) == TOOLS
    recall = tools["memory_recall"]
    assert "one to three rare" in recall.description
    assert "A hit is authoritative" in recall.description
    assert "retry with fewer, rarer words" in recall.description
    schema = recall.input_schema
    assert schema["required"] == ["query"]
    assert schema["properties"]["limit"]["maximum"] == 50
    assert "one to three rare words" in schema["properties"]["query"]["description"]
    remember = tools["memory_remember"].input_schema
    assert set(remember["required"]) == {"kind", "summary"}
    assert {"body", "load_when", "supersedes", "scope", "force", "pinned"} <= set(
        remember["properties"]
    )
    assert "rule-proposal" in tools["memory_remember"].description
    assert tools["memory_forget"].input_schema["required"] == ["id"]
    for tool in tools.values():
        assert tool.description and len(tool.description) > 80


def text_of(content: ContentBlock) -> str:
    """The text of one item of a tool's answer: memoryd's tools answer in text only."""
    assert isinstance(content, TextContent), content
    return content.text


def call(app: App, name: str, **arguments: Any) -> tuple[bool, str]:
    """Call one tool through a client session: (is_error, text)."""

    async def work(client: Client) -> tuple[bool, str]:
        result = await client.call_tool(name, arguments)
        return bool(result.is_error), "\n".join(text_of(c) for c in result.content)

    return session(work, app)  # type: ignore[no-any-return]


def test_remember_recall_forget_through_a_session(setup: Setup) -> None:
    app = App(cwd=setup.repo)
    error, text = call(
        app, "memory_remember", kind="pitfall", summary="FTS5 分词漏掉两字中文词",
        body="trigram 要求至少三个字符", load_when=["分词"],
    )  # fmt: skip
    assert (error, text) == (False, "Saved pitfalls/fts5-分词漏掉两字中文词 (project memory, kind pitfall).")
    error, text = call(app, "memory_recall", query="分词")
    assert not error
    assert text.startswith("## pitfalls/fts5-分词漏掉两字中文词 (project pitfall, score ")
    assert "matched: 分词×" in text and text.endswith("trigram 要求至少三个字符")
    assert call(app, "memory_recall", query="kubernetes") == (
        False,
        "No memory matched 'kubernetes'. Zero results do not prove nothing was recorded: retry "
        "with fewer, rarer words (one or two), a synonym, or the other language.",
    )
    assert call(app, "memory_forget", id="pitfalls/fts5-分词漏掉两字中文词")[0] is False
    assert not (setup.project / "pitfalls" / "fts5-分词漏掉两字中文词.md").exists()


def test_forget_over_mcp_says_which_memory_is_current_again(setup: Setup) -> None:
    """The model that forgot a newer memory is told that the one it replaced is back in
    recall, as `memoryd forget` tells a person."""
    app = App(cwd=setup.repo)
    call(app, "memory_remember", kind="decision", summary="Use Postgres 15", id="decisions/pg15")
    call(app, "memory_remember", kind="decision", summary="Use Postgres 16", id="decisions/pg16",
         supersedes="decisions/pg15")  # fmt: skip
    assert call(app, "memory_forget", id="decisions/pg16") == (
        False,
        f"Forgot decisions/pg16 ({setup.project / 'decisions' / 'pg16.md'}). Cleared links in "
        "decisions/pg15. decisions/pg15 is current again: it was superseded by decisions/pg16, "
        "so recall returns it (tell the user if it is out of date).",
    )


def test_an_mcp_rule_is_a_proposal_and_rules_are_not_forgotten(setup: Setup) -> None:
    app = App(cwd=setup.repo)
    error, text = call(app, "memory_remember", kind="rule", summary="Always run the linter")
    assert not error
    assert text == (
        "Saved proposals/always-run-the-linter (project memory, kind rule-proposal).\n"
        "Iron rules are written only by people: it was saved as a rule-proposal; ask the user to "
        "run 'memoryd accept proposals/always-run-the-linter' if it should be a rule."
    )
    done = run_cli("accept", "proposals/always-run-the-linter", cwd=setup.repo)
    assert done.returncode == 0, done.stderr
    assert call(app, "memory_forget", id="rules/always-run-the-linter") == (
        True,
        "refusing to forget 'rules/always-run-the-linter': it is an iron rule, and only a person "
        "removes those\n  hint: ask the user to run 'memoryd forget rules/always-run-the-linter'",
    )
    assert (setup.project / "rules" / "always-run-the-linter.md").exists()


def test_refusals_reach_the_model_as_tool_errors_with_the_same_text(setup: Setup) -> None:
    app = App(cwd=setup.repo)
    call(app, "memory_remember", kind="fact", summary="CI runs on arm64", id="facts/ci")
    path = setup.project / "facts" / "ci.md"
    assert call(app, "memory_remember", kind="fact", summary="CI moved", id="facts/ci") == (
        True,
        f"refusing to remember: a memory with id 'facts/ci' already exists ({path})\n"
        f"  hint: pass --supersedes facts/ci to replace it, or edit {path}",
    )
    error, text = call(app, "memory_remember", kind="fact", summary="CI runs on arm64")
    assert error and text.startswith(
        "refusing to remember: 'facts/ci' (project) already covers 100%"
    )
    error, text = call(app, "memory_remember", kind="fact", summary="x", supersedes="facts/none")
    assert error and text.startswith(
        "refusing to remember: --supersedes 'facts/none' names no memory"
    )
    error, text = call(app, "memory_remember", kind="fact", summary="key", body=f"it is {SECRET}")
    assert error and text.startswith(
        "refusing to remember: the memory contains what looks like a secret\n  facts/key.md:9: "
    )  # line 9: the frontmatter names the agent that wrote it
    assert SECRET not in text


def test_forget_traversal_over_mcp_is_refused_before_any_file_is_touched(setup: Setup) -> None:
    app = App(cwd=setup.repo)
    victim = setup.repo / "victim.md"
    victim.write_text("keep\n")
    for target, reason in [
        ("../victim", "'..' leads outside the memory root"),
        (str(victim), "an absolute path is outside the memory root"),
        ("facts/x\x00/../../victim", "it contains a NUL byte"),
        (".git/HEAD", "memoryd never touches files inside .git"),
    ]:
        error, text = call(app, "memory_forget", id=target)
        assert error
        shown = target.removesuffix(".md")  # an id may be typed with its .md
        assert text.startswith(f"refusing {shown!r}: {reason}\n")
    assert victim.read_text() == "keep\n"


def test_inspect_and_context_tools(setup: Setup) -> None:
    app = App(cwd=setup.repo)
    call(app, "memory_remember", kind="preference", summary="回答用中文", scope="global")
    error, text = call(app, "memory_inspect")
    assert not error and "preferences/回答用中文" in text
    error, text = call(app, "memory_context", query="中文")
    assert not error
    assert text.startswith("<memory>\n## Iron rules") and "回答用中文" in text


def runbooks(root: Path, count: int, lines: int) -> None:
    facts = root / "facts"
    facts.mkdir(exist_ok=True)
    for i in range(count):
        steps = "".join(f"step {j} of runbook {i}: restart the zebra worker\n" for j in range(lines))
        (facts / f"runbook-{i}.md").write_text(
            f"---\nkind: fact\nsummary: runbook {i} for the zebra worker\n---\n{steps}"
        )


def test_recall_over_mcp_stays_within_what_claude_code_shows_the_model(setup: Setup) -> None:
    """Claude Code saves a tool answer over about 50,000 characters to a file and shows the
    model its first 2 KB: five 14 KB runbooks reached the model as the start of the first."""
    from memoryd.agent.recall_text import RECALL_CHARS

    runbooks(setup.project, 5, 300)
    error, text = call(App(cwd=setup.repo), "memory_recall", query="zebra", limit=5)
    assert not error and len(text) <= RECALL_CHARS
    shown = [line[3:].split(" ", 1)[0] for line in text.splitlines() if line.startswith("## ")]
    assert len(shown) == 2 and text.startswith(f"## {shown[0]} (project fact")
    left = sorted({f"facts/runbook-{i}" for i in range(5)} - set(shown))
    cut = f"[… cut at the 20000-character answer limit: the whole memory is {setup.project}/"
    assert f"\n{cut}{shown[1]}.md]\n\n" in text
    notice = text.rsplit("\n\n", 1)[1]
    head = "[… 3 more matching memories left out at the 20000-character answer limit: "
    tail = "; recall one with rarer words, or read its file]"
    assert notice.startswith(head) and notice.endswith(tail)
    ids = notice[len(head) : -len(tail)]
    assert sorted(ids.split(", ")) == left


def test_recall_answers_that_fit_are_whole(setup: Setup) -> None:
    runbooks(setup.project, 3, 20)
    error, text = call(App(cwd=setup.repo), "memory_recall", query="zebra")
    assert not error and "[… " not in text and text.count("\n## facts/runbook-") == 2
    assert text.endswith("step 19 of runbook " + text.rsplit("step 19 of runbook ", 1)[1])


def test_inspect_over_mcp_puts_the_problems_first_and_stays_within_its_size(
    setup: Setup,
) -> None:
    """Claude Code shows the model only the first 2 KB of a long tool answer: with a few
    thousand memories the listing filled it and the problems, printed last, were never seen."""
    from memoryd.inspection import INSPECT_CHARS

    facts = setup.project / "facts"
    facts.mkdir(exist_ok=True)
    for i in range(1500):
        (facts / f"fact-{i}.md").write_text(
            f"---\nkind: fact\nsummary: fact number {i} about deploying service {i}\n---\nx\n"
        )
    (facts / "broken.md").write_text("---\nid: facts/other\nkind: fact\nsummary: b\n---\nx\n")
    error, text = call(App(cwd=setup.repo), "memory_inspect")
    assert not error
    assert len(text) <= INSPECT_CHARS
    head, listing = text.split(f"\n{setup.project} (project root)\n", 1)
    found = run_cli("inspect", "--json", cwd=setup.repo)
    count = len(json.loads(found.stdout)["problems"])  # the compiled files are stale too
    assert head.startswith(f"1501 memories, {count} problem(s) found\n\n")
    assert (
        f"{facts / 'broken.md'}: id 'facts/other' does not match its path (expected 'facts/broken')"
        in head
    )
    memories = json.loads(found.stdout)["memories"]
    lines = len(memories) + len({m["root"] for m in memories})  # a line naming each root
    shown = listing.split("\n[… ", 1)[0].count("\n") + 2  # and the project root's, split off
    assert 100 < shown < 1500
    assert (
        f"\n[… {lines - shown} more lines of the listing left out (size limit): 'memoryd inspect' "
        "lists them all]\n" in listing
    )
    full = run_cli("inspect", cwd=setup.repo)  # the CLI still lists every memory
    assert full.stdout.count("\n  facts/fact-") == 1500


def test_the_stdio_server_serves_a_real_client(setup: Setup) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memoryd", "mcp"], cwd=str(setup.repo),
        env=dict(os.environ),
    )  # fmt: skip

    async def main() -> tuple[set[str], str]:
        async with Client(params) as client:
            listed = await client.list_tools()
            saved = await client.call_tool(
                "memory_remember", {"kind": "fact", "summary": "Release notes live in CHANGES.md"}
            )
            return {t.name for t in listed.tools}, text_of(saved.content[0])

    names, saved = anyio.run(main)
    assert names == TOOLS
    assert saved == "Saved facts/release-notes-live-in-changes-md (project memory, kind fact)."
    assert (setup.project / "facts" / "release-notes-live-in-changes-md.md").exists()


def test_a_broken_config_at_start_still_serves_the_tools_and_they_recover(setup: Setup) -> None:
    """A client drops a server that exits at start for the whole session: with config.yaml
    broken the tools still come up, say what is wrong, and work once it is fixed."""
    config = Path(os.environ["MEMORYD_HOME"]) / "config.yaml"
    good = config.read_text()
    config.write_text(good + "serach: 1\n")
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memoryd", "mcp"], cwd=str(setup.repo),
        env=dict(os.environ),
    )  # fmt: skip
    arguments = {"kind": "fact", "summary": "Release notes live in CHANGES.md"}

    async def main() -> tuple[set[str], Any, Any]:
        async with Client(params) as client:
            listed = await client.list_tools()
            broken = await client.call_tool("memory_remember", arguments)
            config.write_text(good)
            return {t.name for t in listed.tools}, broken, await client.call_tool(
                "memory_remember", arguments
            )

    names, broken, saved = anyio.run(main)
    assert names == TOOLS
    assert broken.is_error
    assert broken.content[0].text == (
        f"{config}: serach: unknown key (did you mean 'search'?)\n"
        f"  hint: edit {config} (see docs/config.md)"
    )
    assert not saved.is_error
    assert saved.content[0].text == (
        "Saved facts/release-notes-live-in-changes-md (project memory, kind fact)."
    )


def test_a_project_folder_that_does_not_exist_is_refused_at_start(tmp_path: Path) -> None:
    """A typo in the client's --project served the global memory alone and said nothing."""
    missing = tmp_path / "myap"
    done = run_cli("mcp", "--project", str(missing), input="")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"memoryd: error: --project {missing}: {missing} is not a folder\n"
        "  hint: pass the project's folder, or leave --project out to serve the folder the "
        "client starts memoryd in\n"
    )


@pytest.mark.parametrize(
    ("hidden", "missing"), [(("mcp", "pydantic"), "mcp"), (("pydantic",), "pydantic")]
)
def test_without_the_sdk_the_command_names_the_install_command(
    hidden: tuple[str, ...], missing: str
) -> None:
    """pydantic was imported before the guarded import: without it 'memoryd mcp' died with
    "internal error: No module named 'pydantic' ... please report it"."""
    code = (
        f"import sys; sys.modules.update(dict.fromkeys({list(hidden)!r}))\n"
        "from memoryd.cli import main; raise SystemExit(main(['mcp']))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 1
    assert done.stderr == (
        "memoryd: error: the MCP server needs the official mcp SDK, which is not installed "
        f"(no {missing})\n"
        f"  hint: {sys.executable} -m pip install 'mcp>=2,<3' (memoryd's own Python), or "
        "reinstall memoryd: pipx reinstall memoryd\n"
    )


@pytest.fixture
def foreign(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> App:
    """A global root with one memory, MiMo Code's layered tree and Claude Code's folders."""
    monkeypatch.setenv("MIMOCODE_HOME", str(tmp_path / "mimo"))
    build(tmp_path / "mimo" / "data" / "memory", LAYERED)
    build(Path(os.environ["HOME"]) / ".claude" / "projects", CLAUDE)
    for args in (["init"], ["init", "--layered", "--project-id", "p1"], ["init", "--claude"]):
        err = io.StringIO()
        assert main(args, App(cwd=tmp_path, out=io.StringIO(), err=err)) == 0, err.getvalue()
    app = App(cwd=tmp_path)
    saved = call(app, "memory_remember", kind="fact", summary="deploy only on Tuesdays")
    assert saved == (False, "Saved facts/deploy-only-on-tuesdays (global memory, kind fact).")
    return app


def recalled(app: App, **filters: Any) -> list[str]:
    """The ids memory_recall finds for 'deploy' with ``filters``, best first."""
    error, text = call(app, "memory_recall", query="deploy", limit=20, **filters)
    assert not error, text
    return re.findall(r"^## (\S+) \(", text, flags=re.MULTILINE)


def cli_recalled(*flags: str) -> set[str]:
    done = run_cli("recall", "deploy", "--json", "--limit", "20", *flags)
    assert done.returncode == 0, done.stderr
    return {hit["id"] for hit in json.loads(done.stdout)}


def test_recall_filters_other_layouts_by_type_and_scope_id_like_the_cli(foreign: App) -> None:
    schema = session(lambda c: c.list_tools(), foreign).tools
    properties = next(t for t in schema if t.name == "memory_recall").input_schema["properties"]
    for name in ("type", "scope_id"):
        assert properties[name]["description"].startswith("layered and claude layouts only: ")
    assert "facts/deploy-only-on-tuesdays" in recalled(foreign)  # no filter: every layout
    cases: list[tuple[dict[str, Any], list[str], set[str]]] = [
        ({"type": "progress", "everywhere": True}, ["--type", "progress", "--everywhere"],
         {"sessions/s1/tasks/T1/progress"}),
        ({"scope_id": "p1"}, ["--scope-id", "p1"], {"projects/p1/MEMORY", "projects/p1/memory-arch"}),
        ({"type": "memory", "scope_id": "p2"}, ["--type", "memory", "--scope-id", "p2"],
         {"projects/p2/MEMORY"}),
        ({"type": "feedback", "everywhere": True}, ["--type", "feedback", "--everywhere"],
         {"-home-me-app/memory/feedback_tests"}),
        ({"scope_id": "-home-me-web"}, ["--scope-id=-home-me-web"],
         {"-home-me-web/memory/project_goal"}),
    ]  # fmt: skip
    for filters, flags, expected in cases:
        assert set(recalled(foreign, **filters)) == expected == cli_recalled(*flags), filters
    error, text = call(foreign, "memory_recall", query="deploy", type="pinned")
    assert not error and text.startswith("No memory matched 'deploy'.")


def test_hits_of_other_layouts_show_their_type_and_scope_id(foreign: App) -> None:
    _error, text = call(foreign, "memory_recall", query="deploy", limit=20, everywhere=True)
    heads = dict(re.findall(r"^## (\S+) \((.*), score ", text, flags=re.MULTILINE))
    assert heads["facts/deploy-only-on-tuesdays"] == "global fact"
    assert (
        heads["sessions/s1/tasks/T1/progress"] == "global layered file, type progress, scope_id s1"
    )
    assert heads["-home-me-app/memory/feedback_tests"] == (
        "global claude file, type feedback, scope_id -home-me-app"
    )
    _error, text = call(foreign, "memory_recall", query="ripgrep")
    assert text.startswith("## global/MEMORY (global layered file, type memory, score ")


def test_an_explicit_rules_id_and_an_oversized_body_are_refused_over_mcp(setup: Setup) -> None:
    app = App(cwd=setup.repo)
    assert call(app, "memory_remember", kind="fact", summary="Deploy on Fridays", id="rules/deploy") == (
        True,
        "refusing to remember: 'rules/deploy' is under rules/, and agents never write there "
        "(it holds the iron rules people wrote)\n"
        "  hint: leave the id out, or use proposals/deploy: a person can accept a proposal with "
        "memoryd accept",
    )
    assert not (setup.project / "rules" / "deploy.md").exists()
    cap = app.config.search.max_file_bytes
    error, text = call(app, "memory_remember", kind="fact", summary="Huge", body="x " * cap)
    assert error
    assert text.startswith("refusing to remember: the memory is ")
    assert f"bytes, over the {cap}-byte limit (search.max_file_bytes)" in text
    assert not (setup.project / "facts" / "huge.md").exists()


def test_tools_carry_annotations_and_the_server_its_version() -> None:
    from memoryd import __version__

    async def work(client: Client) -> tuple[Any, dict[str, Any]]:
        tools = (await client.list_tools()).tools
        return client.server_info, {t.name: t.annotations for t in tools}

    info, notes = session(work)
    assert (info.name, info.version) == ("memoryd", __version__)
    for name in ("memory_recall", "memory_inspect", "memory_context"):
        assert notes[name].read_only_hint is True and notes[name].destructive_hint is False
        assert notes[name].idempotent_hint is True
    assert notes["memory_forget"].destructive_hint is True
    assert notes["memory_forget"].read_only_hint is False
    assert notes["memory_remember"].read_only_hint is False
    assert notes["memory_remember"].idempotent_hint is False
    assert all(n.open_world_hint is False for n in notes.values())


RECALL_TAKES = "  hint: memory_recall takes query, limit, kind, scope, type, scope_id, everywhere"
REMEMBER_TAKES = (
    "  hint: memory_remember takes kind, summary, body, load_when, highlight, pinned, "
    "supersedes, scope, force, id, cites"
)


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("memory_recall", {"query": "x", "scopes": "global"},
         "memory_recall: unrecognized arguments: scopes\n" + RECALL_TAKES),
        ("memory_recall", {"limit": 3},
         "memory_recall: the following arguments are required: query\n" + RECALL_TAKES),
        ("memory_recall", {"query": "x", "limit": "abc"},
         "memory_recall: argument limit: invalid integer value: 'abc'\n" + RECALL_TAKES),
        ("memory_recall", {"query": "x", "limit": True},
         "memory_recall: argument limit: invalid integer value: True\n" + RECALL_TAKES),
        ("memory_recall", {"query": "x", "limit": 0},
         "memory_recall: argument limit: must be between 1 and 50, got 0\n" + RECALL_TAKES),
        ("memory_recall", {"query": "x", "scope": "everything"},
         "memory_recall: argument scope: invalid choice: 'everything' (choose from 'global', "
         "'team', 'project')\n" + RECALL_TAKES),
        ("memory_recall", {"query": "  "},
         "memory_recall: argument query: must not be empty\n" + RECALL_TAKES),
        ("memory_remember", {"kind": "fact", "summary": "s", "pinned": "yes"},
         "memory_remember: argument pinned: invalid boolean (true or false) value: 'yes'\n"
         + REMEMBER_TAKES),
        ("memory_remember", {"kind": "fact", "summary": "s", "load_when": "deploy"},
         "memory_remember: argument load_when: invalid list value: 'deploy'\n" + REMEMBER_TAKES),
        ("memory_remember", {"kind": "fact", "summary": "s", "load_when": ["ok", 3]},
         "memory_remember: argument load_when: an item: invalid string value: 3\n" + REMEMBER_TAKES),
        ("memory_inspect", {"verbose": True},
         "memory_inspect: unrecognized arguments: verbose\n  hint: memory_inspect takes no arguments"),
    ],
)
def test_bad_arguments_are_refused_in_the_clis_words(
    setup: Setup, tool: str, arguments: dict[str, Any], message: str
) -> None:
    before = setup.snapshot()
    assert call(App(cwd=setup.repo), tool, **arguments) == (True, message)
    assert setup.snapshot() == before


def test_an_integer_or_boolean_spelled_as_a_string_and_a_null_are_read_as_meant(
    setup: Setup,
) -> None:
    """OpenCode passes "3", "true" and null on as the model wrote them (Claude Code turns
    the first two into JSON values): each was refused, 'invalid integer value: '3''."""
    app = App(cwd=setup.repo)
    for summary in ("Deploy with kamal", "Deploy docs live in ops/"):
        assert call(app, "memory_remember", kind="fact", summary=summary, load_when=["deploy"],
                    pinned="true", force="false", scope=None)[0] is False  # fmt: skip
    assert "pinned: true" in (setup.project / "facts" / "deploy-with-kamal.md").read_text()
    error, text = call(app, "memory_recall", query="deploy", limit="1", kind=None)
    assert not error and text.count("## facts/") == 1, text
    error, text = call(app, "memory_recall", query="deploy", limit=None)
    assert not error and text.count("## facts/") == 2, text
    assert call(app, "memory_recall", query=None) == (
        True, "memory_recall: the following arguments are required: query\n" + RECALL_TAKES,
    )  # fmt: skip
    assert call(app, "memory_recall", query="deploy", limit="1.0") == (
        True, "memory_recall: argument limit: invalid integer value: '1.0'\n" + RECALL_TAKES,
    )  # fmt: skip


def test_each_roots_root_md_is_an_advertised_and_served_resource(setup: Setup) -> None:
    async def work(client: Client) -> tuple[Any, dict[str, str]]:
        listed = (await client.list_resources()).resources
        texts = {}
        for resource in listed:
            read = await client.read_resource(str(resource.uri))
            contents = read.contents[0]
            assert isinstance(contents, TextResourceContents), contents  # ROOT.md is text
            texts[str(resource.uri)] = contents.text
        return client.server_capabilities, texts

    capabilities, texts = session(work, App(cwd=setup.repo))
    assert capabilities.resources is not None
    assert set(texts) == {"memoryd://project/ROOT.md", "memoryd://global/ROOT.md"}
    assert texts["memoryd://project/ROOT.md"] == (setup.project / "ROOT.md").read_text()
    assert texts["memoryd://global/ROOT.md"] == (setup.global_root / "ROOT.md").read_text()


def test_a_hit_over_the_size_cap_says_its_body_was_not_loaded(setup: Setup) -> None:
    """A hand-written file over search.max_file_bytes is found by its frontmatter; its body is
    not indexed, and an empty body read as a memory holding nothing but its summary."""
    giant = setup.project / "facts" / "giant.md"
    lines = "\n".join(f"line {i}: the payments dashboard panel" for i in range(40_000))
    giant.write_text(
        "---\nid: facts/giant\nkind: fact\nsummary: Grafana runbook for payments\n---\n" + lines
    )
    size = giant.stat().st_size
    assert size > 1024 * 1024
    note = (
        f"[… body not loaded: {giant} is {size} bytes, over the 1048576-byte limit "
        "(search.max_file_bytes), so only its frontmatter is searched: read the file, or split "
        "it into smaller memories]"
    )
    error, text = call(App(cwd=setup.repo), "memory_recall", query="grafana")
    assert not error
    assert text.startswith("## facts/giant (project fact, score ")
    assert text.endswith(f"\nGrafana runbook for payments\n\n{note}")
    done = run_cli("context", "grafana", cwd=setup.repo)
    assert done.returncode == 0, done.stderr
    assert (
        f"### facts/giant (project fact): Grafana runbook for payments\n{note}\n</memory>\n"
    ) in done.stdout


def test_each_tool_has_a_title_and_answers_with_structure_beside_its_text(setup: Setup) -> None:
    """Claude Code hands the model structuredContent alone when a tool gives both, so the
    structure carries the tool's text first, and as its outputSchema says."""

    async def work(client: Client) -> tuple[dict[str, Any], Any, Any]:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        saved = await client.call_tool(
            "memory_remember", {"kind": "pitfall", "summary": "FTS5 unicode61 merges 部署脚本",
                                "load_when": ["unicode61"]},
        )  # fmt: skip
        found = await client.call_tool("memory_recall", {"query": "unicode61"})
        return tools, saved, found

    tools, saved, found = session(work, App(cwd=setup.repo))
    assert {name: t.title for name, t in tools.items()} == {
        "memory_recall": "Recall memories", "memory_remember": "Remember a memory",
        "memory_forget": "Forget a memory", "memory_inspect": "Inspect the memory",
        "memory_context": "The memory block for a task",
    }  # fmt: skip
    for tool in tools.values():
        assert tool.output_schema["required"][0] == "text", tool.name
    recall = tools["memory_recall"].output_schema
    assert set(recall["required"]) == {"text", "query", "hits"}
    structure = found.structured_content
    assert next(iter(structure)) == "text" and structure["text"] == text_of(found.content[0])
    (hit,) = structure["hits"]
    assert hit["id"] == "pitfalls/fts5-unicode61-merges-部署脚本" and hit["scope"] == "project"
    assert hit["path"] == str(setup.project / "pitfalls" / "fts5-unicode61-merges-部署脚本.md")
    assert saved.structured_content["text"] == text_of(saved.content[0])
    assert saved.structured_content["id"] == hit["id"]
    refused = session(lambda c: c.call_tool("memory_forget", {"id": "nope/none"}),
                      App(cwd=setup.repo))  # fmt: skip
    assert refused.is_error and refused.structured_content is None


def test_the_prompts_ask_for_a_recall_and_a_remember() -> None:
    async def work(client: Client) -> tuple[Any, Any, Any]:
        listed = (await client.list_prompts()).prompts
        recall = await client.get_prompt("memory-recall", {"topic": "deploys"})
        remember = await client.get_prompt("memory-remember", {})
        return listed, recall, remember

    listed, recall, remember = session(work)
    assert [(p.name, p.title) for p in listed] == [
        ("memory-recall", "Recall from memory"), ("memory-remember", "Remember this")
    ]  # fmt: skip
    assert [a.name for a in listed[0].arguments] == ["topic"] and listed[0].arguments[0].required
    (message,) = recall.messages
    assert message.role == "user"
    assert message.content.text.startswith(
        "Look up what memoryd's long-term memory holds about: deploys\n\nCall memory_recall "
    )
    assert remember.messages[0].content.text.startswith(
        "Save to memoryd's long-term memory: what this conversation settled that will stay true\n"
    )


def test_recall_over_mcp_names_a_missing_root_and_the_fix(setup: Setup, tmp_path: Path) -> None:
    """memory_recall left a moved root's hits out without a word, so the model took what
    was left for all there is; `memoryd recall` refuses, naming the root and the fix."""
    app = App(cwd=setup.repo)
    for scope in ("global", "project"):
        saved = call(app, "memory_remember", kind="fact", scope=scope, force=True,
                     summary=f"the {scope} deploy gate is staging")  # fmt: skip
        assert saved[0] is False, saved
    setup.global_root.rename(tmp_path / "unmounted")
    assert call(app, "memory_recall", query="deploy gate") == (
        True,
        f"the global root {setup.global_root} does not exist, so nothing was searched\n"
        "  hint: mount or move it back, create it with 'memoryd init', or correct or remove "
        f"its path in {app.paths.config_file}",
    )
    error, text = call(app, "memory_recall", query="deploy gate", scope="project")
    assert not error and "the project deploy gate is staging" in text
    assert not setup.global_root.exists()  # nothing made it again


def test_a_memory_written_over_mcp_names_the_client_that_wrote_it(setup: Setup) -> None:
    """The client's name from its initialize request (clientInfo) becomes the memory's
    ``agent``; the session comes from the server's environment when the client sets one."""
    from mcp.types import Implementation

    from memoryd.memory import parse

    app = App(cwd=setup.repo, env={**os.environ, "CLAUDE_CODE_SESSION_ID": "sess-7"})

    async def main() -> Any:
        info = Implementation(name="claude-code", version="2.1.0")
        async with Client(build_server(app), client_info=info) as client:
            return await client.call_tool(
                "memory_remember", {"kind": "fact", "summary": "The cache warms in 40 s"}
            )

    answer = anyio.run(main)
    assert not answer.is_error, answer
    meta = parse(Path(answer.structured_content["path"]).read_bytes()).meta
    assert (meta["agent"], meta["session"]) == ("claude-code", "sess-7")
