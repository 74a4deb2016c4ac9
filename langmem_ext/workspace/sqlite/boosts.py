"""Repository of the ledger's ``boosts`` table."""

from __future__ import annotations

from langmem_ext.workspace.sqlite._repo import SqliteRepo


class SqliteBoosts(SqliteRepo):
    """:class:`~langmem_ext.workspace.records.BoostRepository` on SQLite."""

    def record(self, entry_id: str, amount: float, at: float, reason: str | None) -> None:
        """Record one boost."""
        self._run(
            "INSERT INTO boosts (entry_id, amount, at, reason) VALUES (?,?,?,?)",
            (entry_id, amount, at, reason),
        )

    def last_at(self, entry_id: str) -> float | None:
        """When the entry was last boosted, or ``None``."""
        row = self._one("SELECT max(at) FROM boosts WHERE entry_id = ?", (entry_id,))
        return float(row[0]) if row and row[0] is not None else None

    def total_since(self, entry_id: str, since: float) -> float:
        """Importance added to the entry by boosts after ``since``."""
        row = self._one(
            "SELECT coalesce(sum(amount), 0) FROM boosts WHERE entry_id = ? AND at > ?",
            (entry_id, since),
        )
        return float(row[0]) if row else 0.0

    def times(self, entry_id: str) -> list[float]:
        """When the entry was boosted (epoch seconds), oldest first."""
        rows = self._all("SELECT at FROM boosts WHERE entry_id = ? ORDER BY at", (entry_id,))
        return [float(r[0]) for r in rows]
