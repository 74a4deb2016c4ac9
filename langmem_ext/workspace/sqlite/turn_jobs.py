"""Repository of the ledger's ``turn_jobs`` table on SQLite (ledger migration 13).

The processes sharing an embedded workspace run on one machine: a claim runs out by
its clock. SQLite runs one writer at a time, so a claim's ``UPDATE`` is atomic.
"""

from __future__ import annotations

from langmem_ext.workspace.sql.base import SQLITE
from langmem_ext.workspace.sql.schema import SQLITE_TYPES
from langmem_ext.workspace.sql.turn_jobs import SharedTurnJobs
from langmem_ext.workspace.sqlite._repo import SqliteRepo


class SqliteTurnJobs(SqliteRepo, SharedTurnJobs):
    """:class:`~langmem_ext.workspace.records.TurnJobRepository` on SQLite."""

    dialect = SQLITE
    now = SQLITE_TYPES.now


__all__ = ["SqliteTurnJobs"]
