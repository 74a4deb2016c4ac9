"""Repository of the ledger's ``turn_jobs`` table on PostgreSQL (ledger migration 13).

Claims run out by the database's clock, so the replicas' clocks do not matter. The
next free job is chosen with ``FOR UPDATE SKIP LOCKED``: replicas claiming at once
each get another job instead of queueing on one row.
"""

from __future__ import annotations

from langmem_ext.workspace.postgres._base import PgRepo
from langmem_ext.workspace.sql.base import POSTGRES
from langmem_ext.workspace.sql.turn_jobs import SharedTurnJobs


class PgTurnJobs(PgRepo, SharedTurnJobs):
    """:class:`~langmem_ext.workspace.records.TurnJobRepository` on PostgreSQL."""

    dialect = POSTGRES
    now = "extract(epoch FROM clock_timestamp())"
    next_free = SharedTurnJobs.next_free + " FOR UPDATE SKIP LOCKED"


__all__ = ["PgTurnJobs"]
