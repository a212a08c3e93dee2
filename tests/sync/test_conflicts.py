"""Pure decisions: conflict-copy names and frontmatter, markers, compiled blocks, exclude."""

from __future__ import annotations

import subprocess
from pathlib import Path

from memoryd.compile.markers import fill as fill_blocks
from memoryd.compile.markers import strip as strip_blocks
from memoryd.conflicts import (
    blob_id,
    copy_path,
    has_conflict_markers,
    never_synced,
    parse_copy_name,
    render_conflicts,
    strip_copy_fields,
)
from memoryd.sync import exclude
from memoryd.sync.derived import is_generated


def test_copy_path_names_device_and_the_texts_blob_id() -> None:
    sha = blob_id(b"text\n")
    assert sha == subprocess.run(
        ["git", "hash-object", "--stdin"], input=b"text\n", capture_output=True, check=True
    ).stdout.decode().strip()
    assert copy_path("pitfalls/x.md", "laptop", b"text\n", set()) == (
        f"pitfalls/x.conflict-laptop-{sha[:10]}.md"
    )
    taken = {f"x.conflict-my-pc-{sha[:10]}.md"}  # another text at that name
    assert copy_path("x.md", "my pc!", b"text\n", taken) == f"x.conflict-my-pc-{sha[:10]}-2.md"
    same = {f"x.conflict-my-pc-{sha[:10]}.md": sha}  # the very copy: it is the copy's own
    assert copy_path("x.md", "my pc!", b"text\n", same) == f"x.conflict-my-pc-{sha[:10]}.md"


def test_copy_names_parse_back_to_the_original() -> None:
    for original in ("pitfalls/x.md", "a.b.md", "ROOT.md", "notes"):
        copy = copy_path(original, "desk", b"t", set())
        name = parse_copy_name(copy)
        assert name is not None and name.original == original and name.device == "desk"
    assert parse_copy_name("pitfalls/x.md") is None
    assert parse_copy_name("facts/conflict-resolution.md") is None


def test_resolve_strips_the_fields_older_copies_carry() -> None:
    local = b"---\nid: facts/x\nsummary: s\n---\nbody\n"
    old_copy = (
        b"---\nid: facts/x.conflict-desk-20261129T233005Z\nsummary: s\nconflict_of: facts/x\n"
        b"conflict_device: desk\nconflict_time: 1\n---\nbody\n"
    )
    assert strip_copy_fields(old_copy, "facts/x.md") == local
    assert strip_copy_fields(local, "facts/x.md") == local


def test_conflict_markers_detected_only_as_a_full_run() -> None:
    assert has_conflict_markers(b"a\n<<<<<<< HEAD\nx\n=======\ny\n>>>>>>> other\n")
    assert not has_conflict_markers(b"git writes <<<<<<< HEAD lines; see docs\n")
    assert not has_conflict_markers(b"just text\n")


def test_never_synced() -> None:
    assert never_synced(".state.json") and never_synced("facts/.x.md.swp")
    assert never_synced("facts/x.md~") and not never_synced("facts/x.md")


def test_conflicts_file_is_deterministic_and_absent_when_empty() -> None:
    assert render_conflicts([]) is None
    copy = "facts/x.conflict-desk-20261129T233005Z.md"
    name = parse_copy_name(copy)
    assert name is not None
    one = render_conflicts([(copy, name)])
    assert one == render_conflicts([(copy, name)])
    assert one is not None and b"facts/x.conflict-desk-20261129T233005Z" in one
    assert b"2026-11-29 23:30 UTC" in one


def test_strip_and_fill_blocks_keep_human_text() -> None:
    text = (
        "# Memory\nhuman\n<!-- memoryd:begin rules (x) -->\n- r\n<!-- memoryd:end rules -->\nend\n"
    )
    stripped, bodies = strip_blocks(text)
    assert "- r" not in stripped and "human" in stripped and bodies == {"rules": "- r\n"}
    assert fill_blocks(stripped, bodies) == text
    damaged = "<!-- memoryd:begin rules -->\nno end\n"
    assert strip_blocks(damaged) == (damaged, {})


def test_generated_files() -> None:
    assert is_generated("ROOT.md") and is_generated("facts/index.md")
    assert is_generated("CONFLICTS.md") and not is_generated("facts/x.md")


def test_exclude_block_round_trips_and_keeps_user_lines(tmp_path: Path) -> None:
    git_dir, top = tmp_path / ".git", tmp_path
    (git_dir / "info").mkdir(parents=True)
    (git_dir / "info/exclude").write_text("# user line\n*.log\n")
    (top / "a [1].md").write_text("---\nsync: false\n---\nx\n")
    assert exclude.keep_out(git_dir, [top], ["a [1].md"]) == ["a [1].md"]
    text = (git_dir / "info/exclude").read_text()
    assert text.startswith("# user line\n*.log\n") and "/a\\ \\[1\\].md" in text
    assert exclude.split(text)[1] == ["a [1].md"]
    (top / "a [1].md").write_text("now synced\n")
    assert exclude.keep_out(git_dir, [top], []) == []
    assert (git_dir / "info/exclude").read_text() == "# user line\n*.log\n"
