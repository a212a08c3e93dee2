"""Citations: a memory names the code it describes, and is checked against it when used.

:func:`may_cite` is the one check on the read path: a memory whose file never says
``cites`` costs one read and nothing else, so ``recall`` and ``context`` import the
citation machinery only when a hit might cite something.
"""

from __future__ import annotations

TYPE_CHECKING = False  # light: the lean recall asks may_cite (memoryd.lean_recall)
if TYPE_CHECKING:
    from pathlib import Path


def may_cite(path: Path) -> bool:
    """Whether the file at ``path`` could carry ``cites:`` (a read and a substring test)."""
    try:
        with open(path, "rb") as handle:
            return b"cites" in handle.read()
    except OSError:
        return False
