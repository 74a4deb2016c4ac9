"""Repository of the ledger's ``pending`` table."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import astuple

from langmem_ext.workspace.records import PendingRow
from langmem_ext.workspace.sqlite._repo import SqliteRepo
from langmem_ext.workspace.sqlite._sql import from_row, in_chunks


class SqlitePending(SqliteRepo):
    """:class:`~langmem_ext.workspace.records.PendingRepository` on SQLite."""

    def insert(self, row: PendingRow) -> None:
        """Store a new pending item."""
        self._run("INSERT INTO pending VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", astuple(row))

    def get(self, pending_id: str, *, scope: str | None = None) -> PendingRow | None:
        """One item by id (only in ``scope`` when given), or ``None``."""
        if scope is None:
            row = self._one("SELECT * FROM pending WHERE id = ?", (pending_id,))
        else:
            row = self._one("SELECT * FROM pending WHERE id = ? AND scope = ?", (pending_id, scope))
        return from_row(PendingRow, row) if row else None

    def of_scope(self, scope: str, status: str = "pending") -> list[PendingRow]:
        """Items of a scope with ``status``, oldest first."""
        rows = self._all(
            "SELECT * FROM pending WHERE scope = ? AND status = ? ORDER BY created_at",
            (scope, status),
        )
        return [from_row(PendingRow, r) for r in rows]

    def by_entry(self, entry_ids: Iterable[str]) -> dict[str, PendingRow]:
        """Items that carry these entry ids (any status), by entry id."""
        out: dict[str, PendingRow] = {}
        for chunk, marks in in_chunks(list(entry_ids)):
            for r in self._all(f"SELECT * FROM pending WHERE entry_id IN ({marks})", chunk):
                row = from_row(PendingRow, r)
                out[row.entry_id] = row
        return out

    def ids_with_status(self, ids: Iterable[str], status: str) -> set[str]:
        """Those of ``ids`` whose item has ``status``."""
        return {
            str(r[0])
            for chunk, marks in in_chunks(list(ids))
            for r in self._all(
                f"SELECT id FROM pending WHERE status = ? AND id IN ({marks})", (status, *chunk)
            )
        }

    def count_open(self, scope: str, now: float) -> int:
        """Items of a scope still pending and not expired at ``now``."""
        row = self._one(
            "SELECT count(*) FROM pending WHERE scope = ? AND status = 'pending' AND expires_at > ?",
            (scope, now),
        )
        return int(row[0]) if row else 0

    def has_text(self, scope: str, text: str) -> bool:
        """Whether an item of the scope (any status) has exactly this text."""
        return (
            self._one("SELECT 1 FROM pending WHERE scope = ? AND text = ? LIMIT 1", (scope, text))
            is not None
        )

    def resolve(self, pending_id: str, status: str, at: float) -> None:
        """Set an item's status (``confirmed`` / ``rejected``) resolved at ``at``."""
        self._run(
            "UPDATE pending SET status = ?, resolved_at = ? WHERE id = ?", (status, at, pending_id)
        )

    def expire(self, ids: Iterable[str], at: float) -> None:
        """Mark expired those of ``ids`` still pending (atomically)."""
        self._settle("id", ids, "expired", at)

    def confirm_entries(self, entry_ids: Iterable[str], at: float) -> None:
        """Mark confirmed the still-pending items of these entry ids (atomically)."""
        self._settle("entry_id", entry_ids, "confirmed", at)

    def confirm_written(self, scope: str | None = None) -> list[str]:
        """Mark confirmed the pending items whose entry is already written.

        A confirm killed between the Markdown write and the pending update leaves
        its item ``pending`` although the entry is stored (in the files, and in the
        ledger once they are synced). This settles such items (atomically), so a
        later reject cannot report ``rejected`` for a stored memory. Nothing is
        written when there is nothing to settle.

        Args:
            scope: Only this scope (all when ``None``).

        Returns:
            The pending ids marked confirmed.
        """
        sql = (
            "SELECT p.id FROM pending p JOIN entries e ON e.id = p.entry_id "
            "AND e.scope = p.scope AND e.deleted_at IS NULL WHERE p.status = 'pending'"
        )
        params: tuple[str, ...] = ()
        if scope is not None:
            sql += " AND p.scope = ?"
            params = (scope,)
        ids = [str(r[0]) for r in self._all(sql, params)]
        if ids:
            self._settle("id", ids, "confirmed", time.time())
        return ids

    def _settle(self, column: str, keys: Iterable[str], status: str, at: float) -> None:
        """Resolve the still-pending items whose ``column`` is one of ``keys``, in one write."""
        values = list(keys)
        if not values:
            return
        with self._atomic():
            for chunk, marks in in_chunks(values):
                self._run(
                    f"UPDATE pending SET status = ?, resolved_at = ? "
                    f"WHERE status = 'pending' AND {column} IN ({marks})",
                    (status, at, *chunk),
                )
