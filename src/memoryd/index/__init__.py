"""The search index: an SQLite FTS5 cache of every root's memory files.

Files are the truth; the database can be deleted at any moment and is rebuilt
by the next reconcile. See docs/search.md.
"""

from __future__ import annotations

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
