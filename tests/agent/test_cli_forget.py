from __future__ import annotations

import json
from pathlib import Path

import pytest

from memoryd.memory import parse
from tests.agent.conftest import Setup
from tests.helpers import run_cli


def remember(setup: Setup, *args: str) -> None:
    done = run_cli("remember", *args, cwd=setup.repo)
    assert done.returncode == 0, done.stderr


def test_forget_removes_the_file_clears_links_and_recompiles(setup: Setup) -> None:
    remember(setup, "--kind", "decision", "--summary", "Use Postgres 15", "--id", "decisions/db")
    remember(
        setup, "--kind", "decision", "--summary", "Use Postgres 16", "--supersedes", "decisions/db"
    )
    new = setup.project / "decisions" / "use-postgres-16.md"
    old = setup.project / "decisions" / "db.md"
    done = run_cli("forget", "decisions/use-postgres-16", cwd=setup.repo)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        f"forgot decisions/use-postgres-16: removed {new}\n  cleared the link in decisions/db\n"
        "  decisions/db is current again: it was superseded by decisions/use-postgres-16, so "
        "recall returns it; forget it too if it is out of date\n"
    )
    assert not new.exists()
    assert "superseded_by" not in parse(old.read_bytes()).meta
    index = (setup.project / "decisions" / "index.md").read_text()
    assert "use-postgres-16" not in index and "decisions/db" in index
    gone = run_cli("forget", "decisions/use-postgres-16", cwd=setup.repo)
    assert gone.returncode == 1
    assert gone.stderr == (
        f"memoryd: error: no memory with id 'decisions/use-postgres-16' in {setup.project}, "
        f"{setup.global_root}\n  hint: memoryd inspect lists every memory with its id\n"
    )


def test_forget_says_which_memory_it_superseded_is_current_again(setup: Setup) -> None:
    """Clearing the older memory's superseded_by brings it back into recall: forget said only
    that it cleared a link, and an outdated memory was current again without a word. The
    newer one, which only superseded the forgotten memory, is not named."""
    remember(setup, "--kind", "decision", "--summary", "Use Postgres 15", "--id", "decisions/pg15")
    remember(setup, "--kind", "decision", "--summary", "Use Postgres 16", "--id", "decisions/pg16",
             "--supersedes", "decisions/pg15")  # fmt: skip
    remember(setup, "--kind", "decision", "--summary", "Use Postgres 17", "--id", "decisions/pg17",
             "--supersedes", "decisions/pg16")  # fmt: skip
    assert "Postgres 15" not in run_cli("recall", "postgres", cwd=setup.repo).stdout
    done = run_cli("forget", "decisions/pg16", "--json", cwd=setup.repo)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "id": "decisions/pg16", "path": str(setup.project / "decisions" / "pg16.md"),
        "root": str(setup.project), "unlinked": ["decisions/pg15", "decisions/pg17"], "left": [],
        "linked_from": [], "current_again": ["decisions/pg15"],
    }  # fmt: skip
    assert "Postgres 15" in run_cli("recall", "postgres", cwd=setup.repo).stdout


def test_forget_names_a_link_it_cannot_clear_in_a_memory_that_does_not_parse(
    setup: Setup,
) -> None:
    """relink cannot edit a frontmatter it cannot read: the link was left to dangle and
    forget said it cleared everything. Hand-written CRLF links are cleared line by line."""
    remember(setup, "--kind", "decision", "--summary", "Use Postgres 16", "--id", "decisions/db")
    folder = setup.project / "decisions"
    crlf = b"---\r\nkind: decision\r\nsummary: C\r\nsupersedes:  # older\r\n  - decisions/db\r\n"
    (folder / "crlf.md").write_bytes(crlf + b"  - decisions/x\r\n---\r\nbody\r\n")
    broken = b"---\nkind: decision\nsupersedes: decisions/db\nload_when:\n\t- pg\n---\nbody\n"
    (folder / "broken.md").write_bytes(broken)
    done = run_cli("forget", "decisions/db", cwd=setup.repo)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        f"forgot decisions/db: removed {folder / 'db.md'}\n"
        "  cleared the link in decisions/crlf\n"
        "  left the link in decisions/broken: its frontmatter does not parse (memoryd inspect "
        "says where); fix it, then remove 'decisions/db' from it\n"
    )
    assert (folder / "broken.md").read_bytes() == broken  # a person's bytes, untouched
    assert (folder / "crlf.md").read_bytes() == (
        b"---\r\nkind: decision\r\nsummary: C\r\nsupersedes:  # older\r\n  - decisions/x\r\n"
        b"---\r\nbody\r\n"
    )


