"""The session repositories' statements both engines share (``sessions``, and the
reads of ``session_messages`` and ``checkpoints``)."""

from __future__ import annotations

from dataclasses import replace

from langmem_ext.workspace.records import CheckpointRow, SessionRow, StoredMessage
from langmem_ext.workspace.sql.base import SharedRepo, columns

_SESSION_COLS = columns(SessionRow)


class SharedSessions(SharedRepo):
    """:class:`~langmem_ext.workspace.records.SessionRepository` in either dialect."""

    def get(self, scope: str, thread_id: str) -> SessionRow | None:
        row = self._one(
            self.dialect.sql(
                f"SELECT {_SESSION_COLS} FROM sessions WHERE scope = ? AND thread_id = ?"
            ),
            (scope, thread_id),
        )
        return SessionRow(*row) if row is not None else None

    def record_turn(self, scope: str, thread_id: str, at: float, last_seq: int) -> None:
        self._run(
            self.dialect.sql(
                "INSERT INTO sessions (scope, thread_id, created_at, updated_at, last_seq) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (scope, thread_id) DO UPDATE SET "
                f"updated_at = {self.dialect.greatest}(sessions.updated_at, "
                "excluded.updated_at), last_seq = excluded.last_seq"
            ),
            (scope, thread_id, at, at, last_seq),
        )

    def _raise_mark(self, column: str, scope: str, thread_id: str, seq: int) -> None:
        """Raise ``column`` of an existing row to at least ``seq``."""
        self._run(
            self.dialect.sql(
                f"UPDATE sessions SET {column} = {self.dialect.greatest}({column}, ?) "
                "WHERE scope = ? AND thread_id = ?"
            ),
            (seq, scope, thread_id),
        )

    def mark_flushed(self, scope: str, thread_id: str, seq: int) -> None:
        self._raise_mark("flushed_seq", scope, thread_id, seq)

    def mark_summarized(self, scope: str, thread_id: str, seq: int) -> None:
        self._raise_mark("summarized_seq", scope, thread_id, seq)

    def set_episode(self, scope: str, thread_id: str, episode_id: str, day: str, at: float) -> None:
        self._run(
            self.dialect.sql(
                "INSERT INTO sessions (scope, thread_id, created_at, updated_at, episode_id, "
                "episode_day) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (scope, thread_id) "
                "DO UPDATE SET episode_id = excluded.episode_id, episode_day = excluded.episode_day"
            ),
            (scope, thread_id, at, at, episode_id, day),
        )

    def mark_first_turn(self, scope: str, thread_id: str, at: float) -> None:
        self._run(
            self.dialect.sql(
                "INSERT INTO sessions (scope, thread_id, created_at, updated_at, first_turn_at) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (scope, thread_id) DO UPDATE SET "
                "first_turn_at = excluded.first_turn_at"
            ),
            (scope, thread_id, at, at, at),
        )

    def idle(self, before: float) -> list[SessionRow]:
        rows = self._all(
            self.dialect.sql(
                f"SELECT {_SESSION_COLS} FROM sessions "
                "WHERE updated_at <= ? AND last_seq > summarized_seq ORDER BY updated_at"
            ),
            (before,),
        )
        return [SessionRow(*r) for r in rows]


class SharedConversationReads(SharedRepo):
    """The reads of :class:`~langmem_ext.workspace.records.ConversationRepository` in
    either dialect (the writes differ per engine)."""

    def messages(
        self, scope: str, thread_id: str, *, include_compacted: bool = False
    ) -> list[StoredMessage]:
        sql = (
            "SELECT seq, message, at, compacted FROM session_messages "
            "WHERE scope = ? AND thread_id = ?"
        )
        if not include_compacted:
            sql += " AND compacted = 0"
        rows = self._all(self.dialect.sql(sql + " ORDER BY seq"), (scope, thread_id))
        return [StoredMessage(int(r[0]), str(r[1]), float(r[2]), bool(r[3])) for r in rows]

    def latest_checkpoint(self, scope: str, thread_id: str) -> CheckpointRow | None:
        r = self._one(
            self.dialect.sql(
                f"SELECT {columns(CheckpointRow)} FROM checkpoints "
                "WHERE scope = ? AND thread_id = ? ORDER BY id DESC LIMIT 1"
            ),
            (scope, thread_id),
        )
        if r is None:
            return None
        row = CheckpointRow(*r)
        return replace(row, used_fallback=bool(row.used_fallback))  # stored as 0 / 1


__all__ = ["SharedConversationReads", "SharedSessions"]
