"""The statements of the ``turn_jobs`` repository (ledger migration 13), shared by
both SQL engines.

A claim is one ``UPDATE … RETURNING`` whose condition is that nobody holds the job,
that its claim ran out, or that the claimant holds it already: the engine runs it
atomically (SQLite one writer at a time; PostgreSQL re-checks the condition on the
row it locked, and :meth:`SharedTurnJobs.claim_next` skips rows another
transaction is claiming), so two processes racing for one job never both get it.
Times of claims are the engine's clock (:attr:`SharedTurnJobs.now`), not the
processes'.
"""

from __future__ import annotations

from dataclasses import astuple
from typing import ClassVar

from langmem_ext.workspace.records import TurnJob
from langmem_ext.workspace.sql.base import SharedRepo, columns, from_row

JOB_COLUMNS = columns(TurnJob)
_FREE = "(claimed_by IS NULL OR claimed_until <= {now})"


class SharedTurnJobs(SharedRepo):
    """:class:`~langmem_ext.workspace.records.TurnJobRepository` over the engine's
    statements (the engine names its dialect, clock and next-job query)."""

    now: ClassVar[str]
    """The time now in epoch seconds, in the engine's SQL."""
    next_free: ClassVar[str] = (
        "SELECT id FROM turn_jobs WHERE " + _FREE + " ORDER BY created_at, id LIMIT 1"
    )
    """The oldest job nobody holds (``{now}``: the clock)."""

    def add(self, job: TurnJob, *, holder: str | None = None, seconds: float = 0.0) -> None:
        """:meth:`TurnJobRepository.add <langmem_ext.workspace.records.TurnJobRepository.add>`."""
        row = astuple(job)[:-2]
        until = f"{self.now} + ?" if holder is not None else "NULL"
        marks = ",".join("?" * len(row))
        self._run(
            self.dialect.sql(f"INSERT INTO turn_jobs ({JOB_COLUMNS}) VALUES ({marks}, ?, {until})"),
            (*row, holder, *([float(seconds)] if holder is not None else [])),
        )

    def _claim(
        self, where: str, params: tuple[object, ...], holder: str, seconds: float
    ) -> TurnJob | None:
        rows = self._all(
            self.dialect.sql(
                f"UPDATE turn_jobs SET claimed_by = ?, claimed_until = {self.now} + ? "
                f"WHERE {where} RETURNING {JOB_COLUMNS}"
            ),
            (holder, float(seconds), *params),
        )
        return from_row(TurnJob, rows[0]) if rows else None

    def claim(self, job_id: str, holder: str, seconds: float) -> TurnJob | None:
        """:meth:`TurnJobRepository.claim <langmem_ext.workspace.records.TurnJobRepository.claim>`."""
        free = _FREE.format(now=self.now)
        return self._claim(
            f"id = ? AND ({free} OR claimed_by = ?)", (job_id, holder), holder, seconds
        )

    def claim_next(self, holder: str, seconds: float) -> TurnJob | None:
        """:meth:`TurnJobRepository.claim_next <langmem_ext.workspace.records.TurnJobRepository.claim_next>`."""
        free = _FREE.format(now=self.now)
        chosen = self.next_free.format(now=self.now)
        return self._claim(f"id = ({chosen}) AND {free}", (), holder, seconds)

    def done(self, job_id: str, holder: str) -> bool:
        """:meth:`TurnJobRepository.done <langmem_ext.workspace.records.TurnJobRepository.done>`."""
        sql = "DELETE FROM turn_jobs WHERE id = ? AND claimed_by = ?"
        return self._changed(self.dialect.sql(sql), (job_id, holder)) > 0

    def count(self, scope: str | None = None) -> int:
        """:meth:`TurnJobRepository.count <langmem_ext.workspace.records.TurnJobRepository.count>`."""
        if scope is None:
            row = self._one("SELECT count(*) FROM turn_jobs")
        else:
            row = self._one(
                self.dialect.sql("SELECT count(*) FROM turn_jobs WHERE scope = ?"), (scope,)
            )
        return int(row[0]) if row else 0


__all__ = ["JOB_COLUMNS", "SharedTurnJobs"]
