"""One factory picks a workspace's storage engines from a URL.

:func:`open_engines` (from :class:`~langmem_ext.core.config.Settings`) and
:func:`engines_from_url` return an :class:`Engines` bundle: one implementation of
each protocol of :mod:`langmem_ext.workspace.protocols` plus the checkpointers.
The engine set is chosen by the URL's scheme:

* no URL, a ``sqlite:`` URL or a plain path: the embedded engines in the workspace
  folder (:func:`embedded_engines`): SQLite ``state.db``, the Markdown files,
  SQLite FTS5 in ``.index/index.db``, Chroma (embedded in ``.index/chroma``, or a
  server at ``Settings.index.chroma_url``), a file lock on ``.lock`` and
  ``checkpoints.db``;
* any other scheme: the opener registered for it with :func:`register_engine`
  (a module providing an engine registers it when imported; the PostgreSQL
  engine's module, ``langmem_ext.workspace.postgres``, is imported on the first
  ``postgresql://`` URL), else :class:`~langmem_ext.core.errors.EngineUnavailableError`.
"""

from __future__ import annotations

import importlib
import logging
import shutil
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langmem_ext.core.errors import EngineUnavailableError, InvalidInputError
from langmem_ext.workspace.protocols import (
    Checkpoints,
    DocumentStore,
    KeywordIndex,
    Leases,
    Ledger,
    VectorIndex,
    WorkspaceLock,
)

if TYPE_CHECKING:
    from langmem_ext.core.config import Settings

logger = logging.getLogger(__name__)

EMBEDDED = "embedded"
"""Name of the embedded engine set."""


@dataclass(frozen=True)
class EngineRequest:
    """What an engine opener is asked to open.

    Attributes:
        url: The database URL (``None``: the embedded default).
        root: The workspace folder (Markdown files, and the embedded databases).
        model_name: The embedder's name (vector partitions are per embedder).
        chroma_url: A Chroma server for the vectors (``None``: embedded Chroma for
            the embedded set, pgvector for the PostgreSQL one).
        collection_prefix: Prefix of vector partition names.
        lock_timeout: Seconds a writer waits for the workspace lock.
        cache_max_entries: Scopes of at most this many entries are held in memory
            for search by the keyword index.
        exact_max_entries: Scopes of at most this many entries are vector-searched
            exactly by the keyword index's kept vectors.
    """

    url: str | None
    root: Path
    model_name: str
    chroma_url: str | None = None
    collection_prefix: str = "langmem"
    lock_timeout: float = 30.0
    cache_max_entries: int = 50_000
    exact_max_entries: int = 5_000

    @property
    def scheme(self) -> str | None:
        """The URL's scheme, lower-cased (``None`` without a URL or for a plain path)."""
        return url_scheme(self.url)


@dataclass
class Engines:
    """The storage engines of one workspace, opened.

    Attributes:
        name: Which engine set (``"embedded"``, or the registered scheme's).
        ledger: The ledger.
        documents: The Markdown documents.
        lock: The workspace write lock.
        vectors: The vector index.
        open_keyword: Opens the keyword index (called on first use; rebuilds an
            unreadable one empty, to be filled by a sync).
        discard_index: Drops the derived indexes' storage (keyword index and
            vectors; the keyword index must be closed first). The ledger and
            documents are kept.
        checkpoints: The conversations' checkpointers.
        leases: The background jobs' leases (one process runs a scope's job).
        embedding_cache: Opens the engine's shared embedding cache (an object with
            ``get_many``, ``put_many`` and ``close``); ``None``: the embedded cache
            in the workspace folder's ``.index/embeddings.db``.
        run_locks: Locks by name that processes sharing the engines hold for a
            whole run of a conversation (``hold(name)`` / ``ahold(name)``);
            ``None``: runs of different processes are only checked at their
            commit (the embedded engine).
    """

    name: str
    ledger: Ledger
    documents: DocumentStore
    lock: WorkspaceLock
    vectors: VectorIndex
    open_keyword: Callable[[], KeywordIndex]
    discard_index: Callable[[], None]
    checkpoints: Checkpoints
    leases: Leases
    embedding_cache: Callable[[], Any] | None = None
    run_locks: Any | None = None

    def close(self) -> None:
        """Close the vector index, the leases and the ledger (the keyword index is its
        owner's)."""
        self.vectors.close()
        self.leases.close()
        self.ledger.close()


EngineOpener = Callable[[EngineRequest], Engines]
"""Opens an engine set for a request (see :func:`register_engine`)."""


def url_scheme(url: str | None) -> str | None:
    """The scheme of a database URL, lower-cased (``"postgresql"``), or ``None`` for no
    URL or a plain path. A ``+driver`` suffix is dropped (``postgresql+psycopg``)."""
    if url is None or "://" not in url:
        return None
    return url.split("://", 1)[0].split("+", 1)[0].lower()


