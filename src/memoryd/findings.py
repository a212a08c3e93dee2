"""A problem found in a root, phrased for the user: the file, what is wrong, the fix."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from memoryd.memory import escape_controls


@dataclass(frozen=True)
class Finding:
    path: Path  # the file (or folder) at fault
    message: str  # what is wrong
    fix: str  # the next step, as a command or an edit
    check: str = ""  # the name of the check that found it

    def as_dict(self) -> dict[str, str]:
        return {
            "check": self.check,
            "path": str(self.path),
            "message": self.message,
            "fix": self.fix,
        }

    def text(self) -> str:
        path = escape_controls(str(self.path))  # a newline of a name stays on its line
        return f"{path}: {self.message}\n  fix: {self.fix}"

    def by(self, check: str) -> Finding:
        return replace(self, check=check)
