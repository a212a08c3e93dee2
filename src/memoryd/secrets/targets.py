"""What ``memoryd scan`` scans: files, folders, or the staged blobs of a repository.

The staged mode reads the index (what the commit will contain), not the working
tree, through one ``git cat-file --batch`` process. Its git gets the environment as
it is (:func:`memoryd.gitcli.hook_env`): under a pre-commit hook ``GIT_INDEX_FILE``
names the index being committed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from memoryd import gitcli
from memoryd.errors import PathError
from memoryd.secrets.scanner import (
    AllowlistCache,
    SecretFinding,
    decode,
    scan_file_text,
    scan_name,
    scan_path,
)

SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", ".tox"})


@dataclass
class ScanReport:
    files: int = 0
    findings: list[tuple[str, SecretFinding]] = field(default_factory=list)  # (display path, it)

    def add(self, where: str, found: list[SecretFinding]) -> None:
        self.files += 1
        self.findings.extend((where, f) for f in found)


def scan_paths(paths: list[Path], cwd: Path) -> ScanReport:
    """Scan files and folders (recursively, skipping VCS and dependency folders)."""
    report = ScanReport()
    allowlists = AllowlistCache()
    base = os.path.realpath(cwd)
    for given in paths:
        if not given.exists():
            raise PathError(f"{given} does not exist", hint="check the path and run again")
        for file in _files_under(Path(os.path.realpath(given))):
            allow, shown = allowlists.for_file(file), _display(file, base)
            report.add(shown, scan_name(shown, allow) + scan_path(file, allow=allow))
    return report


def _files_under(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    found: list[Path] = []
    stack = [str(path)]
    while stack:
        folder = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in SKIP_DIRS:
                    stack.append(entry.path)
            elif entry.is_file(follow_symlinks=False):
                found.append(Path(entry.path))
    return found


def _display(file: Path, base: str) -> str:
    full = str(file) if file.is_absolute() else os.path.realpath(file)
    if full.startswith(base + os.sep):
        return full[len(base) + 1 :]
    return str(file)


def scan_staged(repo: Path) -> ScanReport:
    """Scan the index content of every file added, copied, modified or renamed in the index."""
    top = _git(repo, "rev-parse", "--show-toplevel").strip()
    if not top:
        raise PathError(f"{repo} is not inside a git work tree", hint="run it in a repository")
    top_path = Path(top)
    names = [n for n in _git(top_path, "diff", "--cached", "--name-only", "-z",
                             "--diff-filter=ACMR").split("\0") if n]  # fmt: skip
    report = ScanReport()
    if not names:
        return report
    blobs = _staged_blobs(top_path, set(names))
    allowlists = AllowlistCache()
    for name, data in _cat_blobs(top_path, blobs):
        allow = allowlists.for_file(top_path / name)
        found = scan_name(name, allow)  # a binary file's name is committed too
        text = decode(data)
        if text is not None:
            found += scan_file_text(name, text, allow)
        if found or text is not None:
            report.add(name, found)
    return report


def _staged_blobs(top: Path, names: set[str]) -> list[tuple[str, str]]:
    entries = []
    for record in _git(top, "ls-files", "-s", "-z").split("\0"):
        if not record:
            continue
        meta, _tab, name = record.partition("\t")
        mode, sha, _stage = meta.split()
        if name in names and mode.startswith("100"):  # regular files, not links or submodules
            entries.append((name, sha))
    return entries


def _cat_blobs(top: Path, blobs: list[tuple[str, str]]) -> list[tuple[str, bytes]]:
    request = "".join(f"{sha}\n" for _name, sha in blobs).encode()
    done = _run(top, "cat-file", "--batch", input=request, timeout=None)  # as big as the commit
    out, pos, result = done.out, 0, []
    for name, _sha in blobs:
        header_end = out.index(b"\n", pos)
        size = int(out[pos:header_end].split()[2])
        start = header_end + 1
        result.append((name, out[start : start + size]))
        pos = start + size + 1
    return result


def _git(cwd: Path, *args: str) -> str:
    return _run(cwd, *args, timeout=gitcli.LOCAL_TIMEOUT_S).out.decode("utf-8", "surrogateescape")


def _run(cwd: Path, *args: str, timeout: float | None, input: bytes | None = None) -> gitcli.Done:
    try:
        done = gitcli.run(args, cwd=cwd, env=gitcli.hook_env(), timeout=timeout, input=input)
    except FileNotFoundError as exc:
        raise PathError("git is not installed", hint="install git and run again") from exc
    if done.code != 0:
        raise PathError(
            f"{cwd} is not inside a git work tree ({done.err.strip().splitlines()[-1:] or ''})",
            hint="run it in a repository, or pass the files to scan",
        )
    return done
