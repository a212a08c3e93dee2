"""A big first commit, and a git that runs past its timeout (issue 38).

The first sync of a root of 100k memories ran ``git reset -q HEAD --pathspec-from-file``
with every path (quadratic: ~75 s of CPU), passed the 60 s timeout, and the
``TimeoutExpired`` escaped as an internal error with a stale ``index.lock`` left behind:
every later cycle repeated it. The speed is bench/sync_bench.py's; these tests hold the
behaviour.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memoryd.sync import git as sync_git
from memoryd.sync import pack
from memoryd.sync.repo import Repo
from tests.helpers import git
from tests.sync.world import World, memory


def _locks(root: Path, home: Path) -> list[Path]:
    """git's locks: the repository's and those of the private indexes (fresh or kept)."""
    private = [p for p in home.rglob("*.lock") if "index" in p.name]
    return [*root.joinpath(".git").rglob("*.lock"), *private]


def test_a_git_past_its_timeout_is_an_error_naming_the_step_and_leaves_no_lock(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(3):
        world.a.write(f"facts/slow{n}.md", memory(f"facts/slow{n}", "slow", f"{n}\n"))
    # a clean filter that takes its time on the new files only: git status lists them
    # untracked without hashing them, update-index (holding its index's lock) waits on it.
    # With *.md, status re-hashing a racy tracked file timed out first, or not, by load.
    git(world.a.root, "config", "filter.slow.clean", "sleep 2; cat")
    (world.a.root / ".git/info/attributes").write_text("facts/slow*.md filter=slow\n")
    monkeypatch.setattr(sync_git, "LOCAL_TIMEOUT_S", 1.0)
    outcome = world.a.sync()
    assert outcome.status == "error", outcome
    assert outcome.error == "git update-index ran longer than 1 s and was stopped"
    assert outcome.hint is not None and "tries again on the next cycle" in outcome.hint
    assert _locks(world.a.root, world.a.home) == []
    monkeypatch.undo()
    (world.a.root / ".git/info/attributes").unlink()
    assert world.a.sync().pushed


def test_a_first_commit_of_many_memories_leaves_the_users_index_equal_to_head(
    world: World,
) -> None:
    for n in range(1500):
        path = world.a.root / f"facts/m{n:04d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(memory(f"facts/m{n:04d}", f"m{n}", f"{n}\n"))
    outcome = world.a.sync()
    assert outcome.pushed, outcome
    status = git(world.a.root, "status", "--porcelain")
    assert status == "", status[:300]
    done = subprocess.run(
        ["git", "diff", "--cached", "--quiet", "HEAD", "--", "facts"],
        cwd=world.a.root, check=False,
    )  # fmt: skip
    assert done.returncode == 0


def test_many_blobs_are_read_through_one_git_byte_for_byte(world: World) -> None:
    """The push's secret check read each outgoing blob with its own git (100k processes,
    181 s of CPU in a first push of 100k memories): one cat-file --batch reads them."""
    texts = [b"", b"one line\n", b"\x00\xff binary\nwith\nnewlines\n" * 50]
    shas = [
        subprocess.run(
            ["git", "hash-object", "-w", "--stdin"], input=data, cwd=world.a.root,
            capture_output=True, check=True,
        ).stdout.decode().strip()
        for data in texts
    ]  # fmt: skip
    found = sync_git.Git(world.a.root).blobs([*shas, "0" * 40])
    assert found == dict(zip(shas, texts, strict=True))


def _loose_objects(root: Path) -> int:
    said = dict(
        line.split(": ", 1) for line in git(root, "count-objects", "-v").splitlines() if line
    )
    return int(said["count"])


def _many(root: Path, n: int, folder: str = "facts") -> None:
    for i in range(n):
        path = root / f"{folder}/bulk{i:04d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(memory(f"{folder}/bulk{i:04d}", f"bulk {i}", f"text {i}\n"))


def test_a_bulk_commit_packs_its_blobs_and_git_still_cleans_each_file(world: World) -> None:
    """update-index wrote each blob of a bulk change as a file of its own (100k files, 25 s
    of CPU in a first commit, 24 s more in its push): they go into a pack first, and
    update-index, finding them there, still decides each blob, mode and stat entry."""
    root = world.a.root
    _many(root, 300)
    git(root, "config", "core.autocrlf", "true")  # git turns this CRLF into LF: not our bytes
    (root / "facts/crlf.md").write_bytes(memory("facts/crlf", "crlf", "one\n").encode()
                                         .replace(b"\n", b"\r\n"))  # fmt: skip
    (root / "facts/run.md").write_text(memory("facts/run", "run", "executable\n"))
    (root / "facts/run.md").chmod(0o755)
    (root / "facts/link.md").symlink_to("bulk0001.md")
    before = _loose_objects(root)
    outcome = world.a.sync()
    assert outcome.pushed, outcome
    # the trees, the commit and a few objects of git's own are loose; no blob is
    assert _loose_objects(root) - before < 50, git(root, "count-objects", "-v")
    assert git(root, "status", "--porcelain") == ""
    assert (
        b"\r"
        not in subprocess.run(
            ["git", "show", "HEAD:facts/crlf.md"], cwd=root, capture_output=True, check=True
        ).stdout
    )
    tree = git(root, "ls-tree", "HEAD", "facts/run.md", "facts/link.md", "facts/bulk0001.md")
    modes = {line.split("\t")[1]: line.split()[0] for line in tree.splitlines()}
    assert modes == {"facts/bulk0001.md": "100644", "facts/link.md": "120000",
                     "facts/run.md": "100755"}  # fmt: skip
    assert git(root, "fsck", "--connectivity-only", "--no-dangling") == ""
    world.settle()
    assert world.b.read("facts/bulk0299.md") == world.a.read("facts/bulk0299.md")


def test_a_prune_right_after_the_pack_is_written_loses_nothing(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing names the pack's blobs until the tree is held: a hand-run prune then deletes
    them, and update-index writes each again (loose) as it finds it missing."""
    _many(world.a.root, 150)
    real = pack.write

    def then_prune(repo: Repo, blobs: list[bytes]) -> None:
        real(repo, blobs)
        subprocess.run(["git", "gc", "-q", "--prune=now"], cwd=repo.top, check=True)

    monkeypatch.setattr(pack, "write", then_prune)
    outcome = world.a.sync()
    monkeypatch.undo()
    assert outcome.pushed, outcome
    assert git(world.a.root, "fsck", "--connectivity-only", "--no-dangling") == ""
    assert "text 149" in git(world.a.root, "show", "HEAD:facts/bulk0149.md")
    world.settle()


def test_a_push_sends_no_deltas(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """A first commit of 100k memories is packed in chunks (6 packs), and git's push
    searched deltas between objects of different packs: 6.45 s of CPU, the slowest git
    step in bench/sync_bench.py. memoryd's pushes search none (pack.window=0)."""
    monkeypatch.setattr(pack, "CHUNK_FILES", 120)  # two packs, as 20,000 are to 100k
    shared = "".join(f"a line every one of these memories shares, number {n}\n" for n in range(60))
    for i in range(240):
        path = f"facts/alike{i:03d}.md"
        world.a.write(path, memory(path.removesuffix(".md"), "alike", shared + f"{i}\n"))
    assert world.a.sync().pushed
    listing = "".join(
        git(world.remote, "verify-pack", "-v", str(index))
        for index in (world.remote / "objects/pack").glob("*.idx")
    )
    assert "non delta: " in listing  # the remote kept the pack it was sent
    deltas = [line for line in listing.splitlines() if line.startswith("chain length")]
    assert deltas == [], listing[-500:]
    assert world.b.sync().ok
    assert world.b.read("facts/alike239.md") == world.a.read("facts/alike239.md")
