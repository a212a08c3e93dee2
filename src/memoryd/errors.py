"""The one error hierarchy. The CLI catches :class:`MemorydError` in one place.

Every message says what went wrong *and* names the next step, because the user
sees exactly this text and nothing else (no traceback for user errors).
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: the one leaf every command imports needs none
if TYPE_CHECKING:
    from pathlib import Path


class MemorydError(Exception):
    """A problem the user must act on. Exit code 1."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message}\n  hint: {self.hint}"
        return self.message


class UsageError(MemorydError):
    """The command line itself is wrong. Exit code 2."""

    exit_code = 2


class ConfigError(MemorydError):
    """config.yaml or the environment is invalid."""


class PathError(MemorydError):
    """A path that memoryd refuses to touch (outside a root, not a repo, ...)."""


class Refused(MemorydError):
    """An input memoryd refuses (a secret, a duplicate, an existing id, ...)."""


class WriteRefused(Refused):
    """``memoryd guard`` refuses a write. Exit code 3, apart from memoryd's own failures (1),
    so a hook can block on a refusal and never on a broken config.yaml."""

    exit_code = 3


class SecretRefused(Refused):
    """A memory refused because it contains what looks like a secret."""


class DuplicateRefused(Refused):
    """A memory refused because an existing one already says it."""


class ProjectLost(PathError):
    """The working folder no longer exists and no project is known to have had it
    (:mod:`memoryd.workdir`): only the global memory can be served."""

    def __init__(self, cause: str, message: str, hint: str) -> None:
        super().__init__(message, hint)
        self.cause = cause  # why the project is unknown, without what follows from it


class AlreadyRunning(MemorydError):
    """Another daemon holds this home's lock (:class:`memoryd.runlock.DaemonLock`)."""

    def __init__(self, pid: int | None, lock_file: Path) -> None:
        who = f"pid {pid}" if pid else "another process"
        super().__init__(
            f"memoryd is already running ({who}, lock {lock_file})",
            hint="stop that daemon first (memoryd service uninstall, or kill the pid)",
        )
        self.pid = pid