def _embedded_root(request: EngineRequest) -> Path:
    """The folder the embedded engines use: the workspace; a URL or path naming
    another place is refused."""
    root = request.root.expanduser().resolve()
    url = (request.url or "").strip()
    if not url:
        return root
    if "://" in url:
        rest = url.split("://", 1)[1]
        if rest in ("", "/"):
            return root
        if not rest.startswith("/"):
            raise EngineUnavailableError(
                f"Database URL {request.url!r}: a sqlite URL names a local path "
                "(sqlite:///<path>), not a host."
            )
        raw = rest[1:].split("?", 1)[0]
    else:
        raw = url
    named = Path(raw).expanduser().resolve()
    if named in (root, root / "state.db"):
        return root
    raise EngineUnavailableError(
        f"Database URL {request.url!r} names {named}, but the embedded engines keep their "
        f"databases in the workspace folder {root}: leave database_url unset, or use "
        f"sqlite:///{root}."
    )


def embedded_engines(request: EngineRequest) -> Engines:
    """The embedded engine set in the workspace folder.

    SQLite ``state.db`` (ledger), the Markdown files (documents), SQLite FTS5 in
    ``.index/index.db`` (keyword index, opened on first use), Chroma (embedded in
    ``.index/chroma`` or the server at ``request.chroma_url``), a file lock on
    ``.lock``, SQLite checkpointers on ``checkpoints.db`` and the job leases in
    ``state.db`` (the processes sharing the folder share them).

    Args:
        request: What to open; its URL must be empty, ``sqlite://``, or name the
            workspace folder (or its ``state.db``).

    Returns:
        The opened engines.

    Raises:
        EngineUnavailableError: the URL names another place than the workspace.
    """
    from langmem_ext.workspace.documents import FileDocuments
    from langmem_ext.workspace.files import WorkspaceLock as FileLock
    from langmem_ext.workspace.files import private_dir
    from langmem_ext.workspace.layout import Layout
    from langmem_ext.workspace.sqlite.checkpoints import SqliteCheckpoints
    from langmem_ext.workspace.sqlite.keyword_index import KeywordIndex as Fts5Index
    from langmem_ext.workspace.sqlite.leases import SqliteLeases
    from langmem_ext.workspace.sqlite.ledger import Ledger as SqliteLedger
    from langmem_ext.workspace.vector_index import VectorIndex as ChromaIndex

    root = _embedded_root(request)
    layout = Layout(root)
    private_dir(root)
    lock = FileLock(layout.lock_file, request.lock_timeout)
    ledger = SqliteLedger(layout.state_db)
    vectors = ChromaIndex(
        layout.index_dir / "chroma",
        request.chroma_url,
        request.model_name,
        request.collection_prefix,
    )
    index_db = layout.index_dir / "index.db"

    def discard_index() -> None:
        """Delete ``.index/`` but the embedding cache (Chroma's files included)."""
        vectors.reset_client()
        keep = layout.index_dir / "embeddings.db"
        for child in list(layout.index_dir.iterdir()) if layout.index_dir.exists() else []:
            if child == keep or child.name.startswith("embeddings.db"):
                continue
            if child.is_dir():
                shutil.rmtree(child, ignore_errors=True)
            else:
                child.unlink(missing_ok=True)

    def open_keyword() -> KeywordIndex:
        def open_() -> Fts5Index:
            return Fts5Index(
                index_db,
                cache_max_entries=request.cache_max_entries,
                exact_max_entries=request.exact_max_entries,
            )

        try:
            return open_()
        except sqlite3.DatabaseError as e:
            logger.warning("derived index %s is unreadable (%s); rebuilding it", index_db, e)
            discard_index()
            return open_()

    return Engines(
        name=EMBEDDED,
        ledger=ledger,
        documents=FileDocuments(layout),
        lock=lock,
        vectors=vectors,
        open_keyword=open_keyword,
        discard_index=discard_index,
        checkpoints=SqliteCheckpoints(root / "checkpoints.db"),
        leases=SqliteLeases(layout.state_db),
    )


_OPENERS: dict[str, EngineOpener] = {"sqlite": embedded_engines}
"""Engine openers by URL scheme (see :func:`register_engine`)."""


def register_engine(scheme: str, opener: EngineOpener) -> None:
    """Make :func:`engines_from_url` open URLs of ``scheme`` with ``opener``.

    A package providing an engine set calls it when imported, e.g.
    ``register_engine("postgresql", open_postgres_engines)``. Registering a scheme
    again replaces its opener.

    Args:
        scheme: The URL scheme (``"postgresql"``); matched case-insensitively,
            without a ``+driver`` suffix.
        opener: Called with an :class:`EngineRequest`, returns the opened
            :class:`Engines`.

    Raises:
        InvalidInputError: ``scheme`` is empty or holds ``:``, ``/`` or ``+``.
    """
    key = scheme.strip().lower()
    if not key or any(ch in key for ch in ":/+"):
        raise InvalidInputError(f"Invalid engine scheme {scheme!r}: use e.g. 'postgresql'.")
    _OPENERS[key] = opener


def registered_schemes() -> list[str]:
    """The URL schemes an engine is registered for, sorted."""
    return sorted(_OPENERS)


