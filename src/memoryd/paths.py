"""Where memoryd keeps its own files.

``MEMORYD_HOME`` (absolute) puts config, cache, state and logs under one folder
and moves the default global root to ``$MEMORYD_HOME/memory``; every test sets
it. Unset, platformdirs chooses the folders and the default global root is the
one the OpenCode memory plugin uses, so both tools share one tree.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from memoryd.errors import ConfigError
from memoryd.homedirs import APP, HOME_ENV, under_home


@dataclass(frozen=True)
class Paths:
    """memoryd's own folders (not the memory roots)."""

    config_dir: Path
    cache_dir: Path
    state_dir: Path
    log_dir: Path
    default_global_root: Path
    home: Path | None = None

    @property
    def config_file(self) -> Path:
        return self.config_dir / "config.yaml"

    @property
    def index_db(self) -> Path:
        return self.cache_dir / "index.sqlite3"

    @property
    def status_file(self) -> Path:
        return self.state_dir / "status.json"

    @property
    def lock_file(self) -> Path:
        return self.state_dir / "daemon.lock"

    @property
    def log_file(self) -> Path:
        return self.log_dir / "memoryd.log"


def resolve_paths(env: Mapping[str, str] | None = None) -> Paths:
    """Compute memoryd's folders from the environment (pure apart from ``env``)."""
    env = os.environ if env is None else env
    home = env.get(HOME_ENV, "")
    if home:
        base = Path(home).expanduser()
        if not base.is_absolute():
            raise ConfigError(
                f"{HOME_ENV} must be an absolute path, got {home!r}",
                hint=f"export {HOME_ENV}=$PWD/{home} or unset it to use the default folders",
            )
        config_dir, cache_dir, state_dir, log_dir, global_root = map(Path, under_home(str(base)))
        return Paths(config_dir, cache_dir, state_dir, log_dir, global_root, home=base)
    import platformdirs

    return Paths(
        config_dir=Path(platformdirs.user_config_dir(APP, appauthor=False)),
        cache_dir=Path(platformdirs.user_cache_dir(APP, appauthor=False)),
        state_dir=Path(platformdirs.user_state_dir(APP, appauthor=False)),
        log_dir=Path(platformdirs.user_log_dir(APP, appauthor=False)),
        default_global_root=opencode_memory_dir(env),
    )


def opencode_memory_dir(env: Mapping[str, str]) -> Path:
    """``$XDG_CONFIG_HOME/opencode/memory``, else ``~/.config/opencode/memory``."""
    xdg = env.get("XDG_CONFIG_HOME", "")
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "opencode" / "memory"
    user_home = env.get("HOME") or str(Path.home())
    return Path(user_home) / ".config" / "opencode" / "memory"
