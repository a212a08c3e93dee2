"""The search index: an SQLite FTS5 cache of every root's memory files.

Files are the truth; the database can be deleted at any moment and is rebuilt
by the next reconcile. See docs/search.md.

The names below load on first use: importing one light module of the package (the
tokenizer, the candidate fetch, the ranking) must not import the reconcile, the
schema and their dataclasses, which the lean ``memoryd recall`` never needs.
``reconcile`` is both a function here and a submodule, and importing a submodule binds
its name on the package: a property of the package's class keeps the name the function.
"""

from __future__ import annotations

import sys
import types

TYPE_CHECKING = False  # not typing's: importing typing costs more than the lean recall's query
if TYPE_CHECKING:
    from typing import Any

    from memoryd.index.db import IndexDB, Row, open_index
    from memoryd.index.reconcile import ReconcileReport, reconcile
    from memoryd.index.search import Hit, recall

__all__ = [
    "Hit",
    "IndexDB",
    "ReconcileReport",
    "Row",
    "open_index",
    "recall",
    "reconcile",
]

_HOME = {
    "IndexDB": "db", "Row": "db", "open_index": "db",
    "ReconcileReport": "reconcile",
    "Hit": "search", "recall": "search",
}  # fmt: skip


def _submodule(name: str) -> types.ModuleType:
    """``importlib.import_module``, without importing importlib and warnings (a tenth of
    what the lean recall's own imports cost)."""
    qualified = f"{__name__}.{name}"
    __import__(qualified)
    return sys.modules[qualified]


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_submodule(module), name)
    globals()[name] = value
    return value


class _Package(types.ModuleType):
    @property
    def reconcile(self) -> Any:
        return _submodule("reconcile").reconcile

    @reconcile.setter
    def reconcile(self, _module: Any) -> None:
        """The import system binding the submodule: the function stays the name."""


sys.modules[__name__].__class__ = _Package
