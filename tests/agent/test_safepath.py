from __future__ import annotations

import os
from pathlib import Path

import pytest

from memoryd.errors import PathError
from memoryd.safepath import HINT, inside


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    (root / "pitfalls").mkdir(parents=True)
    (root / ".git").mkdir()
    return root


def refusal(root: Path, name: str) -> str:
    with pytest.raises(PathError) as caught:
        inside(root, name, ".md")
    assert caught.value.hint == HINT
    return caught.value.message


def test_a_plain_id_maps_into_the_root(root: Path) -> None:
    assert inside(root, "pitfalls/sqlite", ".md") == root / "pitfalls" / "sqlite.md"
    assert inside(root, "new-folder/x", ".md") == root / "new-folder" / "x.md"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("../outside", "refusing '../outside': '..' leads outside the memory root"),
        ("pitfalls/../../x", "refusing 'pitfalls/../../x': '..' leads outside the memory root"),
        ("..\\x", "refusing '..\\\\x': '..' leads outside the memory root"),
        ("/etc/passwd", "refusing '/etc/passwd': an absolute path is outside the memory root"),
        ("C:/x", "refusing 'C:/x': an absolute path is outside the memory root"),
        (".git/config", "refusing '.git/config': memoryd never touches files inside .git"),
        (
            "a/.GIT/hooks/pre-commit",
            "refusing 'a/.GIT/hooks/pre-commit': memoryd never touches files inside .git",
        ),
        ("a\x00b", "refusing 'a\\x00b': it contains a NUL byte"),
        ("", "refusing an empty id"),
        (".", "refusing '.': it names the memory root itself"),
    ],
)
def test_escapes_are_refused_with_the_reason(root: Path, name: str, message: str) -> None:
    assert refusal(root, name) == message


def test_a_symlink_leading_out_is_refused(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("keep me")
    (root / "linked").symlink_to(outside)
    (root / "pitfalls" / "file.md").symlink_to(outside / "secret.md")
    resolved = (outside / "secret.md").resolve()
    assert refusal(root, "linked/secret") == (
        f"refusing 'linked/secret': it resolves to {resolved}, outside the memory root {root}"
    )
    assert refusal(root, "pitfalls/file") == (
        f"refusing 'pitfalls/file': it resolves to {resolved}, outside the memory root {root}"
    )
    assert (outside / "secret.md").read_text() == "keep me"


def test_a_symlink_into_git_is_refused(root: Path) -> None:
    (root / "sneaky").symlink_to(root / ".git")
    assert refusal(root, "sneaky/config") == (
        "refusing 'sneaky/config': memoryd never touches files inside .git"
    )


def test_a_symlink_inside_the_root_is_allowed_and_returned_as_the_link(root: Path) -> None:
    (root / "pitfalls" / "real.md").write_text("x")
    os.symlink(root / "pitfalls" / "real.md", root / "pitfalls" / "alias.md")
    assert inside(root, "pitfalls/alias", ".md") == root / "pitfalls" / "alias.md"
