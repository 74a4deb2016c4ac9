"""Leases in the PostgreSQL database: a job of a scope runs on one replica at a time.

A lease names a job (``extraction``, ``decay`` …), a scope, its holder (a replica's
id) and when it runs out, by the database's clock (replicas' clocks do not matter).
:meth:`PgLeases.acquire` takes a free or run-out lease, or renews the holder's own;
a holder renews while it works and releases when done. A replica that dies stops
renewing, so its lease runs out and another replica takes the job over (the job must
be safe to run again from where the ledger says it stopped).
"""

from __future__ import annotations

from langmem_ext.workspace.postgres._base import PgConnections
from langmem_ext.workspace.sql import schema as ddl
from langmem_ext.workspace.sql.schema import POSTGRES_TYPES
from langmem_ext.workspace.sqlite.leases import check_lease as _check

SCHEMA = ddl.job_leases(POSTGRES_TYPES)
_NOW = "extract(epoch FROM clock_timestamp())"


class PgLeases:
    """:class:`~langmem_ext.workspace.protocols.Leases` of jobs per scope, shared by
    every replica of the database.

    Args:
        db: The engine's connections.
    """

    def __init__(self, db: PgConnections) -> None:
        self._db = db
        with db.transaction() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(hashtextextended('job leases', 0))")
            for statement in SCHEMA:
                conn.execute(statement)

    def acquire(self, job: str, scope: str, holder: str, seconds: float) -> bool:
        """:meth:`Leases.acquire <langmem_ext.workspace.protocols.Leases.acquire>`."""
        _check(job, scope, holder, seconds)
        with self._db.connection() as conn:
            row = conn.execute(
                "INSERT INTO job_leases AS l (job, scope, holder, expires_at) "
                f"VALUES (%s, %s, %s, {_NOW} + %s) ON CONFLICT (job, scope) DO UPDATE "
                "SET holder = excluded.holder, expires_at = excluded.expires_at "
                f"WHERE l.holder = excluded.holder OR l.expires_at <= {_NOW} RETURNING holder",
                (job, scope, holder, float(seconds)),
            ).fetchone()
        return row is not None

    def renew(self, job: str, scope: str, holder: str, seconds: float) -> bool:
        """:meth:`Leases.renew <langmem_ext.workspace.protocols.Leases.renew>`."""
        _check(job, scope, holder, seconds)
        with self._db.connection() as conn:
            row = conn.execute(
                f"UPDATE job_leases SET expires_at = {_NOW} + %s WHERE job = %s AND scope = %s "
                f"AND holder = %s AND expires_at > {_NOW} RETURNING 1",
                (float(seconds), job, scope, holder),
            ).fetchone()
        return row is not None

    def release(self, job: str, scope: str, holder: str) -> bool:
        """Give the lease up (the job is done). Returns whether ``holder`` held it."""
        with self._db.connection() as conn:
            row = conn.execute(
                "DELETE FROM job_leases WHERE job = %s AND scope = %s AND holder = %s RETURNING 1",
                (job, scope, holder),
            ).fetchone()
        return row is not None

    def holder(self, job: str, scope: str) -> str | None:
        """Who holds the lease now (``None``: nobody, or it ran out)."""
        with self._db.connection() as conn:
            row = conn.execute(
                f"SELECT holder FROM job_leases WHERE job = %s AND scope = %s "
                f"AND expires_at > {_NOW}",
                (job, scope),
            ).fetchone()
        return None if row is None else str(row[0])

    def close(self) -> None:
        """Nothing to release: the connections are the ledger's, closed with it."""


__all__ = ["SCHEMA", "PgLeases"]
