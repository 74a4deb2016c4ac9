"""The safety links' reads both engines share (``safety_links`` joined to the
entries they are read from)."""

from __future__ import annotations

from collections.abc import Sequence

from langmem_ext.workspace.records import SafetyLinkRow
from langmem_ext.workspace.sql.base import SharedRepo, columns, from_row

LINK_COLUMNS = columns(SafetyLinkRow)
"""The columns a link is written with, in :class:`SafetyLinkRow`'s order."""
LINKS_FROM = (
    "safety_links l JOIN entries e "
    "ON e.id = l.entry_id AND e.scope = l.scope AND e.text_hash = l.text_hash "
    "AND e.deleted_at IS NULL AND e.valid_to IS NULL"
)
"""The current links: their entry is live, current and still has the linked text."""
SELECT_LINKS = f"SELECT {columns(SafetyLinkRow, alias='l')} FROM {LINKS_FROM}"
"""The columns of the current links."""


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

    def worth_reading(
        self, scope: str, fields: Sequence[str], subjects: Sequence[str], limit: int
    ) -> list[SafetyLinkRow]:
        if not fields or not subjects or limit <= 0:
            return []
        by_field, field_params = self.dialect.one_of("l.field", fields)
        by_subject, subject_params = self.dialect.one_of("l.subject", subjects)
        order = f"e.created_at DESC, l.entry_id{self.dialect.binary_order}"
        item = "CASE WHEN l.item = '' THEN l.entry_id ELSE lower(l.item) END"
        link_columns = columns(SafetyLinkRow, alias="l")
        sql = self.dialect.sql(
            f"SELECT {columns(SafetyLinkRow)} FROM ("
            f"SELECT {link_columns}, e.created_at AS created, "
            f"row_number() OVER (PARTITION BY l.field, {item} ORDER BY {order}) AS nth "
            f"FROM {LINKS_FROM} "
            f"WHERE l.scope = ? AND {by_field} AND {by_subject}"
            ") ranked ORDER BY CASE WHEN nth = 1 THEN 0 ELSE 1 END, created DESC, "
            f"entry_id{self.dialect.binary_order} LIMIT ?"
        )
        rows = self._all(sql, [scope, *field_params, *subject_params, limit])
        return [from_row(SafetyLinkRow, r) for r in rows]


__all__ = ["LINK_COLUMNS", "SELECT_LINKS", "SharedSafetyLinkReads"]
