"""Vectors in PostgreSQL with pgvector: HNSW over cosine distance.

:class:`PgVectorIndex` mirrors :class:`~langmem_ext.workspace.vector_index.VectorIndex`
(the Chroma side of the index): the same methods and :class:`VectorHit` results.
One table per embedder (``vec_<model>_<hash>``, created on the first upsert with the
embedder's dimension), a row per ``(scope, id)`` with its metadata, and an HNSW index
(``vector_cosine_ops``). A scope is a column, not a collection: queries filter on it
with pgvector's iterative index scan (``hnsw.iterative_scan``, set on each pooled
connection by :func:`register_vector`), so a small scope of a large table still gets
its ``n`` nearest.

Writes go in one ``COPY`` into a temporary table and one ``INSERT … SELECT`` per
batch (three statements, whatever the batch's size). A bulk load
(:meth:`PgVectorIndex.bulk`) at least as large as the table already is, and of at
least :data:`BULK_MIN_ROWS` vectors, drops the HNSW index first and builds it once
at the end (pgvector builds an index over loaded rows many times faster than it
grows one row by row); meanwhile queries still answer, by an exact scan. Such a load
ends with ``ANALYZE`` of the database, as PostgreSQL advises after a bulk load.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
from numpy.typing import NDArray

from langmem_ext.core.errors import IndexUnavailableError, InvalidInputError
from langmem_ext.workspace.postgres._base import PgConnections
from langmem_ext.workspace.vector_base import Matrix, Metadatas, VectorIndexBase
from langmem_ext.workspace.vector_index import VectorHit


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")[:30] or "model"


def _array(value: Any) -> NDArray[np.float32]:
    """A stored vector as a float32 array (pgvector reads a ``Vector`` or an array)."""
    raw = value.to_numpy() if hasattr(value, "to_numpy") else value
    return np.asarray(raw, dtype=np.float32)


def register_vector(conn: Any) -> None:
    """Make ``conn`` read and write pgvector's ``vector`` as numpy arrays, and search
    HNSW with an iterative scan (a scope filter still gets its ``n`` nearest) and
    ``ef_search`` :data:`EF_SEARCH` (the extension must exist in the database)."""
    from pgvector.psycopg import register_vector as register

    register(conn)
    conn.execute(f"SET hnsw.iterative_scan = strict_order; SET hnsw.ef_search = {EF_SEARCH}")


EF_SEARCH = 100
"""Candidates an HNSW search keeps (pgvector's default is 40; searches ask for ~40)."""

BULK_MIN_ROWS = 2_000
"""The smallest bulk load (:meth:`PgVectorIndex.bulk`) that builds the HNSW index after
loading rather than growing it row by row."""

BUILD_MEMORY = "512MB"
"""``maintenance_work_mem`` while the HNSW index is built (the graph of 100k vectors
of 256 dimensions fits; a build that runs out of it goes on, more slowly)."""

_STAGE = (
    "CREATE TEMP TABLE IF NOT EXISTS langmem_vec_in "
    "(id TEXT NOT NULL, embedding vector NOT NULL, metadata JSONB) ON COMMIT DELETE ROWS"
)


def ensure_extension(url: str) -> None:
    """Create the ``vector`` extension in the database when it is missing.

    Raises:
        LangmemError: The database cannot be reached, or has no pgvector (see
            :func:`~langmem_ext.workspace.postgres._base.unavailable`).
    """
    import psycopg

    from langmem_ext.workspace.postgres._base import describe, unavailable

    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=10)
    except psycopg.Error as e:
        raise unavailable(
            f"The PostgreSQL database {describe(url)} cannot be reached "
            f"({type(e).__name__}); start it or check LANGMEM_DATABASE_URL."
        ) from e
    try:
        with conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.Error as e:
        raise unavailable(
            f"pgvector is not available in the PostgreSQL database {describe(url)} "
            f"({type(e).__name__}: {e}); install the extension (postgresql-NN-pgvector) "
            "or use the embedded engines."
        ) from e