_PROVIDERS: dict[str, tuple[str, str]] = {
    "postgresql": ("langmem_ext.workspace.postgres", "the PostgreSQL engine"),
    "postgres": ("langmem_ext.workspace.postgres", "the PostgreSQL engine"),
}
"""Schemes whose engine lives in a module of its own: scheme → (module, what it is).
The module registers its opener when imported (:func:`register_engine`); it is
imported the first time a URL of the scheme is opened."""


def _provided(scheme: str) -> tuple[EngineOpener | None, str | None]:
    """Import the module that provides ``scheme``'s engine, if one is known; returns the
    opener it registered, or why there is none."""
    module, what = _PROVIDERS.get(scheme, (None, None))
    if module is None:
        return None, None
    try:
        importlib.import_module(module)
    except ImportError as e:
        return None, f"{what} is not installed in this environment ({e})"
    opener = _OPENERS.get(scheme)
    return opener, None if opener is not None else f"{what} did not register {scheme!r}"


def opener_for(url: str | None, root: Path) -> EngineOpener:
    """The opener of the engines ``url`` names, checked without opening anything.

    A scheme nothing registered yet whose engine lives in a known module
    (``postgresql``) has that module imported first, which registers it.

    Args:
        url: The database URL (see :func:`engines_from_url`).
        root: The workspace folder.

    Returns:
        The opener to call with an :class:`EngineRequest`.

    Raises:
        EngineUnavailableError: no engine is registered for the URL's scheme (or its
            module cannot be imported), or a ``sqlite:`` URL or path names another
            place than the workspace.
    """
    scheme = url_scheme(url)
    if scheme is None or scheme == "sqlite":
        _embedded_root(EngineRequest(url=url, root=root, model_name=""))
        return _OPENERS.get("sqlite", embedded_engines) if scheme else embedded_engines
    opener = _OPENERS.get(scheme)
    why = None
    if opener is None:
        opener, why = _provided(scheme)
    if opener is not None:
        return opener
    shown = (url or "").split("://", 1)[0] + "://…"
    if why is not None:
        msg = (
            f"Database URL {shown!r}: {why}, so the workspace cannot be opened there; "
            "unset LANGMEM_DATABASE_URL (database_url) to use the embedded engines."
        )
    else:
        msg = (
            f"Database URL {shown!r}: no storage engine handles the scheme {scheme!r} "
            f"(known: {', '.join(registered_schemes())}); unset LANGMEM_DATABASE_URL "
            "(database_url) to use the embedded engines."
        )
    raise EngineUnavailableError(msg)


def engines_from_url(
    url: str | None,
    *,
    root: Path,
    model_name: str,
    chroma_url: str | None = None,
    collection_prefix: str = "langmem",
    lock_timeout: float = 30.0,
    cache_max_entries: int = 50_000,
    exact_max_entries: int = 5_000,
) -> Engines:
    """Open the engines a database URL names.

    Args:
        url: ``None``, ``sqlite://``, ``sqlite:///<workspace>`` or a plain path: the
            embedded engines; another scheme: its registered opener.
        root: The workspace folder.
        model_name: The embedder's name.
        chroma_url: A Chroma server for the vectors, with any engine set (``None``:
            the set's own vector index).
        collection_prefix: Prefix of vector partition names.
        lock_timeout: Seconds a writer waits for the workspace lock.
        cache_max_entries: See :class:`EngineRequest`.
        exact_max_entries: See :class:`EngineRequest`.

    Returns:
        The opened engines.

    Raises:
        EngineUnavailableError: no engine is registered for the URL's scheme, or
            the engine cannot use the URL. Nothing is opened.
    """
    request = EngineRequest(
        url=url,
        root=root,
        model_name=model_name,
        chroma_url=chroma_url,
        collection_prefix=collection_prefix,
        lock_timeout=lock_timeout,
        cache_max_entries=cache_max_entries,
        exact_max_entries=exact_max_entries,
    )
    return opener_for(url, root)(request)


def open_engines(settings: Settings, *, root: Path, model_name: str) -> Engines:
    """Open the engines ``settings`` name (``settings.database_url``).

    Args:
        settings: The settings (database URL, Chroma server, lock timeout, index sizes).
        root: The workspace folder (resolved ``settings.workspace``).
        model_name: The embedder's name.

    Returns:
        The opened engines.

    Raises:
        EngineUnavailableError: see :func:`engines_from_url`.
    """
    return engines_from_url(
        settings.database_url,
        root=root,
        model_name=model_name,
        chroma_url=settings.index.chroma_url,
        collection_prefix=settings.index.collection_prefix,
        lock_timeout=settings.lock_timeout_s,
        cache_max_entries=settings.index.cache_max_entries,
        exact_max_entries=settings.index.exact_search_max_entries,
    )


__all__ = [
    "EMBEDDED",
    "EngineOpener",
    "EngineRequest",
    "Engines",
    "embedded_engines",
    "engines_from_url",
    "open_engines",
    "opener_for",
    "register_engine",
    "registered_schemes",
    "url_scheme",
]
