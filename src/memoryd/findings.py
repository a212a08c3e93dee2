"""A problem found in a root, phrased for the user: the file, what is wrong, the fix.

``check`` names the ``memoryd inspect`` check that found it (``compiled.stale``,
``files.summary``: :func:`memoryd.checks.run_checks` sets it). The compile finds problems
too (damaged markers in ROOT.md, an unreadable memory), outside any check: their JSON
(``memoryd compile --json``, ``reindex --json``) has no ``check`` rather than an empty
one, and inspect names them by the check that reports them (``compiled.stale``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from memoryd.memory import escape_controls


@dataclass(frozen=True)
class Finding:
    path: Path  # the file (or folder) at fault
    message: str  # what is wrong
    fix: str  # the next step, as a command or an edit
    check: str = ""  # the name of the inspect check that found it ("": the compile did)

    def as_dict(self) -> dict[str, str]:
        named = {"check": self.check} if self.check else {}
        return {**named, "path": str(self.path), "message": self.message, "fix": self.fix}

    def text(self) -> str:
        path = escape_controls(str(self.path))  # a newline of a name stays on its line
        return f"{path}: {self.message}\n  fix: {self.fix}"

    def by(self, check: str) -> Finding:
        return replace(self, check=check)
