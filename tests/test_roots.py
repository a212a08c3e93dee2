from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memoryd.errors import PathError
from memoryd.rootfs import is_memory_name
from memoryd.roots import (
    _TEMP_RE,
    init_root,
    is_temp_name,
    listed,
    listed_by_name,
    project_root_for,
    walk_root,
)


def test_init_root_is_idempotent(tmp_path: Path) -> None:
    root = tmp_path / "m"
    first = init_root(root)
    assert set(first.created) == {
        ".",
        "rules/",
        "preferences/",
        "decisions/",
        "pitfalls/",
        "facts/",
        "ROOT.md",
        ".gitignore",
    }
    snapshot = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    assert init_root(root).created == ()
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == snapshot
    assert (root / ".gitignore").read_text() == ".state.json\n"
    assert "## Current goal" in (root / "ROOT.md").read_text()


def test_init_root_keeps_an_existing_gitignore_and_root_md(tmp_path: Path) -> None:
    root = tmp_path / "m"
    root.mkdir()
    (root / ".gitignore").write_text("*.log")
    (root / "ROOT.md").write_text("mine\n")
    init_root(root)
    assert (root / ".gitignore").read_text() == "*.log\n.state.json\n"
    assert (root / "ROOT.md").read_text() == "mine\n"


def test_init_root_refuses_a_file(tmp_path: Path) -> None:
    (tmp_path / "m").write_text("x")
    with pytest.raises(PathError, match="exists and is not a folder"):
        init_root(tmp_path / "m")


@pytest.mark.parametrize(
    "name", [".a.md.swp", "a.md~", ".#a.md", "4913", "a.md.tmp", ".a.md.kate-swp", "#a.md#"]
)
def test_editor_temp_names(name: str) -> None:
    assert is_temp_name(name)


def test_walk_root_skips_git_temp_files_and_links_out(tmp_path: Path) -> None:
    root = tmp_path / "m"
    (root / "facts" / "deep").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / ".git" / "x.md").write_text("no")
    (root / "facts" / "a.md").write_text("a")
    (root / "facts" / "deep" / "b.md").write_text("b")
    (root / "facts" / ".a.md.swp").write_text("swap")
    (root / "facts" / "note.txt").write_text("not markdown")
    outside = tmp_path / "secret.md"
    outside.write_text("outside")
    os.symlink(outside, root / "facts" / "link-out.md")
    os.symlink(root / "facts" / "a.md", root / "facts" / "link-in.md")
    os.symlink(root, root / "facts" / "loop")
    os.symlink("self.md", root / "facts" / "self.md")  # stat: ELOOP
    os.symlink(root / "facts" / "gone.md", root / "facts" / "dangling.md")
    os.mkfifo(root / "facts" / "pipe.md")  # opening it waits for a writer
    found = [p.relative_to(root).as_posix() for p in walk_root(root)]
    assert found == ["facts/a.md", "facts/deep/b.md", "facts/link-in.md"]


def test_project_root_for(tmp_path: Path) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "src").mkdir()
    assert project_root_for(tmp_path / "repo" / "src") == (tmp_path / "repo" / ".memory").resolve()
    assert project_root_for(tmp_path) is None


# -- is_temp_name's string tests agree with the regex they replace ---------------------
_PIECES = st.sampled_from(
    ["", ".", "#", "~", "\n", ".#", "a", "4913", ".md", ".tmp", ".swp", ".swq", ".bak", ".orig",
     ".kate-swp", ".crswap", ".memoryd-tmp-", ".~lock.", ".goutputstream-", "x.sw", "部署"]
)  # fmt: skip


@given(st.lists(_PIECES, max_size=4).map("".join))
def test_is_temp_name_agrees_with_the_regex(name: str) -> None:
    assert is_temp_name(name) == bool(_TEMP_RE.search(name))


@given(st.text(max_size=12))
def test_is_temp_name_agrees_with_the_regex_on_any_text(name: str) -> None:
    assert is_temp_name(name) == bool(_TEMP_RE.search(name))


@given(st.lists(_PIECES, max_size=4).map("".join) | st.text(max_size=12).map(lambda t: t + ".md"))
def test_a_memory_name_is_never_a_temp_name(name: str) -> None:
    """is_memory_name skips the temp tests: no temp pattern matches a visible ``*.md``."""
    full_rule = name.endswith(".md") and not name.startswith(".") and not is_temp_name(name)
    assert is_memory_name(name) == full_rule


def test_listed_says_exactly_what_walk_root_lists(tmp_path: Path) -> None:
    """Walk, compile listing, reconcile and watcher share roots.listed: it must agree with
    the walk on every path of a hostile tree (links in and out, a linked folder, a folder
    named like a memory, hidden and VCS folders, temp names, non-UTF-8 and Chinese names)."""
    root = tmp_path / "记忆 root"
    for folder in ("facts/deep", ".git", ".hidden", "node_modules", "dir.md", "real"):
        (root / folder).mkdir(parents=True)
    names = [
        "facts/a.md", "facts/deep/b.md", ".git/x.md", ".hidden/y.md", "node_modules/z.md",
        "facts/.a.md.swp", "facts/note.txt", "facts/部署.md", "facts/#x.md#", "real/r.md",
        "dir.md/inner.md", "facts/.dot.md",
    ]  # fmt: skip
    for name in names:
        (root / name).write_text("x")
    (root / os.fsdecode(b"facts/caf\xe9.md")).write_bytes(b"latin-1 name")
    outside = tmp_path / "secret.md"
    outside.write_text("outside")
    os.symlink(outside, root / "facts" / "link-out.md")
    os.symlink(root / "facts" / "a.md", root / "facts" / "link-in.md")
    os.symlink(root / "missing.md", root / "facts" / "dangling-in.md")
    os.symlink(root / "real", root / "linked-folder")
    os.symlink(root / "real", root / "facts" / "folder-link.md")
    os.symlink(root, root / "facts" / "loop")
    os.symlink("self.md", root / "facts" / "self.md")
    os.mkfifo(root / "facts" / "pipe.md")
    os.symlink(root / "facts" / "pipe.md", root / "facts" / "to-pipe.md")
    walked = set(walk_root(root))
    every = {Path(d) / f for d, dirs, files in os.walk(root) for f in [*dirs, *files]}
    every |= {root / "linked-folder" / "r.md", root / "facts" / "gone.md"}
    assert {p for p in every if listed(root, p)} == walked
    assert {p for p in walked if not listed_by_name(root, p)} == set()
    assert not listed(root, tmp_path / "elsewhere.md")
