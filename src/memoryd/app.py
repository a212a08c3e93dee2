"""What every command gets: the environment, memoryd's paths, the loaded config.

Built once at the entry point and passed down; nothing below it reads
``os.environ`` or config.yaml on its own.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from memoryd.errors import PathError, ProjectLost
from memoryd.paths import Paths, resolve_paths

if TYPE_CHECKING:  # config (and YAML) load when a command first asks for it
    from memoryd.config.sections import Config


def current_dir(env: Mapping[str, str]) -> Path:
    """The working directory; when it was deleted under the process (a removed worktree,
    the folder an agent session started in), the shell's name for it in ``$PWD``.

    ``os.getcwd()`` fails in a deleted folder, but the roots a command sees follow from the
    folder's path (its project is found by walking up from it), so the name is enough.
    """
    try:
        return Path(os.getcwd())
    except FileNotFoundError:
        named = env.get("PWD", "")
        if os.path.isabs(named):
            return Path(named)
        raise PathError(
            "the current folder no longer exists (it was deleted or moved)",
            hint="cd to an existing folder and run the command again",
        ) from None


@dataclass
class App:
    """The process's environment, working directory and streams; config and paths on first use."""

    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    cwd: Path = field(default_factory=lambda: current_dir(os.environ))
    out: TextIO = field(default_factory=lambda: sys.stdout)
    err: TextIO = field(default_factory=lambda: sys.stderr)
    # the working folder is gone and its project could not be told (memoryd.workdir.settle)
    lost: ProjectLost | None = None

    @cached_property
    def paths(self) -> Paths:
        return resolve_paths(self.env)

    @cached_property
    def config(self) -> Config:
        from memoryd.config.loader import load_config

        return load_config(self.paths)

    def reload_config(self) -> Config:
        self.__dict__.pop("config", None)
        return self.config

    def emit(self, as_json: bool, data: Any, text: Callable[[], str] | str) -> None:
        """Print ``data`` as JSON, or the human text."""
        if as_json:
            import json

            self.out.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")
        else:
            body = text() if callable(text) else text
            if body:
                self.out.write(body if body.endswith("\n") else body + "\n")

    def note(self, message: str) -> None:
        """A human hint on stderr (never mixed into --json output)."""
        self.err.write(message.rstrip("\n") + "\n")
