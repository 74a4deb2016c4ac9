"""The SQLite connection of the graph's checkpointer (``checkpoints.db``)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from langmem_ext.workspace.files import private_file


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


__all__ = ["checkpoint_connection"]
