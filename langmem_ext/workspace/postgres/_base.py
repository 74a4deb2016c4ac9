"""Connections of the PostgreSQL engine: one pool, and the transaction a thread is in.

A repository method called inside :meth:`PgConnections.transaction` (same thread)
joins that transaction; one called outside it runs on a pooled connection of its
own and commits when it returns, as the SQLite repositories do on their one
connection.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from langmem_ext.core.errors import IndexUnavailableError, InvalidInputError, LangmemError

CLIENT_CHECK_MS = 1000
"""How often the server checks, while a statement of ours runs or waits for a lock,
that our process is still connected."""

_CLIENT_CHECK = "SELECT set_config('client_connection_check_interval', %s, false)"


def watch_client(conn: Any) -> None:
    """Have the server end ``conn``'s statement when its process is gone.

    Without it, a statement of a killed process (e.g. one waiting for an advisory
    lock) goes on until it ends or times out: a wait for an exclusive lock keeps
    every later request for that lock queued behind it, so another replica's writes
    stalled for up to the lock's timeout after a replica was killed. Servers before
    PostgreSQL 14 lack the setting and are left as they are.

    Args:
        conn: An autocommit psycopg connection.
    """
    if conn.info.server_version >= 140000:
        conn.execute(_CLIENT_CHECK, (f"{CLIENT_CHECK_MS}ms",))


async def awatch_client(conn: Any) -> None:
    """:func:`watch_client` on an async connection."""
    if conn.info.server_version >= 140000:
        await conn.execute(_CLIENT_CHECK, (f"{CLIENT_CHECK_MS}ms",))


def _require_psycopg() -> None:
    """Raise the engine factory's error when the ``postgres`` extra is missing."""
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError as exc:  # pragma: no cover - depends on the installed extras
        raise unavailable(
            "the PostgreSQL engine is not installed in this environment (psycopg is "
            'missing): pip install "langmem-ext[postgres]"'
        ) from exc


def check_url(url: str) -> str:
    """``url`` when it names a PostgreSQL database, as ``postgresql://…``.

    The scheme may be ``postgresql``, ``postgres`` or ``postgresql+psycopg``, in any
    case.

    Raises:
        InvalidInputError: Another scheme, or an empty URL.
    """
    text = (url or "").strip()
    scheme, sep, rest = text.partition("://")
    if not sep or scheme.lower() not in ("postgresql", "postgres", "postgresql+psycopg"):
        shown = f"{scheme}://…" if sep else "(not a URL)"
        raise InvalidInputError(
            f"not a PostgreSQL URL: {shown} (expected postgresql://user@host/database)"
        )
    return "postgresql://" + rest


def unavailable(message: str) -> LangmemError:
    """The error of a database the engines cannot use: the package's
    ``EngineUnavailableError`` when it has one (with the engine factory), else
    :class:`IndexUnavailableError`."""
    from langmem_ext.core import errors

    kind: type[LangmemError] = getattr(errors, "EngineUnavailableError", IndexUnavailableError)
    return kind(message)