def test_forget_names_the_memories_whose_text_links_to_it(setup: Setup) -> None:
    """A body is the person's and is never edited: a Markdown link to the forgotten file
    was left to dangle, and forget said nothing of it. Links elsewhere are not named."""
    remember(setup, "--kind", "fact", "--summary", "Builds take 9 minutes", "--id", "facts/my build")
    facts, pitfalls = setup.project / "facts", setup.project / "pitfalls"
    pitfalls.mkdir(exist_ok=True)
    near = b"---\nkind: fact\nsummary: N\n---\nsee [it](my%20build.md#top)\n"
    far = b'---\nkind: pitfall\nsummary: F\n---\n![x](<../facts/my build.md> "t")\n'
    other = b"---\nkind: fact\nsummary: O\n---\n[a](https://h/facts/my%20build.md) [b](near.md)\n"
    (facts / "near.md").write_bytes(near)
    (pitfalls / "far.md").write_bytes(far)
    (facts / "other.md").write_bytes(other)
    done = run_cli("forget", "facts/my build", cwd=setup.repo)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        f"forgot facts/my build: removed {facts / 'my build.md'}\n"
        "  facts/near still links to my build.md in its text: edit that link by hand\n"
        "  pitfalls/far still links to my build.md in its text: edit that link by hand\n"
    )
    assert [(facts / "near.md").read_bytes(), (pitfalls / "far.md").read_bytes()] == [near, far]


def test_forget_of_the_last_memory_of_a_folder_drops_its_index(setup: Setup) -> None:
    remember(setup, "--kind", "fact", "--summary", "Builds take 9 minutes", "--id", "facts/build")
    assert (setup.project / "facts" / "index.md").exists()
    assert run_cli("forget", "facts/build.md", "--json", cwd=setup.repo).returncode == 0
    assert not (setup.project / "facts" / "index.md").exists()


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("../victim", "refusing '../victim': '..' leads outside the memory root"),
        ("facts/../../victim", "refusing 'facts/../../victim': '..' leads outside the memory root"),
        (".git/config", "refusing '.git/config': memoryd never touches files inside .git"),
    ],
)
def test_traversal_is_refused_and_the_target_is_untouched(
    setup: Setup, target: str, message: str
) -> None:
    victim = setup.repo / "victim.md"
    victim.write_text("do not delete\n")
    (setup.project / ".git").mkdir()
    (setup.project / ".git" / "config.md").write_text("[core]\n")
    done = run_cli("forget", target, cwd=setup.repo)
    assert done.returncode == 1
    assert done.stderr.startswith(f"memoryd: error: {message}\n")
    assert victim.read_text() == "do not delete\n"
    assert (setup.project / ".git" / "config.md").read_text() == "[core]\n"


def test_an_absolute_path_and_a_symlink_out_are_refused(setup: Setup, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "victim.md"
    victim.write_text("keep\n")
    (setup.project / "facts" / "link.md").symlink_to(victim)
    (setup.project / "elsewhere").symlink_to(outside)
    absolute = run_cli("forget", str(outside / "victim"), cwd=setup.repo)
    assert absolute.returncode == 1
    assert absolute.stderr.startswith(
        f"memoryd: error: refusing '{outside / 'victim'}': an absolute path is outside the memory root\n"
    )
    for target in ("facts/link", "elsewhere/victim"):
        done = run_cli("forget", target, "--scope", "project", cwd=setup.repo)
        assert done.returncode == 1
        assert done.stderr.startswith(
            f"memoryd: error: refusing '{target}': it resolves to {victim.resolve()}, outside the "
            f"memory root {setup.project}\n"
        )
    assert victim.read_text() == "keep\n"
    assert (setup.project / "facts" / "link.md").is_symlink()


def test_compiled_files_are_not_memories(setup: Setup) -> None:
    before = (setup.project / "ROOT.md").read_bytes()
    done = run_cli("forget", "ROOT", "--scope", "project", cwd=setup.repo)
    assert done.returncode == 1
    assert done.stderr.startswith(
        "memoryd: error: 'ROOT' is a file memoryd compiles, not a memory\n"
    )
    assert (setup.project / "ROOT.md").read_bytes() == before
