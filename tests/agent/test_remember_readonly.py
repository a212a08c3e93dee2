"""A root memoryd may not write in: remember says exactly what it did.

A read-only root folder (its facts/ still writable) took the memory, then failed
compiling ROOT.md: exit 1 with "Permission denied: <root>/.memoryd-tmp-...", a temp file
that never existed, and the agent that retried was refused as a duplicate of the memory
it had been told was not written.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import run_cli

# what the kernel says to a new file there: EPERM (immutable, for root), else EACCES
REFUSED = "Operation not permitted" if os.geteuid() == 0 else "Permission denied"


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """No new file in ``folder``: mode 0555, or, for root (whom modes do not stop), the
    immutable attribute; skipped where neither can be had."""
    if os.geteuid() != 0:
        before = folder.stat().st_mode
        folder.chmod(0o555)
        try:
            yield
        finally:
            folder.chmod(before)
        return
    done = subprocess.run(["chattr", "+i", str(folder)], capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot make {folder} read-only as root: {done.stderr.decode().strip()}")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=True)


def remember(summary: str) -> subprocess.CompletedProcess[str]:
    return run_cli("remember", "--scope", "global", "--kind", "fact", "--summary", summary,
                   "the body")  # fmt: skip


def test_saved_then_compile_refused_is_exit_0_with_the_folder_named(
    isolated_home: Path,
) -> None:
    assert run_cli("init").returncode == 0
    root = isolated_home / "memory"
    with read_only(root):
        done = remember("the staging gate opens at nine")
    assert done.returncode == 0, done.stderr
    assert (root / "facts/the-staging-gate-opens-at-nine.md").exists()
    assert done.stderr.startswith(
        "memoryd: warning: saved, but ROOT.md was not updated: "
        f"{REFUSED}: {root}; make it writable (ls -ld {root} shows who may "
        "write there), then run 'memoryd compile'\n"
    )
    assert ".memoryd-tmp-" not in done.stderr
    assert run_cli("compile").returncode == 0  # once the folder is writable, it settles
    again = remember("the staging gate opens at nine")
    assert again.returncode == 1 and "already covers" in again.stderr  # it was written


def test_a_folder_that_refuses_the_memory_is_named_and_nothing_is_written(
    isolated_home: Path,
) -> None:
    assert run_cli("init").returncode == 0
    facts = isolated_home / "memory" / "facts"
    before = sorted(p.name for p in facts.iterdir())
    with read_only(facts):
        done = remember("the staging gate opens at nine")
    assert done.returncode == 1
    first = done.stderr.splitlines()[0]
    assert first == f"memoryd: error: {REFUSED}: {facts}: the command stopped before it finished"
    assert sorted(p.name for p in facts.iterdir()) == before


def test_accept_into_a_read_only_root_is_exit_0_with_the_folder_named(
    isolated_home: Path,
) -> None:
    """The rule was on disk and the proposal gone, yet accept exited 1: the person who ran
    it again was told there was no such proposal."""
    assert run_cli("init").returncode == 0
    root = isolated_home / "memory"
    proposed = run_cli("remember", "--scope", "global", "--kind", "rule-proposal",
                       "--summary", "tag every release", "--force", "the body")  # fmt: skip
    assert proposed.returncode == 0, proposed.stderr
    (root / "rules").mkdir(exist_ok=True)
    with read_only(root):
        done = run_cli("accept", "proposals/tag-every-release")
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        "accepted proposals/tag-every-release as rules/tag-every-release: it is now an iron rule\n"
    )
    assert done.stderr.startswith(
        "memoryd: warning: accepted, but ROOT.md was not updated: "
        f"{REFUSED}: {root}; make it writable (ls -ld {root} shows who may "
        "write there), then run 'memoryd compile'\n"
    )
    assert (root / "rules/tag-every-release.md").exists()
    assert not (root / "proposals/tag-every-release.md").exists()


def test_forget_in_a_read_only_root_is_exit_0_with_the_folder_named(
    isolated_home: Path,
) -> None:
    """The file was gone, yet forget exited 1: run again, it said no such memory."""
    assert run_cli("init").returncode == 0
    root = isolated_home / "memory"
    assert remember("the staging gate opens at nine").returncode == 0
    with read_only(root):
        done = run_cli("forget", "facts/the-staging-gate-opens-at-nine")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("forgot facts/the-staging-gate-opens-at-nine: removed ")
    assert done.stderr.startswith(
        "memoryd: warning: forgotten, but ROOT.md was not updated: "
        f"{REFUSED}: {root}; make it writable (ls -ld {root} shows who may "
        "write there), then run 'memoryd compile'\n"
    )
    assert not (root / "facts/the-staging-gate-opens-at-nine.md").exists()
    assert run_cli("compile").returncode == 0  # once the folder is writable, it settles
