"""LangGraph checkpoints in the PostgreSQL database (``langgraph-checkpoint-postgres``).

:func:`postgres_saver` is the sync ``PostgresSaver`` on a connection pool;
:func:`async_postgres_saver` the ``AsyncPostgresSaver`` for the server's event loop.
Both create their tables on first use (``setup()``, idempotent), in the schema
``langgraph`` of the database.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any, cast

from langmem_ext.workspace.postgres._base import _require_psycopg, check_url

SCHEMA = "langgraph"
"""The PostgreSQL schema of LangGraph's checkpoint tables (its ``checkpoints`` would
otherwise meet the ledger's table of the same name)."""


def _kwargs() -> dict[str, Any]:
    """Connection options of a checkpointer's pool: LangGraph's tables in :data:`SCHEMA`."""
    from psycopg.rows import dict_row

    return {
        "autocommit": True,
        "prepare_threshold": 0,
        "row_factory": dict_row,
        "options": f"-c search_path={SCHEMA}",
    }


def _create_schema(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")


@contextmanager
def postgres_saver(url: str, *, max_size: int = 4) -> Iterator[Any]:
    """A ``PostgresSaver`` on ``url`` for the block (its tables set up), then closed.

    Args:
        url: ``postgresql://…`` of the database.
        max_size: Connections of its pool.

    Yields:
        The checkpointer.

    Raises:
        InvalidInputError: ``url`` is not a PostgreSQL URL.
        LangmemError: The ``postgres`` extra is missing (``EngineUnavailableError``).
    """
    url = check_url(url)
    _require_psycopg()
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg_pool import ConnectionPool

    _create_schema(url)
    with ConnectionPool(url, max_size=max_size, kwargs=_kwargs(), open=True) as pool:
        saver = PostgresSaver(cast(Any, pool))
        saver.setup()
        yield saver


@asynccontextmanager
async def async_postgres_saver(url: str, *, max_size: int = 4) -> AsyncIterator[Any]:
    """An ``AsyncPostgresSaver`` on ``url`` for the block (its tables set up): the
    asynchronous :func:`postgres_saver`, with its arguments and errors."""
    url = check_url(url)
    _require_psycopg()
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg_pool import AsyncConnectionPool

    await asyncio.to_thread(_create_schema, url)
    async with AsyncConnectionPool(url, max_size=max_size, kwargs=_kwargs(), open=False) as pool:
        saver = AsyncPostgresSaver(cast(Any, pool))
        await saver.setup()
        yield saver


class PgCheckpoints:
    """Checkpointers on one PostgreSQL database (the methods of the embedded
    ``SqliteCheckpoints``: :meth:`saver` and :meth:`open_async`).

    Args:
        url: ``postgresql://…`` of the database.
        max_size: Connections of each checkpointer's pool.
        closed_with: The engine's connections: closing them closes the savers' pools.

    Raises:
        InvalidInputError: ``url`` is not a PostgreSQL URL.
    """

    def __init__(self, url: str, *, max_size: int = 4, closed_with: Any = None) -> None:
        self.url = check_url(url)
        self.max_size = max_size
        self._pools: list[Any] = []
        if closed_with is not None:
            closed_with.on_close(self.close)

    def saver(self) -> Any:
        """A ``PostgresSaver`` on its own pool (tables set up; sync use), open until
        :meth:`close`."""
        _require_psycopg()
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg_pool import ConnectionPool

        _create_schema(self.url)
        pool = ConnectionPool(self.url, max_size=self.max_size, kwargs=_kwargs(), open=True)
        self._pools.append(pool)
        saver = PostgresSaver(cast(Any, pool))
        saver.setup()
        return saver

    def open_async(self) -> Any:
        """An ``AsyncPostgresSaver`` for the body of an ``async with``."""
        return async_postgres_saver(self.url, max_size=self.max_size)

    def close(self) -> None:
        """Close the pools of the savers :meth:`saver` opened."""
        pools, self._pools = self._pools, []
        for pool in pools:
            pool.close()


__all__ = ["SCHEMA", "PgCheckpoints", "async_postgres_saver", "postgres_saver"]
