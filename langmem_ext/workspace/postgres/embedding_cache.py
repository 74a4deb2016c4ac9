"""The embedding cache in PostgreSQL: document vectors by ``(model, text hash)``.

:class:`PgEmbeddingCache` has the methods of the SQLite cache (``get_many``,
``put_many``, ``close``; the :class:`~langmem_ext.embeddings.factory.EmbeddingCache`
protocol), in the table ``embedding_cache`` (float32 bytes, as on SQLite). Replicas
share it, so a text one of them embedded is not embedded again by another.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from langmem_ext.workspace.docs import vector_blob
from langmem_ext.workspace.postgres._base import PgConnections

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS embedding_cache (model TEXT NOT NULL, text_hash TEXT NOT NULL, "
    "dim INTEGER NOT NULL, vector BYTEA NOT NULL, PRIMARY KEY (model, text_hash))"
)


class PgEmbeddingCache:
    """Cached document vectors in one PostgreSQL table (created on first use).

    Args:
        db: The engine's connections.
    """

    def __init__(self, db: PgConnections) -> None:
        self._db = db
        self._ready = False

    def _table(self, conn: object) -> None:
        if not self._ready:
            conn.execute(SCHEMA)  # type: ignore[attr-defined]
            self._ready = True

    def get_many(self, model: str, hashes: Sequence[str]) -> dict[str, list[float]]:
        """The cached vectors of these text hashes (absent: not cached).

        Raises:
            psycopg.Error: The cache is unreadable.
        """
        wanted = list(dict.fromkeys(hashes))
        if not wanted:
            return {}
        with self._db.connection() as conn:
            self._table(conn)
            rows = conn.execute(
                "SELECT text_hash, vector FROM embedding_cache "
                "WHERE model = %s AND text_hash = ANY(%s)",
                (model, wanted),
            ).fetchall()
        return {str(h): np.frombuffer(bytes(b), dtype=np.float32).tolist() for h, b in rows}

    def put_many(self, model: str, vectors: Mapping[str, Sequence[float]]) -> None:
        """Store vectors by text hash (replacing any cached ones), in one commit.

        Raises:
            psycopg.Error: The cache is not writable.
        """
        rows = [(model, h, len(v), vector_blob(v)) for h, v in vectors.items()]
        if not rows:
            return
        with self._db.transaction() as conn, conn.cursor() as cur:
            self._table(conn)
            cur.executemany(
                "INSERT INTO embedding_cache VALUES (%s, %s, %s, %s) ON CONFLICT "
                "(model, text_hash) DO UPDATE SET dim = excluded.dim, vector = excluded.vector",
                rows,
            )

    def close(self) -> None:
        """Nothing to release: the connections belong to the engine."""


__all__ = ["PgEmbeddingCache"]
