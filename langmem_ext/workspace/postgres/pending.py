"""Repository of the ledger's ``pending`` table on PostgreSQL."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import astuple, fields

from langmem_ext.workspace.postgres._base import PgRepo
from langmem_ext.workspace.records import PendingRow
from langmem_ext.workspace.sqlite._repo import columns
from langmem_ext.workspace.sqlite._sql import from_row

_COLS = columns(PendingRow)
_SELECT = f"SELECT {_COLS} FROM pending"


class PgPending(PgRepo):
    """:class:`~langmem_ext.workspace.records.PendingRepository` on PostgreSQL
    (mirrors :class:`~langmem_ext.workspace.sqlite.pending.SqlitePending`)."""

    def insert(self, row: PendingRow) -> None:
        """Store a new pending item."""
        marks = ", ".join(["%s"] * len(fields(PendingRow)))
        self._run(f"INSERT INTO pending ({_COLS}) VALUES ({marks})", astuple(row))

    def get(self, pending_id: str, *, scope: str | None = None) -> PendingRow | None:
        """One item by id (only in ``scope`` when given), or ``None``."""
        if scope is None:
            row = self._one(f"{_SELECT} WHERE id = %s", (pending_id,))
        else:
            row = self._one(f"{_SELECT} WHERE id = %s AND scope = %s", (pending_id, scope))
        return from_row(PendingRow, row) if row else None

    def of_scope(self, scope: str, status: str = "pending") -> list[PendingRow]:
        """Items of a scope with ``status``, oldest first."""
        rows = self._all(
            f"{_SELECT} WHERE scope = %s AND status = %s ORDER BY created_at, id",
            (scope, status),
        )
        return [from_row(PendingRow, r) for r in rows]

    def by_entry(self, entry_ids: Iterable[str]) -> dict[str, PendingRow]:
        """Items that carry these entry ids (any status), by entry id."""
        rows = self._all(f"{_SELECT} WHERE entry_id = ANY(%s)", (list(entry_ids),))
        out: dict[str, PendingRow] = {}
        for r in rows:
            row = from_row(PendingRow, r)
            out[row.entry_id] = row
        return out

    def ids_with_status(self, ids: Iterable[str], status: str) -> set[str]:
        """Those of ``ids`` whose item has ``status``."""
        rows = self._all(
            "SELECT id FROM pending WHERE status = %s AND id = ANY(%s)", (status, list(ids))
        )
        return {str(r[0]) for r in rows}

    def count_open(self, scope: str, now: float) -> int:
        """Items of a scope still pending and not expired at ``now``."""
        row = self._one(
            "SELECT count(*) FROM pending WHERE scope = %s AND status = 'pending' "
            "AND expires_at > %s",
            (scope, now),
        )
        return int(row[0]) if row else 0

    def has_text(self, scope: str, text: str) -> bool:
        """Whether an item of the scope (any status) has exactly this text."""
        sql = "SELECT 1 FROM pending WHERE scope = %s AND text = %s LIMIT 1"
        return self._one(sql, (scope, text)) is not None

    def resolve(self, pending_id: str, status: str, at: float) -> None:
        """Set an item's status (``confirmed`` / ``rejected``) resolved at ``at``."""
        self._run(
            "UPDATE pending SET status = %s, resolved_at = %s WHERE id = %s",
            (status, at, pending_id),
        )

    def expire(self, ids: Iterable[str], at: float) -> None:
        """Mark expired those of ``ids`` still pending (atomically)."""
        self._settle("id", ids, "expired", at)

    def confirm_entries(self, entry_ids: Iterable[str], at: float) -> None:
        """Mark confirmed the still-pending items of these entry ids (atomically)."""
        self._settle("entry_id", entry_ids, "confirmed", at)

    def confirm_written(self, scope: str | None = None) -> list[str]:
        """Mark confirmed the pending items whose entry is already written (see
        :meth:`~langmem_ext.workspace.sqlite.pending.SqlitePending.confirm_written`).

        One ``UPDATE … RETURNING``: two replicas settling at once confirm each item
        once between them.

        Args:
            scope: Only this scope (all when ``None``).

        Returns:
            The pending ids marked confirmed.
        """
        sql = (
            "UPDATE pending p SET status = 'confirmed', resolved_at = %s FROM entries e "
            "WHERE e.id = p.entry_id AND e.scope = p.scope AND e.deleted_at IS NULL "
            "AND p.status = 'pending'"
        )
        params: list[object] = [time.time()]
        if scope is not None:
            sql += " AND p.scope = %s"
            params.append(scope)
        rows = self._all(sql + " RETURNING p.id", params)
        return sorted(str(r[0]) for r in rows)

    def _settle(self, column: str, keys: Iterable[str], status: str, at: float) -> None:
        """Resolve the still-pending items whose ``column`` is one of ``keys``, in one write."""
        values = list(keys)
        if values:
            self._run(
                f"UPDATE pending SET status = %s, resolved_at = %s "
                f"WHERE status = 'pending' AND {column} = ANY(%s)",
                (status, at, values),
            )


__all__ = ["PgPending"]
