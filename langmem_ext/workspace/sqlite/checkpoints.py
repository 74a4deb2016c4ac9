"""The embedded checkpointers of the conversations: LangGraph's SQLite savers on
``checkpoints.db`` in the workspace."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from langmem_ext.workspace.files import private_file

logger = logging.getLogger(__name__)


def checkpoint_connection(path: str | Path) -> sqlite3.Connection:
    """A connection for LangGraph's ``SqliteSaver``: WAL, ``synchronous=NORMAL``.

    A step's checkpoint survives a killed process as soon as it is written; only an
    OS crash or power loss can lose the last steps, because commits do not wait for
    the disk (with SQLite's default journal every step would be an fsynced commit).

    Args:
        path: The database file.

    Returns:
        A connection usable from any thread (the saver serialises its calls).
    """
    conn = sqlite3.connect(private_file(Path(path)), check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


@asynccontextmanager
async def _open_async(path: Path) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    try:
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    except ImportError:
        from langgraph.checkpoint.memory import InMemorySaver

        logger.warning(
            "aiosqlite is not installed: serving with InMemorySaver, threads are lost "
            "on restart (pip install aiosqlite for AsyncSqliteSaver on %s)",
            path,
        )
        yield InMemorySaver()
        return
    async with AsyncSqliteSaver.from_conn_string(str(private_file(path))) as saver:
        logger.info("serving checkpointer: AsyncSqliteSaver on %s", path)
        yield saver


class SqliteCheckpoints:
    """Checkpointers on one SQLite file (implements
    :class:`~langmem_ext.workspace.protocols.Checkpoints`).

    Args:
        path: The database file (``checkpoints.db`` in the workspace), created
            private to the user on first use.
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    def saver(self) -> BaseCheckpointSaver[Any]:
        """A new ``SqliteSaver`` on the file (WAL, ``synchronous=NORMAL``; sync use)."""
        from langgraph.checkpoint.sqlite import SqliteSaver

        return SqliteSaver(checkpoint_connection(self.path))

    def open_async(self) -> AbstractAsyncContextManager[BaseCheckpointSaver[Any]]:
        """``AsyncSqliteSaver`` on the file for an ``async with`` body; an
        ``InMemorySaver`` (logged: threads are lost on restart) without aiosqlite."""
        return _open_async(self.path)


__all__ = ["SqliteCheckpoints", "checkpoint_connection"]
