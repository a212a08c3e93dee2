"""One cache file: data kept with :mod:`marshal` under a key, in memoryd's cache folder.

What a short-lived command would otherwise recompute (config.yaml's parsed data, a root's
compile listing) is kept in a file holding ``(key, data)``. The key says what the data was
made from (a file's identity, memoryd's and Python's versions, a format number); a file
whose key differs, or that is missing, unreadable or foreign, is a miss. Writing never
fails the caller: it is a cache, and losing it costs only the recomputation.
"""

from __future__ import annotations

import contextlib
import marshal
import os
from pathlib import Path
from typing import Any

from memoryd.fsutil import PRIVATE_FILE, private_dirs


def read(file: Path, key: Any) -> Any:
    """The data kept in ``file`` under ``key``, or None."""
    try:
        kept, data = marshal.loads(file.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    return data if kept == key else None


def write(file: Path, key: Any, data: Any) -> None:
    """Keep ``data`` under ``key`` (silently not, when marshal or the disk refuses)."""
    try:
        blob = marshal.dumps((key, data))
    except ValueError:  # a value marshal cannot hold (a YAML date): the caller recomputes
        return
    tmp = file.with_name(f"{file.name}.{os.getpid()}.tmp")
    with contextlib.suppress(OSError):  # a read-only cache folder only costs the recompute
        private_dirs(file.parent)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
        with os.fdopen(fd, "wb") as handle:
            handle.write(blob)
        os.replace(tmp, file)
    with contextlib.suppress(OSError):
        tmp.unlink(missing_ok=True)
