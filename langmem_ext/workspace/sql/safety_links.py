"""The safety links' reads both engines share (``safety_links`` joined to the
entries they are read from)."""

from __future__ import annotations

from collections.abc import Sequence

from langmem_ext.workspace.records import SafetyLinkRow
from langmem_ext.workspace.sql.base import SharedRepo, columns, from_row

LINK_COLUMNS = columns(SafetyLinkRow)
"""The columns a link is written with, in :class:`SafetyLinkRow`'s order."""
SELECT_LINKS = (
    f"SELECT {columns(SafetyLinkRow, alias='l')} FROM safety_links l JOIN entries e "
    "ON e.id = l.entry_id AND e.scope = l.scope AND e.text_hash = l.text_hash "
    "AND e.deleted_at IS NULL AND e.valid_to IS NULL"
)
"""The current links: their entry is live, current and still has the linked text."""


class SharedSafetyLinkReads(SharedRepo):
    """The scope read of :class:`~langmem_ext.workspace.records.SafetyLinkRepository`
    in either dialect."""

    def of_scope(
        self,
        scope: str,
        fields: Sequence[str] | None = None,
        subjects: Sequence[str] | None = None,
    ) -> list[SafetyLinkRow]:
        sql, params = self.dialect.sql(f"{SELECT_LINKS} WHERE l.scope = ?"), [scope]
        for column, values in (("l.field", fields), ("l.subject", subjects)):
            if values is not None:
                if not values:
                    return []
                cond, bound = self.dialect.one_of(column, values)
                sql += f" AND {cond}"
                params += bound
        order = f" ORDER BY e.created_at, l.entry_id{self.dialect.binary_order}"
        return [from_row(SafetyLinkRow, r) for r in self._all(sql + order, params)]


__all__ = ["LINK_COLUMNS", "SELECT_LINKS", "SharedSafetyLinkReads"]
