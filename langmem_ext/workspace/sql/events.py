"""The session hot log's reads both engines share (``session_events``)."""

from __future__ import annotations

from langmem_ext.workspace.records import EventRow
from langmem_ext.workspace.sql.base import SharedRepo, columns

_COLS = columns(EventRow, alias="e")


class SharedEventReads(SharedRepo):
    """The reads by id of :class:`~langmem_ext.workspace.records.EventRepository`
    in either dialect."""

    def last_id(self) -> int:
        row = self._one("SELECT coalesce(max(id), 0) FROM session_events")
        return int(row[0]) if row else 0

    def after(self, last_id: int, limit: int) -> list[EventRow]:
        rows = self._all(
            self.dialect.sql(
                f"SELECT {_COLS} FROM session_events e WHERE e.id > ? ORDER BY e.id LIMIT ?"
            ),
            (int(last_id), int(limit)),
        )
        return [EventRow(*r) for r in rows]


__all__ = ["SharedEventReads"]
