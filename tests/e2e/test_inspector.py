"""memoryd's MCP server driven by the MCP Inspector CLI (``@modelcontextprotocol/inspector-cli``).

The Inspector lists the tools and resources and calls every tool, each call a fresh
``memoryd mcp`` over stdio, as a user checking the server by hand would.

The Inspector CLI 1.0.3 looks for its own package.json relative to the *current*
folder (``../package.json``) and fails with "Cannot find module" from anywhere else, so
it runs from its ``build/`` folder and memoryd gets the project with ``--project``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.clients import NODE_DIR, Client, client_env
from tests.e2e.conftest import Project

pytestmark = pytest.mark.e2e

BUILD = NODE_DIR / "node_modules" / "@modelcontextprotocol" / "inspector-cli" / "build"


def inspect(node_bin: Path, project: Project, method: str, *args: str) -> dict[str, Any]:
    client = Client(node_bin, client_env(project.home), BUILD)
    done = client.run(
        "mcp-inspector-cli", "--cli", "memoryd", "mcp", "--project", str(project.repo),
        "--method", method, *args, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, (done.stdout, done.stderr)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def called(node_bin: Path, project: Project, tool: str, *pairs: str) -> tuple[bool, str]:
    args = ["--tool-name", tool] + (["--tool-arg", *pairs] if pairs else [])
    result = inspect(node_bin, project, "tools/call", *args)
    return bool(result.get("isError")), "\n".join(c["text"] for c in result["content"])


def test_the_inspector_lists_and_calls_every_tool(node_bin: Path, project: Project) -> None:
    listed = inspect(node_bin, project, "tools/list")["tools"]
    tools = {t["name"]: t for t in listed}
    assert set(tools) == {
        "memory_recall", "memory_remember", "memory_forget", "memory_inspect", "memory_context",
    }  # fmt: skip
    assert tools["memory_recall"]["annotations"]["readOnlyHint"] is True
    assert tools["memory_forget"]["annotations"]["destructiveHint"] is True
    assert called(node_bin, project, "memory_remember", "kind=pitfall",
                  "summary=FTS5 分词漏掉两字中文词", "body=trigram 要求至少三个字符",
                  'load_when=["分词"]') == (
        False, "Saved pitfalls/fts5-分词漏掉两字中文词 (project memory, kind pitfall).",
    )  # fmt: skip
    memory_id = "pitfalls/fts5-分词漏掉两字中文词"
    saved = [project.memory / "pitfalls" / "fts5-分词漏掉两字中文词.md"]
    assert "trigram 要求至少三个字符" in saved[0].read_text()
    error, text = called(node_bin, project, "memory_recall", "query=分词")
    assert not error and text.startswith(f"## {memory_id} (project pitfall, score ")
    error, text = called(node_bin, project, "memory_inspect")
    assert not error and memory_id in text
    error, text = called(node_bin, project, "memory_context", "query=分词")
    assert not error and text.startswith("<memory>\n") and "trigram 要求至少三个字符" in text
    assert called(node_bin, project, "memory_recall", "query=x", "scopes=global") == (
        True,
        "memory_recall: unrecognized arguments: scopes\n"
        "  hint: memory_recall takes query, limit, kind, scope, type, scope_id, everywhere",
    )
    error, text = called(node_bin, project, "memory_forget", f"id={memory_id}")
    assert not error and text.startswith(f"Forgot {memory_id} (")
    assert not saved[0].exists()


def test_the_inspector_reads_the_advertised_resources(node_bin: Path, project: Project) -> None:
    project.remember("--kind", "rule", "--summary", "部署只用 pnpm")
    resources = inspect(node_bin, project, "resources/list")["resources"]
    uris = {r["uri"] for r in resources}
    assert uris == {"memoryd://project/ROOT.md", "memoryd://global/ROOT.md"}
    read = inspect(node_bin, project, "resources/read", "--uri", "memoryd://project/ROOT.md")
    (content,) = read["contents"]
    assert content["mimeType"] == "text/markdown"
    assert content["text"] == (project.memory / "ROOT.md").read_text()
    assert "- 部署只用 pnpm (`rules/部署只用-pnpm`)" in content["text"]

