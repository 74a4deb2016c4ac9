"""Repository of the ledger's ``safety_links`` table (ledger migration 10).

A row says that a memory states one safety fact: a profile field (``allergies``
…), whom it is about and one item. Rows are written from the memory's text when it
is stored; the reads join ``entries`` and count a row only while its entry is live,
current and still has that text (``text_hash``), so deleting, superseding or
editing a memory withdraws its links with no hook, as for the knowledge graph's
support rows (a row of an edited text stays, unread).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import astuple

from langmem_ext.workspace.records import SafetyLinkRow
from langmem_ext.workspace.sqlite._repo import SqliteRepo, columns
from langmem_ext.workspace.sqlite._sql import from_row

_COLUMNS = columns(SafetyLinkRow)
_SELECT = (
    f"SELECT {columns(SafetyLinkRow, alias='l')} FROM safety_links l JOIN entries e "
    "ON e.id = l.entry_id AND e.scope = l.scope AND e.text_hash = l.text_hash "
    "AND e.deleted_at IS NULL AND e.valid_to IS NULL"
)


class SqliteSafetyLinks(SqliteRepo):
    """:class:`~langmem_ext.workspace.records.SafetyLinkRepository` on SQLite."""

    def add(self, rows: Sequence[SafetyLinkRow]) -> None:
        """Store links (one write; a link stored again replaces the old one)."""
        if rows:
            with self._atomic():
                self._run_many(
                    f"INSERT OR REPLACE INTO safety_links ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?)",
                    [astuple(r) for r in rows],
                )

    def of_scope(
        self,
        scope: str,
        fields: Sequence[str] | None = None,
        subjects: Sequence[str] | None = None,
    ) -> list[SafetyLinkRow]:
        """The scope's current links (of these fields and subjects when given), oldest
        memory first."""
        sql, params = f"{_SELECT} WHERE l.scope = ?", [scope]
        for column, values in (("l.field", fields), ("l.subject", subjects)):
            if values is not None:
                if not values:
                    return []
                sql += f" AND {column} IN ({','.join('?' * len(values))})"
                params += list(values)
        rows = self._all(sql + " ORDER BY e.created_at, l.entry_id", params)
        return [from_row(SafetyLinkRow, r) for r in rows]

    def of_entries(self, entry_ids: Sequence[str]) -> list[SafetyLinkRow]:
        """The current links of these entries."""
        rows = self._all_in(f"{_SELECT} WHERE l.entry_id IN ({{marks}})", entry_ids)
        return [from_row(SafetyLinkRow, r) for r in rows]


__all__ = ["SqliteSafetyLinks"]