def describe(url: str) -> str:
    """``url`` without its password, for messages (``postgresql://user@host/db``)."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        info = conninfo_to_dict(url)
    except Exception:
        return "(an unreadable URL)"
    host = info.get("host") or "localhost"
    port = f":{info['port']}" if info.get("port") else ""
    return f"postgresql://{info.get('user') or ''}@{host}{port}/{info.get('dbname') or ''}"


class PgConnections:
    """A connection pool and the transaction each thread holds.

    Args:
        url: ``postgresql://…`` of the database.
        min_size: Connections the pool keeps open.
        max_size: Connections the pool opens at most.
        timeout: Seconds a caller waits for a free connection.
        configure: Called with each new connection (e.g. to register pgvector's type).
        connect_timeout: Seconds to wait for the first connection.

    Raises:
        InvalidInputError: ``url`` is not a PostgreSQL URL.
        LangmemError: The ``postgres`` extra is missing (``EngineUnavailableError``).
        LangmemError: The database cannot be reached within ``connect_timeout``
            (:func:`unavailable`; nothing stays open).
    """

    def __init__(
        self,
        url: str,
        *,
        min_size: int = 1,
        max_size: int = 8,
        timeout: float = 30.0,
        configure: Callable[[Any], None] | None = None,
        connect_timeout: float = 10.0,
    ) -> None:
        _require_psycopg()
        from psycopg_pool import ConnectionPool

        self.url = check_url(url)
        self._local = threading.local()
        self._on_close: list[Callable[[], None]] = []

        def configured(conn: Any) -> None:
            watch_client(conn)
            if configure is not None:
                configure(conn)

        self.pool = ConnectionPool(
            self.url,
            min_size=min_size,
            max_size=max_size,
            timeout=timeout,
            kwargs={"autocommit": True},
            open=True,
            name="langmem-ext",
            configure=configured,
        )
        from psycopg_pool import PoolTimeout

        try:
            self.pool.wait(timeout=connect_timeout)
        except PoolTimeout as exc:
            self.pool.close()
            raise unavailable(
                f"The PostgreSQL database {describe(self.url)} cannot be reached within "
                f"{connect_timeout:g}s; start it or check LANGMEM_DATABASE_URL."
            ) from exc

    def on_close(self, release: Callable[[], None]) -> None:
        """Have :meth:`close` call ``release`` too (another part's resources)."""
        self._on_close.append(release)

    def close(self) -> None:
        """Release what :meth:`on_close` registered, then close the pool."""
        releases, self._on_close = self._on_close, []
        try:
            for release in reversed(releases):
                release()
        finally:
            self.pool.close()

    def current(self) -> Any | None:
        """The connection of this thread's open transaction, or ``None``."""
        return getattr(self._local, "conn", None)

    @contextmanager
    def connection(self) -> Iterator[Any]:
        """This thread's transaction connection, or a pooled one (autocommit) for the block."""
        conn = self.current()
        if conn is not None:
            yield conn
            return
        with self.pool.connection() as conn:
            yield conn

    @contextmanager
    def transaction(self, *, durable: bool = True) -> Iterator[Any]:
        """One transaction for the block; calls of this thread inside it join it.

        Nested, it is a savepoint of the outer one.

        Args:
            durable: ``False``: the commit does not wait for the write-ahead log to
                reach the disk (``synchronous_commit = off``; a crash of the server
                may lose the last such commits, never a part of one).
        """
        conn = self.current()
        if conn is not None:
            with conn.transaction():
                yield conn
            return
        with self.pool.connection() as conn, conn.transaction():
            if not durable:
                conn.execute("SET LOCAL synchronous_commit TO OFF")
            self._local.conn = conn
            try:
                yield conn
            finally:
                self._local.conn = None


class PgRepo:
    """A repository's access to the ledger's connections (see :class:`PgConnections`).

    Args:
        db: The ledger's connections.
    """

    def __init__(self, db: PgConnections) -> None:
        self._db = db

    def _all(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[tuple[Any, ...]]:
        with self._db.connection() as conn:
            return list(conn.execute(sql, params).fetchall())

    def _one(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> tuple[Any, ...] | None:
        with self._db.connection() as conn:
            row = conn.execute(sql, params).fetchone()
        return tuple(row) if row is not None else None

    def _run(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> int:
        """Run a write; returns the rows it changed."""
        with self._db.connection() as conn:
            return int(conn.execute(sql, params).rowcount or 0)

    _changed = _run

    def _run_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        batch = list(rows)
        if not batch:
            return
        with self._atomic() as conn, conn.cursor() as cur:
            cur.executemany(sql, batch)

    @contextmanager
    def _atomic(self) -> Iterator[Any]:
        """Several statements as one write: they join this thread's transaction, or
        run in one of their own."""
        if self._db.current() is not None:
            with self._db.connection() as conn:
                yield conn
            return
        with self._db.transaction() as conn:
            yield conn


__all__ = [
    "PgConnections",
    "PgRepo",
    "awatch_client",
    "check_url",
    "describe",
    "unavailable",
    "watch_client",
]
