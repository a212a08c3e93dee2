"""Citations end to end in real git repositories: anchored, followed, found stale."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memoryd.app import App
from memoryd.cites.citation import Citation, find, fingerprint, lines_of, parse
from memoryd.errors import UsageError
from memoryd.init.plugin import init_project
from tests.agent.conftest import Setup
from tests.agent.test_mcp import call
from tests.helpers import git, run_cli

RETRY = [f"line {n}: filler" for n in range(1, 40)] + [
    "def retry(call):",
    "    for attempt in range(3):",
    "        try:",
    "            return call()",
    "        except TimeoutError:",
    "            sleep(2 ** attempt)",
] + [f"line {n}: tail" for n in range(46, 61)]  # fmt: skip


def write(repo: Path, rel: str, lines: list[str], commit: str | None = "add") -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    if commit:
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", commit)


def remember(repo: Path, *args: str) -> str:
    done = run_cli("remember", "--kind", "fact", "--json", *args, cwd=repo)
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["id"])


def recall(repo: Path, query: str) -> dict[str, object]:
    done = run_cli("recall", query, "--json", cwd=repo)
    assert done.returncode == 0, done.stderr
    hits = json.loads(done.stdout)
    assert len(hits) == 1, hits
    return dict(hits[0])


@pytest.fixture
def cited(setup: Setup) -> tuple[Setup, str]:
    write(setup.repo, "src/net/retry.py", RETRY)
    ident = remember(
        setup.repo, "--summary", "retry backs off three times", "--cite",
        "src/net/retry.py:40-45", "the retry loop in src/net/retry.py backs off 3 times",
    )  # fmt: skip
    return setup, ident


def test_remember_fingerprints_the_cited_lines(cited: tuple[Setup, str]) -> None:
    setup, ident = cited
    text = (setup.project / f"{ident}.md").read_text()
    expected = fingerprint(RETRY[39:45])
    assert f"cites:\n- src/net/retry.py:40-45#{expected}\n" in text
    hit = recall(setup.repo, "backs")
    assert hit["stale"] is False
    assert hit["cites"] == [{"cite": f"src/net/retry.py:40-45#{expected}", "state": "fresh"}]


def test_editing_the_cited_lines_makes_the_memory_stale_everywhere(
    cited: tuple[Setup, str],
) -> None:
    setup, ident = cited
    changed = [*RETRY]
    changed[40] = "    for attempt in range(5):"
    write(setup.repo, "src/net/retry.py", changed, commit=None)
    hit = recall(setup.repo, "backs")
    assert hit["stale"] is True
    assert hit["cites"][0]["reason"] == "the cited lines changed in src/net/retry.py"  # type: ignore[index]
    text = run_cli("recall", "backs", cwd=setup.repo).stdout
    assert (
        "MAY BE STALE: src/net/retry.py:40-45: the cited lines changed in src/net/retry.py" in text
    )
    block = run_cli("context", "retry backs off", cwd=setup.repo).stdout
    assert "## May be stale, check before trusting" in block
    assert f"- {ident} (project): retry backs off three times — src/net/retry.py:40-45" in block
    assert "backs off 3 times" not in block  # the body is not injected as if true
    inspect = run_cli("inspect", cwd=setup.repo)
    assert inspect.returncode == 1
    assert "may be stale: src/net/retry.py:40-45: the cited lines changed" in inspect.stdout
    assert "-    for attempt in range(3):" in inspect.stdout  # then, from git history
    assert "+    for attempt in range(5):" in inspect.stdout  # now
    assert f"memoryd cite --confirm {ident}" in inspect.stdout
    # a person checked it: confirm re-anchors, and it is fresh again
    confirm = run_cli("cite", ident, "--confirm", cwd=setup.repo)
    assert confirm.returncode == 0, confirm.stdout + confirm.stderr
    assert recall(setup.repo, "backs")["stale"] is False
    assert f"#{fingerprint(changed[39:45])}" in (setup.project / f"{ident}.md").read_text()


def test_lines_inserted_above_move_the_citation_and_it_stays_fresh(
    cited: tuple[Setup, str],
) -> None:
    setup, _ = cited
    write(setup.repo, "src/net/retry.py", ["import time", "import os", "", *RETRY], commit=None)
    hit = recall(setup.repo, "backs")
    assert hit["stale"] is False
    state = hit["cites"][0]  # type: ignore[index]
    assert state["state"] == "moved"
    assert state["now"].startswith("src/net/retry.py:43-48#")


def test_a_deleted_file_is_stale_and_a_git_mv_is_followed(cited: tuple[Setup, str]) -> None:
    setup, _ = cited
    git(setup.repo, "mv", "src/net/retry.py", "src/net/backoff.py")  # staged, not committed
    state = recall(setup.repo, "backs")["cites"][0]  # type: ignore[index]
    assert (state["state"], state["now"].split("#")[0]) == ("moved", "src/net/backoff.py:40-45")
    git(setup.repo, "commit", "-qm", "rename")
    state = recall(setup.repo, "backs")["cites"][0]  # type: ignore[index]
    assert (state["state"], state["now"].split("#")[0]) == ("moved", "src/net/backoff.py:40-45")
    git(setup.repo, "rm", "-q", "src/net/backoff.py")
    git(setup.repo, "commit", "-qm", "drop")
    hit = recall(setup.repo, "backs")
    assert hit["stale"] is True
    assert hit["cites"][0]["reason"] == "src/net/retry.py no longer exists"  # type: ignore[index]


def test_a_global_memory_is_checked_only_in_its_own_project(setup: Setup, tmp_path: Path) -> None:
    write(setup.repo, "src/app.py", ["a = 1", "b = 2"])
    git(setup.repo, "remote", "add", "origin", "git@github.com:me/app.git")
    ident = remember(
        setup.repo, "--scope", "global", "--summary", "app keeps b at two", "--cite",
        "src/app.py:2", "b stays 2",
    )  # fmt: skip
    text = (setup.global_root / f"{ident}.md").read_text()
    assert f"- github.com/me/app::src/app.py:2#{fingerprint(['b = 2'])}" in text
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    init_project(App(cwd=other), other)
    write(other, "src/app.py", ["a = 1", "b = 3"])  # the same path, other code
    assert recall(other, "stays")["cites"][0]["state"] == "elsewhere"  # type: ignore[index]
    assert recall(other, "stays")["stale"] is False
    write(setup.repo, "src/app.py", ["a = 1", "b = 3"], commit=None)
    assert recall(setup.repo, "stays")["stale"] is True


def test_cite_fix_fills_in_a_hand_written_citation(setup: Setup) -> None:
    write(setup.repo, "docs/notes.txt", ["alpha", "beta", "gamma"])
    memory = setup.project / "facts" / "hand.md"
    memory.parent.mkdir(exist_ok=True)
    memory.write_text(
        "---\nkind: fact  # written by hand\nsummary: beta is the second word\n"
        "cites: [docs/notes.txt:2]\n---\nbeta comes second\n"
    )
    inspect = run_cli("inspect", cwd=setup.repo)
    assert "cites docs/notes.txt:2 without a fingerprint" in inspect.stdout
    assert "memoryd cite --fix facts/hand" in inspect.stdout
    done = run_cli("cite", "facts/hand", "--fix", cwd=setup.repo)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "fresh      docs/notes.txt:2" in done.stdout
    text = memory.read_text()
    assert f"docs/notes.txt:2#{fingerprint(['beta'])}" in text
    assert "kind: fact  # written by hand\n" in text  # the person's line is kept
    assert "without a fingerprint" not in run_cli("inspect", cwd=setup.repo).stdout


def test_the_mcp_tool_cites_too(setup: Setup) -> None:
    write(setup.repo, "src/app.py", ["x = 1", "y = 2"])
    app = App(cwd=setup.repo)
    error, text = call(
        app, "memory_remember", kind="fact", summary="y is two in app", body="y = 2",
        cites=["src/app.py:2"],
    )  # fmt: skip
    assert not error, text
    saved = next((setup.project / "facts").glob("*.md")).read_text()
    assert f"src/app.py:2#{fingerprint(['y = 2'])}" in saved
    write(setup.repo, "src/app.py", ["x = 1", "y = 3"], commit=None)
    error, text = call(app, "memory_recall", query="two")
    assert "MAY BE STALE, check before trusting: src/app.py:2: the cited lines changed" in text
    error, text = call(app, "memory_remember", kind="fact", summary="z", cites=["../etc/passwd"])
    assert error and text.startswith("not a citation: '../etc/passwd'")


def test_cite_refuses_what_cannot_be_cited(setup: Setup) -> None:
    write(setup.repo, "a.txt", ["one"])
    done = run_cli(
        "remember", "--kind", "fact", "--summary", "s", "--cite", "a.txt:3", cwd=setup.repo
    )
    assert done.returncode == 2
    assert done.stderr == (
        "memoryd: error: cannot cite a.txt:3: the file has only 1 line\n"
        "  hint: cite lines within 1-1\n"
    )
    done = run_cli(
        "remember", "--kind", "fact", "--summary", "s", "--cite", "nope.txt", cwd=setup.repo
    )
    assert done.returncode == 2
    assert done.stderr.startswith("memoryd: error: cannot cite nope.txt: No such file or directory")


def test_fingerprints_ignore_line_ends_and_trailing_space() -> None:
    assert lines_of(b"a  \r\nb\t\r\n") == ["a", "b"]
    assert fingerprint(["a", "b"]) == fingerprint(lines_of(b"a \nb\n"))
    assert fingerprint(["a", "b"]) != fingerprint(["a", " b"])
    with pytest.raises(UsageError):
        parse("src/x.py:9-3")


@given(
    st.lists(st.text(alphabet="abc \n", max_size=6), min_size=3, max_size=30),
    st.integers(0, 10),
    st.data(),
)
def test_cited_text_is_found_wherever_lines_push_it(
    lines: list[str], pad: int, data: st.DataObject
) -> None:
    lines = [line.replace("\n", "").rstrip() for line in lines]
    start = data.draw(st.integers(1, len(lines)))
    end = data.draw(st.integers(start, len(lines)))
    original = Citation("f", start, end, fingerprint(lines[start - 1 : end]))
    moved = [f"new {i}" for i in range(pad)] + lines
    place = find(moved, original)
    assert place is not None
    assert fingerprint(moved[place[0] - 1 : place[1]]) == original.hash
    assert place[1] - place[0] == end - start