class PgVectorIndex(VectorIndexBase):
    """pgvector tables of one workspace.

    Args:
        db: Connections whose pool registers pgvector (:func:`register_vector`).
        model_name: The embedder's name (part of the table's name).
        prefix: Table name prefix.
    """

    def __init__(self, db: PgConnections, model_name: str, prefix: str = "langmem") -> None:
        self._db = db
        self.url = db.url
        self.model_name = model_name
        digest = hashlib.sha256(f"{prefix}\x1f{model_name}".encode()).hexdigest()[:10]
        self.table = f"vec_{_slug(model_name)}_{digest}"
        self._dim: int | None = None
        self._lock = threading.Lock()
        self._deferred = 0  # bulk loads under way that build the HNSW index at their end

    def collection_name(self, scope: str) -> str:
        """Where a scope's vectors live: the embedder's table and the scope."""
        return f"{self.table}:{scope}"

    def reset_client(self) -> None:
        """Forget what was read of the table (its dimension); the next call asks again."""
        with self._lock:
            self._dim = None

    close = reset_client

    def _dimension(self, conn: Any) -> int | None:
        """The table's dimension, or ``None`` when it does not exist yet."""
        with self._lock:
            if self._dim is not None:
                return self._dim
        row = conn.execute(
            "SELECT atttypmod, to_regclass(%s) IS NOT NULL FROM pg_attribute "
            "WHERE attrelid = to_regclass(%s) AND attname = 'embedding'",
            (f"{self.table}_hnsw", self.table),
        ).fetchone()
        if row is None:
            return None
        with self._lock:
            deferred = self._deferred > 0
        if not row[1] and not deferred:  # a bulk load that stopped before its build
            with conn.transaction():
                self._build_index(conn)
        with self._lock:
            self._dim = int(row[0])
        return self._dim

    def _create(self, dim: int) -> None:
        """Create the table (and its HNSW index) in a transaction of its own, on a
        connection of its own: made inside a write's transaction, the table would go
        when that write rolls back, while this index remembers its dimension."""
        with self._db.pool.connection() as conn, conn.transaction():
            conn.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"create {self.table}",)
            )
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {self.table} (scope TEXT NOT NULL, id TEXT NOT NULL, "
                f"embedding vector({int(dim)}) NOT NULL, metadata JSONB, PRIMARY KEY (scope, id))"
            )
            # 512 floats are 2 kB: kept in the row, not out of line, a scan reads one
            # page per few vectors instead of three pages per vector
            conn.execute(f"ALTER TABLE {self.table} ALTER COLUMN embedding SET STORAGE PLAIN")
            with self._lock:
                deferred = self._deferred > 0
            if not deferred:
                self._build_index(conn)

    def _build_index(self, conn: Any) -> None:
        """Create the HNSW index when it is missing; inside a transaction."""
        conn.execute(f"SET LOCAL maintenance_work_mem = '{BUILD_MEMORY}'")
        conn.execute(
            f"CREATE INDEX IF NOT EXISTS {self.table}_hnsw ON {self.table} "
            "USING hnsw (embedding vector_cosine_ops)"
        )

    @contextmanager
    def bulk(self, rows: int) -> Iterator[None]:
        """Upserts of about ``rows`` vectors inside; with at least :data:`BULK_MIN_ROWS`
        and at least as many as the table holds, the HNSW index is dropped first and
        built again when the block ends (even when it fails), in one statement over
        the loaded rows. A smaller load keeps the index and grows it.

        Args:
            rows: The vectors the block is about to upsert.

        Raises:
            IndexUnavailableError: The database failed.
        """
        import psycopg

        deferred = False
        if rows >= BULK_MIN_ROWS:
            try:
                with self._db.connection() as conn:
                    with self._lock:
                        self._deferred += 1
                    deferred = True
                    if self._dimension(conn) is not None:
                        held = conn.execute(f"SELECT count(*) FROM {self.table}").fetchone()
                        if rows >= int(held[0]):
                            with conn.transaction():
                                conn.execute(f"DROP INDEX IF EXISTS {self.table}_hnsw")
                        else:
                            with self._lock:
                                self._deferred -= 1
                            deferred = False
            except psycopg.Error as e:
                if deferred:
                    with self._lock:
                        self._deferred -= 1
                raise self._down(e) from e
        try:
            yield
        finally:
            if deferred:
                with self._lock:
                    self._deferred -= 1
                    last = self._deferred == 0
                if last:
                    self._finish_bulk()

    def _finish_bulk(self) -> None:
        import psycopg

        try:
            with self._db.connection() as conn:
                if self._dimension(conn) is not None:
                    with conn.transaction():
                        self._build_index(conn)
                # the load wrote the ledger, the keyword index and the vectors of this
                # database: fresh planner statistics, or the planner still counts the
                # tables as empty (a nested loop over every entry per read)
                conn.execute("ANALYZE")
        except psycopg.Error as e:
            raise self._down(e) from e

    def _down(self, e: Exception) -> IndexUnavailableError:
        return IndexUnavailableError(
            f"The pgvector index ({self.table}) is unavailable ({type(e).__name__}: {e}). "
            "Memories are still saved in the ledger; run `langmem-ext reindex` or any "
            "search once the database answers."
        )

    def _upsert(self, scope: str, ids: list[str], matrix: Matrix, metadatas: Metadatas) -> None:
        """The table is created with the first vectors' dimension.

        Raises:
            InvalidInputError: A vector's dimension is not the table's.
            IndexUnavailableError: The database failed.
        """
        import psycopg
        from psycopg.types.json import Jsonb

        if len(set(ids)) < len(ids):  # one row per id: the last vector of an id wins
            last = {i: n for n, i in enumerate(ids)}
            keep = sorted(last.values())
            ids, matrix = [ids[n] for n in keep], matrix[keep]
            metadatas = [metadatas[n] for n in keep]
        try:
            with self._db.connection() as conn:
                dim = self._dimension(conn)
                if dim is None:
                    self._create(int(matrix.shape[1]))
                    dim = self._dimension(conn)
                if matrix.shape[1] != dim:
                    raise InvalidInputError(
                        f"vectors of dimension {matrix.shape[1]} for {self.table}, "
                        f"which holds dimension {dim}"
                    )
                with conn.transaction(), conn.cursor() as cur:
                    cur.execute(_STAGE)
                    copy = (
                        "COPY langmem_vec_in (id, embedding, metadata) FROM STDIN (FORMAT BINARY)"
                    )
                    with cur.copy(copy) as rows:
                        rows.set_types(["text", "vector", "jsonb"])
                        for i, v, m in zip(ids, matrix, metadatas, strict=True):
                            rows.write_row((i, v, Jsonb(dict(m))))
                    cur.execute(
                        f"INSERT INTO {self.table} (scope, id, embedding, metadata) "
                        "SELECT %s, id, embedding, metadata FROM langmem_vec_in "
                        "ON CONFLICT (scope, id) DO UPDATE SET "
                        "embedding = excluded.embedding, metadata = excluded.metadata",
                        (scope,),
                    )
        except psycopg.Error as e:
            raise self._down(e) from e

    def _delete(self, scope: str, ids: list[str]) -> None:
        self._write(f"DELETE FROM {self.table} WHERE scope = %s AND id = ANY(%s)", (scope, ids))

    def _write(self, sql: str, params: Sequence[Any]) -> None:
        import psycopg

        try:
            with self._db.connection() as conn:
                if self._dimension(conn) is not None:
                    conn.execute(sql, params)
        except psycopg.Error as e:
            raise self._down(e) from e

    def _read(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        import psycopg

        try:
            with self._db.connection() as conn:
                if self._dimension(conn) is None:
                    return []
                return list(conn.execute(sql, params).fetchall())
        except psycopg.Error as e:
            raise self._down(e) from e

    def _query(
        self, scope: str, vec: Matrix, n: int, with_embeddings: bool, ids: list[str] | None
    ) -> list[VectorHit]:
        """By cosine distance in pgvector's HNSW index; with ``ids``, only those
        vectors are searched (exactly)."""
        cols = "id, embedding <=> %(q)s" + (", embedding" if with_embeddings else "")
        params: dict[str, Any] = {"q": vec, "scope": scope, "n": int(n)}
        where = "scope = %(scope)s"
        if ids is not None:
            where += " AND id = ANY(%(ids)s)"
            params["ids"] = ids
        rows = self._read(
            f"SELECT {cols} FROM {self.table} WHERE {where} "
            "ORDER BY embedding <=> %(q)s LIMIT %(n)s",
            params,  # type: ignore[arg-type]
        )
        return [
            VectorHit(
                str(r[0]),
                1.0 - float(r[1]),
                _array(r[2]) if with_embeddings else None,
            )
            for r in rows
        ]

    def _embeddings(self, scope: str, ids: list[str]) -> dict[str, Any]:
        rows = self._read(
            f"SELECT id, embedding FROM {self.table} WHERE scope = %s AND id = ANY(%s)",
            (scope, ids),
        )
        return {str(i): _array(v) for i, v in rows}

    def count(self, scope: str) -> int:
        """Vectors stored for a scope."""
        rows = self._read(f"SELECT count(*) FROM {self.table} WHERE scope = %s", (scope,))
        return int(rows[0][0]) if rows else 0

    def drop_all(self, scopes: Sequence[str]) -> None:
        """Delete the vectors of the given scopes (for ``reindex``)."""
        self._write(f"DELETE FROM {self.table} WHERE scope = ANY(%s)", (list(scopes),))


__all__ = ["PgVectorIndex", "ensure_extension", "register_vector"]
