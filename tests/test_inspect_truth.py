"""inspect and the compiled files say what is true of a root people filled by hand."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests import helpers
from tests.test_inspect import findings, mem, recompile, root, write

__all__ = ["root"]  # the fixture, shared with test_inspect


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The CLI run from HOME: outside any repository, so no project root is involved."""
    return helpers.run_cli(*args, cwd=cwd or Path(os.environ["HOME"]))


def run_process(*args: str) -> subprocess.CompletedProcess[str]:
    """:func:`run_cli` in a real process, which a hang cannot keep past 20 s."""
    return helpers.run_cli_process(*args, cwd=Path(os.environ["HOME"]), timeout=20)


def test_an_id_that_does_not_match_the_path_is_reported(root: Path) -> None:
    write(root / "facts/ci.md", mem("CI runs on arm64", id="facts/ci-runners"))
    recompile(root)
    assert findings() == [
        (
            "files.malformed",
            "memory/facts/ci.md",
            "id 'facts/ci-runners' does not match its path (expected 'facts/ci')",
            "set 'id: facts/ci' (the id is the file's path), or remove the 'id:' line",
        )
    ]


def test_a_binary_md_is_reported_as_binary_and_never_listed(root: Path) -> None:
    (root / "facts/diagram.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64))
    done = run_cli("compile")
    assert done.returncode == 0, done.stdout + done.stderr
    index = (root / "facts/index.md").read_text(encoding="utf-8")
    assert "diagram" not in index
    assert "| [facts/](facts/index.md) | 1 |" in (root / "ROOT.md").read_text(encoding="utf-8")
    assert findings() == [
        (
            "files.unreadable",
            "memory/facts/diagram.md",
            "is a binary file, not Markdown: it is not listed in index.md or ROOT.md",
            "move it out of the memory root, or rename it so that it does not end in .md",
        )
    ]
    listing = run_cli("inspect").stdout
    assert "facts/diagram" not in listing.split("\n\n")[0]


def test_conflicts_md_is_not_a_memory_in_index_md(root: Path) -> None:
    write(
        root / "CONFLICTS.md",
        "---\nid: CONFLICTS\nkind: conflicts\n"
        "summary: 1 memory conflict copies from sync wait to be merged\n---\n# Sync conflicts\n",
    )
    write(root / "notes.md", mem("Top-level note"))
    done = run_cli("compile")
    assert done.returncode == 0, done.stdout + done.stderr
    index = (root / "index.md").read_text(encoding="utf-8")
    assert "CONFLICTS" not in index and "conflict copies" not in index
    assert "- [notes.md](notes.md) `notes`: Top-level note" in index
    assert "| [./](index.md) | 1 |" in (root / "ROOT.md").read_text(encoding="utf-8")
    assert "CONFLICTS" not in run_cli("inspect").stdout


def test_a_link_leading_out_of_the_root_is_reported_with_its_target(
    root: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "dotfiles" / "deploy.md"
    write(elsewhere, mem("Deploy notes kept in dotfiles"))
    os.symlink(elsewhere, root / "facts" / "deploy.md")
    assert findings() == [
        (
            "files.outside",
            "memory/facts/deploy.md",
            f"is a link to {elsewhere}, outside the root, so it is skipped: memoryd reads, "
            "indexes and syncs only files inside a root",
            "move the file into the root (a link may point the other way), or delete the link",
        )
    ]


def test_a_link_that_loops_or_dangles_is_reported_and_every_command_still_runs(
    root: Path,
) -> None:
    """A self-referential link's stat raises ELOOP: reindex, recall, compile and inspect
    each stopped with an internal error, for good, over one stray link."""
    os.symlink("loop.md", root / "pitfalls" / "loop.md")
    os.symlink("gone.md", root / "pitfalls" / "moved.md")
    write(root / "facts/kept.md", mem("Kept") + "a wombat lives here\n")
    for args in (("reindex",), ("recall", "wombat"), ("compile",)):
        done = run_cli(*args)
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stderr == ""
    assert "facts/kept" in run_cli("recall", "wombat").stdout
    assert "| pitfalls/ | 0 |" in (root / "ROOT.md").read_text(encoding="utf-8")
    nowhere = "which leads to no file (the target is gone, or the link loops), so it is skipped"
    fix = "delete the link, or point it at a memory file inside the root"
    assert findings() == [
        ("files.outside", "memory/pitfalls/loop.md", f"is a link to loop.md, {nowhere}", fix),
        ("files.outside", "memory/pitfalls/moved.md", f"is a link to gone.md, {nowhere}", fix),
    ]


def test_a_fifo_named_like_a_memory_is_skipped_and_hangs_no_command(root: Path) -> None:
    """Opening a FIFO waits for a writer: reindex, recall, inspect and forget hung for
    good on a stray ``mkfifo facts/pipe.md`` (and so would the daemon's index)."""
    os.mkfifo(root / "facts" / "pipe.md")
    os.symlink("pipe.md", root / "facts" / "to-pipe.md")
    write(root / "facts/kept.md", mem("Kept") + "a wombat lives here\n")
    for args in (("reindex",), ("recall", "wombat"), ("compile",)):
        done = run_process(*args)
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stderr == ""
    assert "facts/kept" in run_process("recall", "wombat").stdout
    gone = run_process("forget", "facts/pipe")
    assert (gone.returncode, gone.stdout) == (1, "")
    assert gone.stderr.startswith("memoryd: error: no memory with id 'facts/pipe' in ")
    assert "- [kept.md](kept.md) `facts/kept`: Kept\n" in (root / "facts/index.md").read_text()
    done = run_process("inspect")
    assert done.returncode == 1, done.stdout + done.stderr
    special = (
        "is not a regular file (a FIFO, a socket or a device), so it is skipped: memoryd "
        "reads only regular files"
    )
    fix = "move it out of the memory root, or rename it so that it does not end in .md"
    assert findings() == [
        ("files.outside", "memory/facts/pipe.md", special, fix),
        ("files.outside", "memory/facts/to-pipe.md", special, fix),
    ]


def test_a_rule_typed_into_root_md_s_rules_block_survives_compile(root: Path) -> None:
    root_md = root / "ROOT.md"
    typed = "- Never deploy on a Friday (the on-call is thin)\n"
    root_md.write_text(
        root_md.read_text(encoding="utf-8").replace(
            "_No iron rules yet._\n", "_No iron rules yet._\n" + typed
        ),
        encoding="utf-8",
    )
    done = run_cli("compile")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "_No iron rules yet._\n<!-- memoryd:end rules -->\n" + typed in root_md.read_text(
        encoding="utf-8"
    )
    assert run_cli("compile").stdout == "every compiled file is up to date\n"
    assert findings() == []


def test_a_newline_in_a_file_name_cannot_end_a_compiled_block(root: Path) -> None:
    name = "x\n<!-- memoryd:end rules -->\ntail"
    write(root / f"rules/{name}.md", "---\nkind: rule\nsummary: Sneaky\n---\nbody\n")
    done = run_cli("compile")
    assert done.returncode == 0, done.stdout + done.stderr
    shown = "x\\x0a<!-- memoryd:end rules -->\\x0atail"
    root_md = (root / "ROOT.md").read_text(encoding="utf-8")
    assert f"## Iron rules\n\n- Sneaky (`rules/{shown}`)\n<!-- memoryd:end rules -->\n" in root_md
    index = (root / "rules/index.md").read_text(encoding="utf-8")
    assert index.endswith(
        f"- [{shown}.md](x%0A%3C!--%20memoryd:end%20rules%20--%3E%0Atail.md) "
        f"`rules/{shown}`: Sneaky\n"
    )
    assert findings() == [
        (
            "files.name",
            f"memory/rules/{name}.md",
            f"has a control character in its name (rules/{shown}.md): compiled files and "
            "commit messages show it escaped, and its id is hard to type",
            "rename the file without it",
        )
    ]
    assert run_cli("compile").stdout == "every compiled file is up to date\n"


def test_remember_says_when_damaged_markers_keep_root_md_as_it_was(root: Path) -> None:
    root_md = root / "ROOT.md"
    damaged = root_md.read_text(encoding="utf-8").replace("<!-- memoryd:end rules -->\n", "")
    root_md.write_text(damaged, encoding="utf-8")
    done = run_cli("remember", "--kind", "rule", "--summary", "Never force-push main")
    assert done.returncode == 0, done.stderr
    assert done.stderr == (
        "memoryd: warning: saved, but ROOT.md was not updated: "
        f"{root_md}: damaged markers, line 12: block 'directory' begins inside block 'rules' "
        "(begun on line 7, never ended)\n"
        "  fix: repair the memoryd marker comments by hand (every begin needs its end, each "
        "block once) or delete them all to get fresh blocks, then run 'memoryd compile'\n"
    )
    assert root_md.read_text(encoding="utf-8") == damaged


def test_a_fence_with_trailing_blanks_still_opens_and_closes_the_frontmatter(root: Path) -> None:
    """Editors keep a space or tab after '---' (Jekyll and python-frontmatter read it as a
    fence): the memory was all body, '(no summary)' in index.md, and inspect told the
    person to add the summary: line they had written."""
    write(root / "facts/spaced.md", "--- \nkind: fact\nsummary: Spaced fences\n---\t\nbody\n")
    write(root / "facts/crlf.md", "---  \r\nkind: fact\r\nsummary: CRLF spaced\r\n--- \r\nb\r\n")
    done = run_cli("compile")
    assert done.returncode == 0, done.stdout + done.stderr
    index = (root / "facts/index.md").read_text(encoding="utf-8")
    assert "- [spaced.md](spaced.md) `facts/spaced`: Spaced fences\n" in index
    assert "- [crlf.md](crlf.md) `facts/crlf`: CRLF spaced\n" in index
    assert findings() == []


def test_a_field_written_in_another_case_is_reported_with_the_name_memoryd_reads(
    root: Path,
) -> None:
    """'Summary:' and 'Pinned:' were kept as unknown fields without a word, so inspect
    said to add the summary: the person had written, and 'kind: Rule' was no iron rule."""
    write(root / "rules/caps.md", "---\nKind: rule\nSummary: Use pnpm\nload-when: [npm]\n---\nb\n")
    write(root / "rules/shout.md", "---\nkind: Rule\nsummary: Never force-push main\n---\nb\n")
    recompile(root)
    caps, shout = "memory/rules/caps.md", "memory/rules/shout.md"
    assert findings() == [
        ("files.malformed", caps, "'Kind:' is not read: memoryd reads 'kind:'",
         "rename 'Kind:' to 'kind:'"),
        ("files.malformed", caps, "'Summary:' is not read: memoryd reads 'summary:'",
         "rename 'Summary:' to 'summary:'"),
        ("files.malformed", caps, "'load-when:' is not read: memoryd reads 'load_when:'",
         "rename 'load-when:' to 'load_when:'"),
        ("files.malformed", shout, "kind 'Rule' is not the kind 'rule' (kinds are lower case): "
         "write kind: rule", "correct the 'kind:' field in the frontmatter"),
        ("files.summary", caps, "has no summary, so index.md and recall show '(no summary)'",
         "add a one-line 'summary:' to its frontmatter"),
    ]  # fmt: skip


def test_a_utf16_memory_is_read_and_reported_not_called_binary(root: Path) -> None:
    """Windows PowerShell's '>' (and Notepad's 'Unicode') save UTF-16 with a byte order
    mark: every other byte is a NUL, so the file was 'a binary file, not Markdown', left
    out of index.md, and the fix said to move it out of the root."""
    text = "---\r\nkind: fact\r\nsummary: Written by PowerShell\r\n---\r\nquokka notes\r\n"
    (root / "facts/win.md").write_bytes(text.encode("utf-16"))  # BOM, little-endian
    (root / "facts/mac.md").write_bytes(b"\xfe\xff" + text.encode("utf-16-be"))
    done = run_cli("compile")
    assert done.returncode == 0, done.stdout + done.stderr
    index = (root / "facts/index.md").read_text(encoding="utf-8")
    assert "- [win.md](win.md) `facts/win`: Written by PowerShell\n" in index
    assert "- [mac.md](mac.md) `facts/mac`: Written by PowerShell\n" in index
    utf16 = (
        "is UTF-16 text (as Windows PowerShell's > writes it): memoryd reads it, but edits "
        "only UTF-8 files"
    )
    fix = "save it as UTF-8: iconv -f UTF-16 -t UTF-8 {0} > {0}.new, then mv {0}.new {0}"
    assert findings() == [
        ("files.malformed", "memory/facts/mac.md", utf16, fix.format("mac.md")),
        ("files.malformed", "memory/facts/win.md", utf16, fix.format("win.md")),
    ]
    found = run_cli("recall", "quokka")
    assert "facts/win" in found.stdout and "facts/mac" in found.stdout, found.stdout
