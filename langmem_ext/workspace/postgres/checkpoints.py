"""LangGraph checkpoints in the PostgreSQL database (``langgraph-checkpoint-postgres``).

:func:`postgres_saver` is the sync ``PostgresSaver`` on a connection pool;
:func:`async_postgres_saver` the ``AsyncPostgresSaver`` for the server's event loop.
Both create their tables on first use (``setup()``, idempotent).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any, cast

from langmem_ext.workspace.postgres._base import _require_psycopg, check_url


def _kwargs() -> dict[str, Any]:
    from psycopg.rows import dict_row

    return {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}


@contextmanager
def postgres_saver(url: str, *, max_size: int = 4) -> Iterator[Any]:
    """A ``PostgresSaver`` on ``url`` for the block (its tables set up), then closed.

    Args:
        url: ``postgresql://…`` of the database.
        max_size: Connections of its pool.

    Yields:
        The checkpointer.

    Raises:
        InvalidInputError: ``url`` is not a PostgreSQL URL, or the extra is missing.
    """
    url = check_url(url)
    _require_psycopg()
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg_pool import ConnectionPool

    with ConnectionPool(url, max_size=max_size, kwargs=_kwargs(), open=True) as pool:
        saver = PostgresSaver(cast(Any, pool))
        saver.setup()
        yield saver


@asynccontextmanager
async def async_postgres_saver(url: str, *, max_size: int = 4) -> AsyncIterator[Any]:
    """An ``AsyncPostgresSaver`` on ``url`` for the block (its tables set up).

    Args:
        url: ``postgresql://…`` of the database.
        max_size: Connections of its pool.

    Yields:
        The checkpointer.

    Raises:
        InvalidInputError: ``url`` is not a PostgreSQL URL, or the extra is missing.
    """
    url = check_url(url)
    _require_psycopg()
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg_pool import AsyncConnectionPool

    async with AsyncConnectionPool(url, max_size=max_size, kwargs=_kwargs(), open=False) as pool:
        saver = AsyncPostgresSaver(cast(Any, pool))
        await saver.setup()
        yield saver


__all__ = ["async_postgres_saver", "postgres_saver"]
