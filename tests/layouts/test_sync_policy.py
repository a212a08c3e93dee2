"""What each layout lets travel through git: sessions/ and Claude transcripts never do."""

from __future__ import annotations

from pathlib import Path

from memoryd.init.layered import init_layered_tree
from memoryd.layouts import gitignore_lines, syncable
from tests.helpers import git


def write(root: Path, rel: str, text: str = "x\n") -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def committed(repo: Path) -> list[str]:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "snapshot")
    return sorted(git(repo, "ls-files").split())


def test_layered_gitignore_keeps_sessions_out_of_commits(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    init_layered_tree(root, "p1")
    files = [
        "global/MEMORY.md",
        "projects/p1/memory-arch.md",
        "sessions/s1/checkpoint.md",
        "sessions/s1/notes.md",
        "sessions/s1/tasks/T1/progress.md",
    ]
    for rel in files:
        write(root, rel)
    git(root, "init", "-q")
    tracked = committed(root)
    assert tracked == [
        ".gitignore",
        "global/MEMORY.md",
        "projects/p1/MEMORY.md",
        "projects/p1/memory-arch.md",
    ]
    assert all(syncable("layered", rel) for rel in tracked)
    assert not any(syncable("layered", rel) for rel in files if rel.startswith("sessions/"))


def test_claude_gitignore_keeps_only_memory_files(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    files = [
        "-home-me-app/memory/MEMORY.md",
        "-home-me-app/memory/user_role.md",
        "-home-me-app/memory/notes.txt",
        "-home-me-app/memory/deeper/x.md",
        "-home-me-app/0b7c-session.jsonl",
        "-home-me-app/todos/list.md",
        "-home-me-other/memory/feedback_tests.md",
        "stray.md",
    ]
    for rel in files:
        write(root, rel)
    write(root, ".gitignore", "\n".join(gitignore_lines("claude")) + "\n")
    git(root, "init", "-q")
    tracked = committed(root)
    memories = [
        "-home-me-app/memory/MEMORY.md",
        "-home-me-app/memory/user_role.md",
        "-home-me-other/memory/feedback_tests.md",
    ]
    assert tracked == sorted([".gitignore", *memories])
    assert [rel for rel in files if syncable("claude", rel)] == memories
