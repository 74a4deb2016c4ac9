"""The embedding cache on SQLite: ``.index/embeddings.db``, table ``embedding_cache``.

Document vectors keyed by ``(model, text hash)``, float32 blobs. The file sits in
``.index/`` but is not derived from the workspace: a reindex or a rebuild keeps it,
so nothing already seen is embedded again. One connection per thread (WAL).
Implements :class:`langmem_ext.embeddings.factory.EmbeddingCache`.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from langmem_ext.workspace.files import private_file
from langmem_ext.workspace.sqlite._sql import in_chunks


class SqliteEmbeddingCache:
    """Cached document vectors in one SQLite file (created on first use).

    Args:
        path: The cache file.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._local = threading.local()

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(private_file(self.path), timeout=30)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS embedding_cache (model TEXT NOT NULL, "
                "text_hash TEXT NOT NULL, dim INTEGER NOT NULL, vector BLOB NOT NULL, "
                "PRIMARY KEY (model, text_hash))"
            )
            self._local.conn = conn
        return conn

    def get_many(self, model: str, hashes: Sequence[str]) -> dict[str, list[float]]:
        """The cached vectors of these text hashes (absent: not cached).

        Raises:
            sqlite3.Error: The cache is unreadable.
        """
        conn = self._conn()
        found: dict[str, list[float]] = {}
        for chunk, marks in in_chunks(list(dict.fromkeys(hashes))):
            rows = conn.execute(
                "SELECT text_hash, vector FROM embedding_cache "
                f"WHERE model = ? AND text_hash IN ({marks})",
                [model, *chunk],
            ).fetchall()
            for h, blob in rows:
                found[str(h)] = np.frombuffer(blob, dtype=np.float32).tolist()
        return found

    def put_many(self, model: str, vectors: Mapping[str, Sequence[float]]) -> None:
        """Store vectors by text hash (replacing any cached ones), in one commit.

        Raises:
            sqlite3.Error: The cache is not writable.
        """
        conn = self._conn()
        with conn:
            conn.executemany(
                "INSERT OR REPLACE INTO embedding_cache VALUES (?, ?, ?, ?)",
                [
                    (model, h, len(v), np.asarray(v, np.float32).tobytes())
                    for h, v in vectors.items()
                ],
            )

    def close(self) -> None:
        """Close this thread's connection."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


__all__ = ["SqliteEmbeddingCache"]
