"""Leases in the SQLite ledger (``state.db``): a job of a scope runs in one process at
a time.

The processes sharing an embedded workspace run on one machine, so a lease runs out
by that machine's clock (``time.time()``). The table is the ledger's ``job_leases``
(:mod:`~langmem_ext.workspace.sqlite.schema`); each call is one short transaction on
a connection of its own, so a lease is taken or renewed while the ledger's
connection is busy with a long write.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from langmem_ext.core.errors import InvalidInputError
from langmem_ext.workspace.files import private_file


def check_lease(job: str, scope: str, holder: str, seconds: float) -> None:
    """Refuse a lease without a job, scope or holder, or of no positive duration.

    Raises:
        InvalidInputError: A name is empty or ``seconds`` is not positive.
    """
    if not (job and scope and holder):
        raise InvalidInputError("a lease needs a job, a scope and a holder")
    if not seconds > 0:
        raise InvalidInputError(f"a lease lasts a positive number of seconds, not {seconds!r}")


class SqliteLeases:
    """:class:`~langmem_ext.workspace.protocols.Leases` in ``state.db``, shared by the
    processes of one machine.

    Args:
        path: The ledger's database file (migrated: it has ``job_leases``).
    """

    def __init__(self, path: Path) -> None:
        self._conn = sqlite3.connect(
            private_file(path), timeout=30, check_same_thread=False, isolation_level=None
        )
        self._conn.execute("PRAGMA busy_timeout=30000")
        # a lease lost with the machine's power is harmless (its holder is gone too),
        # so commits skip the wait for the disk
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._lock = threading.Lock()

    def acquire(self, job: str, scope: str, holder: str, seconds: float) -> bool:
        """:meth:`Leases.acquire <langmem_ext.workspace.protocols.Leases.acquire>`."""
        check_lease(job, scope, holder, seconds)
        now = time.time()
        with self._lock:
            row = self._conn.execute(
                "INSERT INTO job_leases AS l (job, scope, holder, expires_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (job, scope) DO UPDATE "
                "SET holder = excluded.holder, expires_at = excluded.expires_at "
                "WHERE l.holder = excluded.holder OR l.expires_at <= ? RETURNING holder",
                (job, scope, holder, now + float(seconds), now),
            ).fetchone()
        return row is not None

    def renew(self, job: str, scope: str, holder: str, seconds: float) -> bool:
        """:meth:`Leases.renew <langmem_ext.workspace.protocols.Leases.renew>`."""
        check_lease(job, scope, holder, seconds)
        now = time.time()
        with self._lock:
            row = self._conn.execute(
                "UPDATE job_leases SET expires_at = ? WHERE job = ? AND scope = ? "
                "AND holder = ? AND expires_at > ? RETURNING 1",
                (now + float(seconds), job, scope, holder, now),
            ).fetchone()
        return row is not None

    def release(self, job: str, scope: str, holder: str) -> bool:
        """Give the lease up (the job is done). Returns whether ``holder`` held it."""
        with self._lock:
            row = self._conn.execute(
                "DELETE FROM job_leases WHERE job = ? AND scope = ? AND holder = ? RETURNING 1",
                (job, scope, holder),
            ).fetchone()
        return row is not None

    def holder(self, job: str, scope: str) -> str | None:
        """Who holds the lease now (``None``: nobody, or it ran out)."""
        with self._lock:
            row = self._conn.execute(
                "SELECT holder FROM job_leases WHERE job = ? AND scope = ? AND expires_at > ?",
                (job, scope, time.time()),
            ).fetchone()
        return None if row is None else str(row[0])

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._conn.close()


__all__ = ["SqliteLeases", "check_lease"]
