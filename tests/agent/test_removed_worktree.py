"""A session whose linked worktree was removed under it still gets its project's memory.

Every test removes a real ``git worktree`` (outside the main checkout, as agent tools make
them) while the memoryd process, or the hook's event, still has it as the working folder.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.types import TextContent

from memoryd.agent.remember import Request, remember
from memoryd.app import App
from tests.agent.conftest import Setup
from tests.agent.test_cli_context import fill
from tests.helpers import git

PROJECT_HIT = "### pitfalls/fts5 (project pitfall)"


def worktree(setup: Setup) -> Path:
    folder = setup.repo.parent / "wt" / "feature"
    git(setup.repo, "commit", "-q", "--allow-empty", "-m", "start")
    git(setup.repo, "worktree", "add", "-q", "-b", "feature", str(folder))
    (folder / "src").mkdir()
    return folder


def removed(folder: Path, *args: str, how: str, stdin: str = "") -> Any:
    """A real ``memoryd ARGS`` started in ``folder`` after the folder was removed under it:
    ``how`` is ``rm`` (rm -rf, git still lists the worktree) or ``git`` (git worktree
    remove, which forgets it)."""
    command = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "memoryd", *args])
    top = shlex.quote(str(folder.parent if folder.name == "src" else folder))
    remove = f"rm -rf {top}" if how == "rm" else f"git worktree remove --force {top}"
    script = f"cd {shlex.quote(str(folder))} && {remove} && exec {command}"
    return subprocess.run(
        ["sh", "-c", script], input=stdin, capture_output=True, text=True, timeout=60, check=False
    )


def prompt(folder: Path, session: str = "s1") -> str:
    return json.dumps({"hook_event_name": "UserPromptSubmit", "session_id": session,
                       "cwd": str(folder), "prompt": "FTS5"})  # fmt: skip


def test_a_worktree_deleted_with_rm_is_found_in_the_projects_git(setup: Setup) -> None:
    fill(setup)
    folder = worktree(setup) / "src"
    done = removed(folder, "context", "--hook", "--json", how="rm", stdin=prompt(folder))
    assert (done.returncode, done.stderr) == (0, "")
    answer = json.loads(done.stdout)
    assert PROJECT_HIT in answer["hookSpecificOutput"]["additionalContext"]
    assert "systemMessage" not in answer


def session_start(folder: Path) -> None:
    """Session s1's SessionStart hook, run in ``folder`` while it exists (the session's
    record of its project)."""
    started = json.dumps({"hook_event_name": "SessionStart", "session_id": "s1",
                          "cwd": str(folder)})  # fmt: skip
    first = subprocess.run(
        [sys.executable, "-m", "memoryd", "context", "--hook", "--json"], cwd=folder,
        input=started, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert (first.returncode, first.stderr) == (0, "")


def test_a_worktree_removed_by_git_is_the_sessions_project_an_earlier_hook_saw(
    setup: Setup,
) -> None:
    fill(setup)
    folder = worktree(setup)
    session_start(folder)
    done = removed(folder, "context", "--hook", "--json", how="git", stdin=prompt(folder))
    assert (done.returncode, done.stderr) == (0, "")
    assert PROJECT_HIT in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]


def test_a_removed_worktree_nobody_knows_is_told_and_the_global_block_still_comes(
    setup: Setup,
) -> None:
    fill(setup)
    folder = worktree(setup)
    done = removed(folder, "context", "--hook", "--json", how="git", stdin=prompt(folder, "s2"))
    assert done.returncode == 0
    cause = (
        f"the folder {folder} no longer exists (a removed worktree?), and no registered "
        "project's git lists it as a worktree"
    )
    problem = f"{cause}, so this project's memory is left out: only the global memory is served"
    hint = "start the session again in the project's folder (or a worktree that exists)"
    assert done.stderr == f"memoryd: context --hook: {problem}\n  hint: {hint}\n"
    answer = json.loads(done.stdout)
    assert answer["systemMessage"] == f"memoryd: context --hook: {problem}; hint: {hint}"
    block = answer["hookSpecificOutput"]["additionalContext"]
    assert "- Never commit secrets (`rules/never-commit-secrets`) [global]" in block
    assert PROJECT_HIT not in block
    refused = removed(folder := worktree_again(setup), "remember", "--kind", "fact",
                      "--summary", "Staging runs on Fridays", how="git")  # fmt: skip
    assert refused.returncode == 1
    assert refused.stderr == (
        f"memoryd: error: refusing to remember: the folder {folder} no longer exists (a "
        "removed worktree?), and no registered project's git lists it as a worktree, so "
        "memoryd cannot tell which project's memory it belongs in\n  hint: remember it from "
        "the project's folder, or pass --scope global (MCP: scope 'global') when it holds "
        "for every project\n"
    )
    assert not list((setup.global_root / "facts").glob("staging*"))


def test_a_sessions_record_never_lends_its_project_to_another_removed_folder(
    setup: Setup, tmp_path: Path
) -> None:
    """The session saw this project's worktree; its event then names another project's
    removed worktree: that folder gets no memory of this project."""
    fill(setup)
    folder = worktree(setup)
    session_start(folder)
    other = tmp_path / "other-repo"
    other.mkdir()
    git(other, "init", "-q")
    git(other, "commit", "-q", "--allow-empty", "-m", "start")
    theirs = tmp_path / "wt" / "theirs"
    git(other, "worktree", "add", "-q", "-b", "theirs", str(theirs))
    done = removed(theirs, "context", "--hook", "--json", how="git", stdin=prompt(theirs))
    assert done.returncode == 0
    assert done.stderr.startswith(f"memoryd: context --hook: the folder {theirs} no longer ")
    block = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert PROJECT_HIT not in block
    assert "部署只用 pnpm" not in block  # this project's iron rule


def worktree_again(setup: Setup) -> Path:
    folder = setup.repo.parent / "wt" / "other"
    git(setup.repo, "worktree", "add", "-q", "-b", "other", str(folder))
    return folder


def test_recall_in_a_worktree_deleted_with_rm_finds_the_projects_memories(setup: Setup) -> None:
    fill(setup)
    folder = worktree(setup)
    done = removed(folder, "recall", "bastion", how="rm")
    assert done.returncode == 0, done.stderr
    assert "facts/the-bastion-host-deploys-staging" in done.stdout


def test_the_mcp_server_keeps_serving_its_project_after_its_worktree_is_removed(
    setup: Setup,
) -> None:
    fill(setup)
    folder = worktree(setup)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memoryd", "mcp"], cwd=str(folder),
        env=dict(os.environ),
    )  # fmt: skip

    async def main() -> tuple[str, str, str]:
        async with Client(params) as client:
            git(setup.repo, "worktree", "remove", "--force", str(folder))
            assert not folder.exists()
            recalled = await client.call_tool("memory_recall", {"query": "bastion"})
            context = await client.call_tool("memory_context", {"query": "FTS5"})
            saved = await client.call_tool(
                "memory_remember", {"kind": "fact", "summary": "Release notes live in NEWS"}
            )
            texts = [c.content[0] for c in (recalled, context, saved)]
            return recalled_text(texts[0]), recalled_text(texts[1]), recalled_text(texts[2])

    recalled, context, saved = anyio.run(main)
    assert recalled.startswith("## facts/the-bastion-host-deploys-staging (project fact, ")
    assert PROJECT_HIT in context
    assert saved == "Saved facts/release-notes-live-in-news (project memory, kind fact)."
    assert (setup.project / "facts" / "release-notes-live-in-news.md").is_file()


def recalled_text(content: object) -> str:
    assert isinstance(content, TextContent)
    return content.text


def test_an_mcp_server_in_a_removed_worktree_nobody_knows_says_so_in_each_answer(
    setup: Setup,
) -> None:
    fill(setup)
    global_fact = Request(kind="fact", summary="Bastion keys rotate", scope="global")
    remember(App(cwd=setup.repo), global_fact)
    folder = worktree(setup)
    git(setup.repo, "worktree", "remove", "--force", str(folder))
    from tests.agent.test_mcp import call

    app = App(cwd=folder)
    error, text = call(app, "memory_recall", query="bastion")
    assert not error
    assert text.startswith(
        f"memoryd: the folder {folder} no longer exists (a removed worktree?), and no "
        "registered project's git lists it as a worktree, so this project's memory is left "
        "out: only the global memory is served; hint: start the session again in the "
        "project's folder (or a worktree that exists)\n\n## facts/bastion-keys-rotate (global "
    )
    assert "the-bastion-host-deploys-staging" not in text
