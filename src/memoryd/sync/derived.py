"""The sync engine's seams to the compiler and the secret scanner, in one place.

Generated files (ROOT.md's compiled blocks, every index.md, CONFLICTS.md) are
never a user-facing conflict: either side is taken and the root recompiled.
Every file about to be committed goes through the secret scanner in process.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from memoryd.compile import blocks as compiler
from memoryd.config.sections import Config, RootConfig
from memoryd.roots import CONFLICTS_FILE, ROOT_FILE

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Quarantined:
    """One reason a file is quarantined (the secret scanner's, or our own)."""

    path: str  # root-relative
    line: int
    rule: str
    preview: str


def is_generated(relpath: str) -> bool:
    """Root-relative ``relpath`` is compiled output (never a user-facing conflict)."""
    return relpath == CONFLICTS_FILE or compiler.is_generated(relpath)


def is_fully_generated(relpath: str) -> bool:
    """Generated from end to end (ROOT.md has human text around its blocks)."""
    return is_generated(relpath) and relpath != ROOT_FILE


def recompile(root: RootConfig, config: Config) -> list[Path]:
    """Rewrite the root's compiled files (only changed bytes); the paths written."""
    from memoryd.compile.writer import compile_root

    return compile_root(root, config).touched


def scan_file(path: Path, root: Path) -> list[Quarantined]:
    """Secret findings in one file about to be committed: in its name (line 0), then its text."""
    from memoryd.secrets.scanner import allowlist_for, scan_name, scan_path

    rel = path.relative_to(root).as_posix()
    allow = allowlist_for(path, root)
    found = scan_name(rel, allow) + scan_path(path, root, allow=allow)
    return [Quarantined(rel, f.line, f.rule, f.preview) for f in found]
