"""config.yaml as the lean ``memoryd recall`` needs it, kept beside the config cache.

The lean recall (:mod:`memoryd.lean_recall`) must answer without PyYAML, the config's
dataclasses and pathlib (together several times its own work), so the full recall
leaves it a snapshot of what it used: the roots (the path as config.yaml gave it,
expanded, and as it resolved), the ``search`` settings and the index's expected
versions. It is one :mod:`marshal` file in the cache folder, keyed like the config
cache by config.yaml's identity (or its absence), memoryd's and Python's versions; a
config.yaml modified in the last two seconds is not snapshotted (the racy-mtime rule
of :mod:`memoryd.fingerprint`). Anything that differs is a miss, and a miss sends the
command down the full path, which validates config.yaml and writes a new snapshot.

Light: reading imports only os, sys and marshal.
"""

from __future__ import annotations

import marshal
import os
import sys

from memoryd import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from memoryd.config.sections import Config
    from memoryd.paths import Paths

FILE = "recall.marshal"
FORMAT = 5  # 3: search.max_file_bytes too; 4: every search setting; 5: team_prior
# What memoryd's folders are computed from (memoryd.paths): a snapshot names the folders
# it was written for and these variables' values, so a lean recall that finds its folders
# by a shortcut (no platformdirs) uses a snapshot only when both agree.
DIR_ENV = ("MEMORYD_HOME", "HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME")


def located(env: Mapping[str, str], config_dir: str, cache_dir: str, state_dir: str) -> Any:
    """Where a snapshot is for: the three folders and the environment they came from."""
    return ((config_dir, cache_dir, state_dir), tuple(env.get(name) for name in DIR_ENV))


def key(config_file: str) -> tuple[Any, ...] | None:
    """What a snapshot of ``config_file`` as it is now must be stored under (None when
    it cannot be stat'ed for another reason than its absence)."""
    try:
        st = os.stat(config_file)
    except FileNotFoundError:
        stamp = None
    except OSError:
        return None
    else:
        stamp = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
    return (FORMAT, __version__, sys.hexversion, config_file, stamp)


def read(cache_dir: str, config_file: str) -> dict[str, Any] | None:
    """The snapshot for config.yaml as it is now, or None."""
    wanted = key(config_file)
    if wanted is None:
        return None
    try:
        with open(os.path.join(cache_dir, FILE), "rb") as handle:
            kept, data = marshal.loads(handle.read())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    return data if kept == wanted and isinstance(data, dict) else None


def write(
    paths: Paths, env: Mapping[str, str], index: tuple[int, int], now_ns: int | None = None
) -> None:
    """Snapshot config.yaml for the lean recall (silently not, when that is not safe).

    ``index``: the index's expected application id and user version
    (:mod:`memoryd.index.schema`'s), given by the caller: the index reads config's
    sections, so ``config/`` importing ``index/`` would make the two packages a loop.

    The data is taken from the config cache under config.yaml's current identity and
    validated again here, so the snapshot never pairs one version's roots with
    another's identity; no cached data (a config.yaml just written) means no snapshot.
    """
    import time

    from memoryd import cachefile, fingerprint
    from memoryd.config.cache import ConfigCache
    from memoryd.config.loader import CONFIG_CACHE, build_config, default_global
    from memoryd.errors import MemorydError

    file = str(paths.config_file)
    stamp = key(file)
    if stamp is None:
        return
    if stamp[-1] is None:
        raw: list[str] = [str(paths.default_global_root)]
        config: Config | None = None
    else:
        now = time.time_ns() if now_ns is None else now_ns
        if not fingerprint.settled(stamp[-1][1], now):
            return
        cache = ConfigCache(paths.cache_dir / CONFIG_CACHE)
        data = cache.get(cache.stamp(paths.config_file)[0])
        if not isinstance(data, dict):
            return
        listed = data.get("roots")
        try:
            config = build_config(data, paths.config_file, paths)
        except MemorydError:
            return
        if listed is None:
            raw = [str(paths.default_global_root)]
        else:
            raw = [os.path.expanduser(str(item["path"])) for item in listed]
    roots = config.roots if config is not None else (default_global(paths),)
    import dataclasses

    from memoryd.config.sections import SearchConfig

    search = config.search if config is not None else SearchConfig()
    snapshot = {
        "roots": [
            (given, str(root.path), root.layout, root.scope)
            for given, root in zip(raw, roots, strict=True)
        ],
        "search": dataclasses.asdict(search),  # every setting: ranking reads what it needs
        "application_id": index[0],
        "user_version": index[1],
        "located": located(env, str(paths.config_dir), str(paths.cache_dir), str(paths.state_dir)),
    }
    if key(file) == stamp and read(str(paths.cache_dir), file) != snapshot:
        cachefile.write(paths.cache_dir / FILE, stamp, snapshot)  # (unless it is unchanged)
