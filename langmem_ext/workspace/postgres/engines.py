"""Open every PostgreSQL engine of a workspace from one URL.

:func:`open_postgres_engines` returns a :class:`PostgresEngines`: the ledger, the
Markdown documents, the workspace lock, the pgvector index (or a Chroma server's
collections, when ``index.chroma_url`` names one), the keyword index (opened
on first use), a way to discard the derived indexes, and the checkpointers, on one
connection pool (one more per checkpointer). Its fields are named as the engine
factory's bundle names them, so the factory registers this set with one line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langmem_ext.workspace.postgres import doc_blocks
from langmem_ext.workspace.postgres._base import PgConnections, check_url
from langmem_ext.workspace.postgres.checkpoints import PgCheckpoints
from langmem_ext.workspace.postgres.documents import PgDocuments
from langmem_ext.workspace.postgres.embedding_cache import PgEmbeddingCache
from langmem_ext.workspace.postgres.keyword_index import PgKeywordIndex
from langmem_ext.workspace.postgres.leases import PgLeases
from langmem_ext.workspace.postgres.ledger import PgLedger
from langmem_ext.workspace.postgres.lock import PgRunLocks, PgWorkspaceLock
from langmem_ext.workspace.postgres.vector_index import (
    PgVectorIndex,
    ensure_extension,
    register_vector,
)
from langmem_ext.workspace.protocols import VectorIndex
from langmem_ext.workspace.vector_index import VectorIndex as ChromaIndex

POSTGRES = "postgresql"
"""Name of the PostgreSQL engine set."""


@dataclass
class PostgresEngines:
    """The PostgreSQL engines of one workspace, opened.

    Attributes:
        name: ``"postgresql"``.
        ledger: The ledger (every table, migrated).
        documents: The Markdown documents (line rows with their edit history).
        lock: The workspace write lock (an advisory lock).
        vectors: The pgvector index, or the Chroma server's collections when one is
            named (``chroma_url``).
        open_keyword: Opens the keyword index (its tables are created on first use).
        discard_index: Empties the derived indexes (docs, vectors); the ledger and
            the documents are kept.
        checkpoints: The conversations' checkpointers.
        connections: The pool the engines share.
        leases: Job leases per scope, shared by the replicas (the background jobs').
    """

    name: str
    ledger: PgLedger
    documents: PgDocuments
    lock: PgWorkspaceLock
    vectors: VectorIndex
    open_keyword: Callable[[], PgKeywordIndex]
    discard_index: Callable[[], None]
    checkpoints: PgCheckpoints
    connections: PgConnections
    leases: PgLeases

    def close(self) -> None:
        """Close everything: the ledger owns the shared pool, and closing it closes the
        checkpointers' pools too (so closing the vectors and the ledger, as the
        engine factory's bundle does, is enough)."""
        self.vectors.close()
        self.ledger.close()


def open_postgres_engines(
    url: str,
    *,
    model_name: str,
    collection_prefix: str = "langmem",
    lock_timeout: float = 30.0,
    exact_max_entries: int = 5_000,
    lock_name: str = "workspace",
    max_connections: int = 8,
    chroma_url: str | None = None,
) -> PostgresEngines:
    """Open the PostgreSQL engine set of the database ``url`` names.

    Creates the ``vector`` extension when missing and migrates the ledger (once,
    under an advisory lock, whichever replica comes first).

    Args:
        url: ``postgresql://user@host/database``.
        model_name: The embedder's name (vectors are per embedder).
        collection_prefix: Prefix of the vector table's name.
        lock_timeout: Seconds a writer waits for the workspace lock.
        exact_max_entries: Scopes of at most this many entries are vector-searched
            exactly over the keyword index's kept vectors.
        lock_name: What the workspace lock excludes (replicas of one workspace share it).
        max_connections: Connections of the shared pool.
        chroma_url: A Chroma server (``http://host:port``, ``chroma run``) that keeps
            the vectors in place of pgvector; everything else stays in the database.

    Returns:
        The opened engines.

    Raises:
        InvalidInputError: ``url`` is not a PostgreSQL URL.
        LangmemError: The ``postgres`` extra is missing (``EngineUnavailableError``).
        LangmemError: The database cannot be reached or has no pgvector
            (``EngineUnavailableError`` with the engine factory).
        SchemaVersionError: The database was migrated by a newer version.
    """
    url = check_url(url)
    ensure_extension(url)
    db = PgConnections(url, max_size=max_connections, configure=register_vector)
    try:
        ledger = PgLedger(db, own=True)
        documents = PgDocuments(db)
        vectors: VectorIndex = (
            ChromaIndex(Path("."), chroma_url, model_name, collection_prefix)
            if chroma_url
            else PgVectorIndex(db, model_name, collection_prefix)
        )
        leases = PgLeases(db)
    except BaseException:
        db.close()
        raise
    keyword: list[PgKeywordIndex] = []

    def open_keyword() -> PgKeywordIndex:
        if not keyword:
            keyword.append(PgKeywordIndex(db, exact_max_entries=exact_max_entries))
        return keyword[0]

    def discard_index() -> None:
        with db.transaction() as conn:
            for table in ("docs", *doc_blocks.TABLES, "doc_postings", "doc_files",
                          "vec_deletes", "kept_vectors", "index_meta", "passages",
                          "prose_files"):  # fmt: skip
                kind = conn.execute(
                    "SELECT relkind FROM pg_class WHERE oid = to_regclass(%s)", (table,)
                ).fetchone()
                if kind is not None and kind[0] == "r":  # "docs" is a view of the doc rows
                    conn.execute(f"TRUNCATE {table}")
            if (
                isinstance(vectors, PgVectorIndex)
                and conn.execute("SELECT to_regclass(%s)", (vectors.table,)).fetchone()[0]
            ):
                conn.execute(f"TRUNCATE {vectors.table}")
        if isinstance(vectors, ChromaIndex):
            vectors.drop_owned()
        keyword.clear()

    return PostgresEngines(
        name=POSTGRES,
        ledger=ledger,
        documents=documents,
        lock=PgWorkspaceLock(db, lock_name, lock_timeout),
        vectors=vectors,
        open_keyword=open_keyword,
        discard_index=discard_index,
        checkpoints=PgCheckpoints(url, closed_with=db),
        connections=db,
        leases=leases,
    )


def open_for_request(request: Any) -> Any:
    """The engine factory's opener: the engines of ``request.url`` as the factory's
    bundle (``langmem_ext.workspace.engines.Engines``; the pool stays reachable
    through the ledger's ``connections``).

    Args:
        request: The factory's ``EngineRequest`` (``url``, ``model_name``,
            ``collection_prefix``, ``lock_timeout``, ``exact_max_entries``, and
            ``chroma_url``: a Chroma server for the vectors).

    Returns:
        The opened engines.

    Raises:
        InvalidInputError: See :func:`open_postgres_engines`.
        LangmemError: See :func:`open_postgres_engines`.
    """
    from langmem_ext.workspace import engines as factory

    opened = open_postgres_engines(
        request.url,
        model_name=request.model_name,
        collection_prefix=request.collection_prefix,
        lock_timeout=request.lock_timeout,
        exact_max_entries=request.exact_max_entries,
        chroma_url=request.chroma_url,
    )
    return factory.Engines(  # type: ignore[attr-defined]
        name=opened.name,
        ledger=opened.ledger,
        documents=opened.documents,
        lock=opened.lock,
        vectors=opened.vectors,
        open_keyword=opened.open_keyword,
        discard_index=opened.discard_index,
        checkpoints=opened.checkpoints,
        leases=opened.leases,
        embedding_cache=lambda: PgEmbeddingCache(opened.connections),
        run_locks=PgRunLocks(request.url, request.lock_timeout),
    )


__all__ = ["POSTGRES", "PostgresEngines", "open_for_request", "open_postgres_engines"]
