"""The storage engines a workspace runs on, as protocols.

A :class:`~langmem_ext.workspace.store.Workspace` keeps its data in five engines and
reaches each one only through the protocol here:

* :class:`Ledger`: the state Markdown cannot hold (entries' state and history,
  pending items, profiles' history, triples, session events, store items), one
  repository per table family (:mod:`langmem_ext.workspace.records`) and write
  transactions spanning them;
* :class:`DocumentStore`: the Markdown text of each scope's memory files, read and
  written whole by workspace-relative path, every write atomic;
* :class:`KeywordIndex`: the derived index of the entries and passages (keyword
  search, the docs as last written, kept vectors for exact search, the vector
  outbox);
* :class:`VectorIndex`: the nearest-neighbour index, one partition per scope (or
  per passage kind and scope);
* :class:`WorkspaceLock`: the lock every write holds, across threads and processes;
* :class:`Leases`: which process runs a background job of a scope, until when;

and a :class:`Checkpoints` supplies the LangGraph checkpointers of the
conversations. :mod:`langmem_ext.workspace.engines` picks one implementation of
each from a URL. The embedded implementations are SQLite (``state.db``), the
filesystem, SQLite FTS5 (``.index/index.db``), Chroma and a file lock; the
protocols describe the methods the services call, so a second engine whose
classes offer the same methods plugs in without a change to them.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from langmem_ext.workspace.records import LedgerRepositories

if TYPE_CHECKING:
    import numpy as np
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from numpy.typing import NDArray

    from langmem_ext.workspace.docs import Doc, FileStamp, Previous, Vector
    from langmem_ext.workspace.sqlite.passage_rows import Passage, ProseFile
    from langmem_ext.workspace.vector_index import VectorHit


@runtime_checkable
class Ledger(LedgerRepositories, Protocol):
    """The workspace's state: one repository per table family (the attributes of
    :class:`~langmem_ext.workspace.records.LedgerRepositories`), and transactions.

    Writes made by repository methods inside :meth:`transaction` (same thread)
    commit together; outside one, each write commits on its own. Opening a ledger
    brings its schema to the current version (running the numbered migrations
    once).
    """

    def transaction(self, *, durable: bool = True) -> AbstractContextManager[Any]:
        """A write transaction; repository writes in the body commit together.

        Args:
            durable: ``True``: on stable storage when the block exits. ``False``:
                may be lost by an OS crash (never by a killed process); for rows
                that may be lost so (the session hot log).

        Returns:
            A context manager; an exception in the body rolls the writes back.
        """
        ...

    def close(self) -> None:
        """Release the connection(s)."""
        ...


@runtime_checkable
class DocumentStore(Protocol):
    """The Markdown text of memory files, by scope and workspace-relative path.

    Paths are POSIX, relative to the workspace (``MEMORY.md``,
    ``memory/2026-01-31.md``, ``memory/scopes/u1/LONG_TERM.md``) and must belong to
    the scope named with them; anything else (``..``, an absolute path, another
    scope's file, a link out of the workspace) is refused with
    :class:`~langmem_ext.core.errors.InvalidPathError` and nothing is read or written.
    """

    def read(self, scope: str, rel: str) -> str:
        """The text of one file of ``scope`` (``""`` when it does not exist).

        Raises:
            InvalidPathError: ``rel`` is not a file of ``scope``.
            MemoryFileError: the stored text is not UTF-8 or cannot be read.
        """
        ...

    def write(self, scope: str, rel: str, text: str) -> None:
        """Replace one file's text atomically: a reader sees the old or the new text.

        Raises:
            InvalidPathError: ``rel`` is not a file of ``scope``.
        """
        ...

    def delete(self, scope: str, rel: str) -> bool:
        """Remove one file of ``scope``.

        Returns:
            Whether it existed.

        Raises:
            InvalidPathError: ``rel`` is not a file of ``scope``.
        """
        ...

    def stamp(self, scope: str, rel: str) -> tuple[int, int] | None:
        """A cheap change mark of one file of ``scope``: ``(mtime_ns, size)`` for a
        file, ``(version, size)`` for a stored row. A write changes it (on files a
        same-size rewrite within one timestamp tick may not: callers compare the
        text's hash when the mark is unchanged but in doubt).

        Returns:
            The mark, or ``None`` when the file does not exist.
        """
        ...

    def list(self, scope: str) -> builtins.list[str]:
        """The scope's memory files: its long-term file, then its daily notes by date."""
        ...

    def scopes(self) -> builtins.list[str]:
        """The scopes that have memory files."""
        ...

    def tree(self) -> builtins.list[tuple[str, str]]:
        """Every file a person reads, as ``(scope, rel)`` sorted by path: each scope's
        memory files, its ``PROFILE.md`` and its transcripts."""
        ...


@runtime_checkable
class LineDocuments(DocumentStore, Protocol):
    """A document store that edits a file's lines in place (the PostgreSQL one): an
    edit of one bullet neither joins nor compares the whole text, so its cost does not
    grow with the file. The workspace uses it when the store offers it."""

    def lines(self, scope: str, rel: str) -> builtins.list[str] | None:
        """The file's text split at ``\\n`` (``None`` when it does not exist), a new
        list the caller may change.

        Raises:
            InvalidPathError: ``rel`` is not a file of ``scope``.
        """
        ...

    def splice(self, scope: str, rel: str, at: int, removed: int, added: Sequence[str]) -> None:
        """Replace ``removed`` lines from line ``at`` (counted from 0) by ``added``, as
        one write.

        Raises:
            InvalidPathError: ``rel`` is not a file of ``scope``.
            MemoryFileError: The file does not exist.
            ValueError: The lines named are not all in the file.
        """
        ...


@runtime_checkable
class WorkspaceLock(Protocol):
    """The re-entrant lock every write of a workspace holds (threads and processes)."""

    timeout: float

    def hold(self) -> AbstractContextManager[None]:
        """Hold the lock for a ``with`` block.

        Raises:
            WorkspaceLockTimeout: another holder kept it over ``timeout`` seconds.
        """
        ...

    def hold_scope(self, scope: str) -> AbstractContextManager[None]:
        """Hold the lock of one scope's writes for a ``with`` block: it excludes the
        writes of ``scope`` and :meth:`hold` (the whole workspace); the engine may let
        other scopes' writes run beside it. A hold nested in another of the same
        thread is part of the outer one.

        Raises:
            WorkspaceLockTimeout: another holder kept it over ``timeout`` seconds.
        """
        ...

    def try_hold(self, timeout: float = 0.0) -> AbstractContextManager[bool]:
        """Hold the lock for a ``with`` block if it frees within ``timeout`` seconds (0:
        only if it is free now); yields whether held, never raises a timeout."""
        ...

    def try_hold_scope(self, scope: str, timeout: float = 0.0) -> AbstractContextManager[bool]:
        """Hold the lock of one scope's writes for a ``with`` block if it frees within
        ``timeout`` seconds (0: only if it is free now); yields whether held (nested in
        this thread's hold, it is held), never raises a timeout."""
        ...


@runtime_checkable
class VectorIndex(Protocol):
    """Nearest-neighbour partitions of one embedder's vectors (cosine similarity).

    A partition is named by a scope, or by a passage kind and scope
    (:func:`~langmem_ext.workspace.sqlite.passage_rows.partition`), or by a ``kv.``
    key of the LangGraph store.
    """

    model_name: str

    def upsert(
        self,
        scope: str,
        ids: Sequence[str],
        embeddings: Sequence[Sequence[float]] | NDArray[np.float32],
        metadatas: Sequence[dict[str, Any]],
    ) -> None:
        """Insert or replace vectors (one row, one id, one non-empty metadata dict each).

        Raises:
            IndexUnavailableError: the index cannot be reached.
        """
        ...

    def bulk(self, rows: int) -> AbstractContextManager[None]:
        """A ``with`` block in which about ``rows`` vectors are upserted (a bulk load).

        An engine may load them its faster way (pgvector builds its HNSW index after
        a load that is large next to the table, instead of growing it row by row);
        the vectors stored and every query's answer are the same as without it.

        Args:
            rows: The vectors the block is about to upsert.

        Raises:
            IndexUnavailableError: the index cannot be reached.
        """
        ...

    def delete(self, scope: str, ids: Sequence[str]) -> None:
        """Remove vectors by id (unknown ids are ignored)."""
        ...

    def query(
        self,
        scope: str,
        embedding: Sequence[float],
        n: int,
        *,
        with_embeddings: bool = True,
        ids: Sequence[str] | None = None,
    ) -> list[VectorHit]:
        """The ``n`` nearest vectors, most similar first (``ids``: only among those)."""
        ...

    def embeddings(self, scope: str, ids: Sequence[str]) -> dict[str, Any]:
        """The stored vectors of ``ids`` (missing ids are left out)."""
        ...

    def count(self, scope: str) -> int:
        """Vectors in a partition (0 when it does not exist)."""
        ...

    def drop_all(self, scopes: Sequence[str]) -> None:
        """Drop whole partitions."""
        ...

    def reset_client(self) -> None:
        """Forget open handles (another process rewrote the index)."""
        ...

    def close(self) -> None:
        """Release the client."""
        ...


@runtime_checkable
class KeywordIndex(Protocol):
    """The derived index: entries' docs, passages, keyword search, kept vectors.

    Everything in it can be rebuilt from the Markdown and the ledger
    (:meth:`~langmem_ext.workspace.store.Workspace.rebuild`). Writes go through
    :meth:`apply`, one transaction per call.
    """

    # -- meta and files ---------------------------------------------------
    def close(self) -> None:
        """Release the connection(s)."""
        ...

    def get_meta(self, key: str) -> str | None:
        """A value of the index's own settings."""
        ...

    def set_meta(self, key: str, value: str) -> None:
        """Set a value of the index's own settings."""
        ...

    def bump_generation(self) -> int:
        """Count one more write (other processes compare it); returns the new count."""
        ...

    def file_stamps(self, scope: str | None = None) -> dict[str, FileStamp]:
        """The indexed files (of ``scope``, or all), path → stamp."""
        ...

    # -- docs -------------------------------------------------------------
    def apply(
        self,
        *,
        upserts: Sequence[Doc] = (),
        deletes: Sequence[tuple[str, str]] = (),
        files: Sequence[FileStamp] = (),
        drop_files: Sequence[str] = (),
        lines: Sequence[tuple[int, str]] = (),
        shifts: Sequence[tuple[str, int, int]] = (),
        generation: bool = False,
        model: str | None = None,
        embedded: Sequence[tuple[str, str]] = (),
        vectors: Sequence[Sequence[float]] | NDArray[np.float32] = (),
        prose: Sequence[ProseFile] = (),
    ) -> int | None:
        """Write docs, deletions, file stamps, moved lines and prose in one transaction.

        Returns:
            The new generation when ``generation`` is set, else ``None``.
        """
        ...

    def docs(self, ids: Iterable[str]) -> dict[str, Doc]:
        """The docs of ``ids`` (missing ids are left out)."""
        ...

    def docs_of_path(self, path: str) -> dict[str, Doc]:
        """The docs of one file, id → doc."""
        ...

    def lines_of_path(self, path: str) -> dict[str, int]:
        """The line of each doc of one file, id → line."""
        ...

    def scope_docs(self, scope: str, category: str | None = None) -> list[Doc]:
        """Every doc of a scope (of one category)."""
        ...

    def has_text(self, scope: str, text: str) -> bool:
        """Whether a doc of ``scope`` has exactly ``text``."""
        ...

    def ids_with_text(self, scope: str, text: str) -> list[str]:
        """The docs of ``scope`` whose text is exactly ``text``."""
        ...

    def category_counts(self, scope: str) -> dict[str, int]:
        """Docs per category in a scope."""
        ...

    def neighbours(
        self, scope: str, anchors: Sequence[tuple[str, str, int, str]], window: int
    ) -> dict[str, list[tuple[int, str]]]:
        """The entries around each anchor in its file section, id → (offset, id)."""
        ...

    def set_importance(self, entry_id: str, importance: float) -> None:
        """Copy one entry's importance into its doc."""
        ...

    def set_importances(self, changes: Sequence[tuple[str, float]]) -> None:
        """Copy entries' importances into their docs (one transaction)."""
        ...

    # -- keyword search ---------------------------------------------------
    def bm25(self, scope: str, query: str, limit: int) -> list[tuple[Doc, float]]:
        """Docs of ``scope`` matching any token of ``query``, best BM25 first."""
        ...

    def bm25_full(self, query: str) -> float:
        """The score a doc matching every token of ``query`` would get (normalises)."""
        ...

    def substring(self, scope: str, query: str, limit: int) -> list[tuple[Doc, float]]:
        """Docs of ``scope`` containing ``query`` verbatim."""
        ...

    def prose_bm25(self, scope: str, query: str, limit: int) -> list[tuple[Passage, float]]:
        """Prose passages of ``scope`` matching ``query``, best first."""
        ...

    def prose_bm25_full(self, query: str) -> float:
        """As :meth:`bm25_full`, for prose passages."""
        ...

    # -- kept vectors and exact search ------------------------------------
    def nearest_many(
        self, scope: str, model: str, queries: Sequence[Sequence[float]], n: int
    ) -> list[list[tuple[str, float]]] | None:
        """:meth:`nearest` for several queries."""
        ...

    def docs_with_vectors(
        self, ids: Sequence[str], model: str, scope: str | None = None
    ) -> dict[str, tuple[Doc, Vector | None]]:
        """Docs and their kept vectors."""
        ...

    def docs_with_previous_vectors(
        self, ids: Sequence[str], model: str, scope: str
    ) -> tuple[dict[str, tuple[Doc, Vector | None]], dict[str, Previous]]:
        """Docs and kept vectors, and the entry before each in its section."""
        ...

    def vector_todo(self, limit: int = 100_000) -> list[Doc]:
        """Docs whose text has no vector yet (the outbox)."""
        ...

    def vector_todo_count(self) -> int:
        """How many docs wait in the outbox."""
        ...

    def vector_deletes(self) -> list[tuple[str, str]]:
        """Queued vector deletions, (id, partition)."""
        ...

    def mark_vectors(
        self,
        done: Sequence[tuple[str, str]],
        deleted: Sequence[str] = (),
        *,
        model: str | None = None,
        vectors: Sequence[Sequence[float]] | NDArray[np.float32] = (),
    ) -> None:
        """Record vectors written ((id, text hash), kept copies) and deletions applied."""
        ...

    def missing_vectors(self, model: str) -> list[tuple[str, str, str]]:
        """Docs embedded but without a kept copy, (id, scope, text hash)."""
        ...

    def keep_vectors(
        self, model: str, vectors: Mapping[str, Sequence[float]], hashes: Mapping[str, str]
    ) -> None:
        """Keep copies of vectors read back from the vector index."""
        ...

    # -- passages ---------------------------------------------------------
    def prose_lagging(self, scope: str) -> list[str]:
        """Files of ``scope`` whose prose is not indexed at their current stamp."""
        ...

    def has_passages(self, kind: str, scope: str) -> bool:
        """Whether a scope has passages of one kind."""
        ...

    def passages_by_vector_id(self, kind: str, vector_ids: Sequence[str]) -> dict[str, Passage]:
        """Passages by vector id."""
        ...

    def passage_nearest(
        self,
        kind: str,
        scope: str,
        model: str,
        query: Sequence[float],
        n: int,
        *,
        since: float | None = None,
        until: float | None = None,
        role: str | None = None,
    ) -> list[tuple[Passage, float]] | None:
        """Exact nearest passages by kept vectors; ``None`` when there are too many."""
        ...

    def passage_todo(self, kind: str, limit: int = 100_000) -> list[tuple[int, Passage]]:
        """Passages without a vector yet, (row id, passage)."""
        ...

    def mark_passages(
        self,
        done: Sequence[tuple[int, str]],
        model: str,
        vectors: Sequence[Sequence[float]] | NDArray[np.float32],
    ) -> None:
        """Record prose vectors written, (row id, text hash), with kept copies."""
        ...

    def add_events(
        self,
        events: Sequence[Passage],
        model: str,
        vectors: Sequence[Sequence[float]] | NDArray[np.float32],
    ) -> None:
        """Add session events as passages with their vectors."""
        ...

    def purge_event_passages(self, before: float) -> int:
        """Remove event passages older than ``before``; returns how many."""
        ...


@runtime_checkable
class Leases(Protocol):
    """Leases of background jobs per scope: one holder at a time, for a limited time.

    A lease names a job (``maintain``, ``decay`` …), a scope (``*`` for a job over
    the whole workspace), its holder (a process's id) and when it runs out. A holder
    renews it while the job runs and releases it when done; a holder that dies stops
    renewing, so the lease runs out and another process may take the job over.
    """

    def acquire(self, job: str, scope: str, holder: str, seconds: float) -> bool:
        """Take the lease for ``seconds`` when it is free, run out or ``holder``'s own
        (then it is renewed). Returns whether ``holder`` holds it now.

        Raises:
            InvalidInputError: ``seconds`` is not positive, or a name is empty.
        """
        ...

    def renew(self, job: str, scope: str, holder: str, seconds: float) -> bool:
        """Extend ``holder``'s lease by ``seconds`` from now; ``False`` when it no
        longer holds it (the job must stop)."""
        ...

    def release(self, job: str, scope: str, holder: str) -> bool:
        """Give the lease up; returns whether ``holder`` held it."""
        ...

    def holder(self, job: str, scope: str) -> str | None:
        """Who holds the lease now (``None``: nobody, or it ran out)."""
        ...

    def close(self) -> None:
        """Release what the leases opened (a lease held stays until it runs out)."""
        ...


@runtime_checkable
class Checkpoints(Protocol):
    """Where a workspace's LangGraph checkpointers keep conversation threads."""

    def saver(self) -> BaseCheckpointSaver[Any]:
        """A checkpointer for synchronous use (the graph's ``invoke``, the Session API)."""
        ...

    def open_async(self) -> AbstractAsyncContextManager[BaseCheckpointSaver[Any]]:
        """An async-capable checkpointer, open for the body of an ``async with``."""
        ...


__all__ = [
    "Checkpoints",
    "DocumentStore",
    "KeywordIndex",
    "Leases",
    "Ledger",
    "LineDocuments",
    "VectorIndex",
    "WorkspaceLock",
]
