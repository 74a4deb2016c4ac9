"""Repositories of the session tables on PostgreSQL: ``sessions``, ``session_messages``
and ``checkpoints``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from langmem_ext.workspace.postgres._base import PgRepo
from langmem_ext.workspace.records import CheckpointRow, SessionRow, StoredMessage
from langmem_ext.workspace.sqlite._repo import columns

_SESSION_COLS = columns(SessionRow)
_CHECKPOINT_COLS = columns(CheckpointRow, skip={"id"})


class PgSessions(PgRepo):
    """:class:`~langmem_ext.workspace.records.SessionRepository` on PostgreSQL
    (mirrors :class:`~langmem_ext.workspace.sqlite.sessions.SqliteSessions`)."""

    def get(self, scope: str, thread_id: str) -> SessionRow | None:
        """The conversation's row, or ``None``."""
        row = self._one(
            f"SELECT {_SESSION_COLS} FROM sessions WHERE scope = %s AND thread_id = %s",
            (scope, thread_id),
        )
        return SessionRow(*row) if row is not None else None

    def record_turn(self, scope: str, thread_id: str, at: float, last_seq: int) -> None:
        """A turn ending at message ``last_seq`` was stored at ``at``."""
        self._run(
            "INSERT INTO sessions (scope, thread_id, created_at, updated_at, last_seq) "
            "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (scope, thread_id) DO UPDATE SET "
            "updated_at = greatest(sessions.updated_at, excluded.updated_at), "
            "last_seq = excluded.last_seq",
            (scope, thread_id, at, at, last_seq),
        )

    def mark_flushed(self, scope: str, thread_id: str, seq: int) -> None:
        """A flush read the messages up to ``seq`` (an existing row only)."""
        self._run(
            "UPDATE sessions SET flushed_seq = greatest(flushed_seq, %s) "
            "WHERE scope = %s AND thread_id = %s",
            (seq, scope, thread_id),
        )

    def mark_summarized(self, scope: str, thread_id: str, seq: int) -> None:
        """The messages up to ``seq`` are in an episode (an existing row only)."""
        self._run(
            "UPDATE sessions SET summarized_seq = greatest(summarized_seq, %s) "
            "WHERE scope = %s AND thread_id = %s",
            (seq, scope, thread_id),
        )

    def set_episode(self, scope: str, thread_id: str, episode_id: str, day: str, at: float) -> None:
        """The conversation's episode of ``day`` is ``episode_id``."""
        self._run(
            "INSERT INTO sessions (scope, thread_id, created_at, updated_at, episode_id, "
            "episode_day) VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (scope, thread_id) "
            "DO UPDATE SET episode_id = excluded.episode_id, episode_day = excluded.episode_day",
            (scope, thread_id, at, at, episode_id, day),
        )

    def mark_first_turn(self, scope: str, thread_id: str, at: float) -> None:
        """The first-turn daily notes were injected at ``at``."""
        self._run(
            "INSERT INTO sessions (scope, thread_id, created_at, updated_at, first_turn_at) "
            "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (scope, thread_id) DO UPDATE SET "
            "first_turn_at = excluded.first_turn_at",
            (scope, thread_id, at, at, at),
        )

    def idle(self, before: float) -> list[SessionRow]:
        """Conversations last active at or before ``before`` with messages not yet
        in an episode, least recently active first."""
        rows = self._all(
            f"SELECT {_SESSION_COLS} FROM sessions "
            "WHERE updated_at <= %s AND last_seq > summarized_seq ORDER BY updated_at",
            (before,),
        )
        return [SessionRow(*r) for r in rows]


class PgConversations(PgRepo):
    """:class:`~langmem_ext.workspace.records.ConversationRepository` on PostgreSQL
    (mirrors :class:`~langmem_ext.workspace.sqlite.sessions.SqliteConversations`)."""

    def messages(
        self, scope: str, thread_id: str, *, include_compacted: bool = False
    ) -> list[StoredMessage]:
        """The conversation's messages in order (only the live ones by default)."""
        sql = (
            "SELECT seq, message, at, compacted FROM session_messages "
            "WHERE scope = %s AND thread_id = %s"
        )
        if not include_compacted:
            sql += " AND compacted = 0"
        rows = self._all(sql + " ORDER BY seq", (scope, thread_id))
        return [StoredMessage(int(r[0]), str(r[1]), float(r[2]), bool(r[3])) for r in rows]

    def append(
        self, scope: str, thread_id: str, messages: Sequence[tuple[str, str]], at: float
    ) -> int:
        """Store ``(message_id, message JSON)`` pairs after the last message.

        The conversation's rows are locked for the step (a transaction-scoped
        advisory lock on the thread), so two replicas appending to one conversation
        take turns instead of colliding on a sequence number.

        Returns:
            The sequence number of the first one (the others follow).
        """
        with self._atomic() as conn:
            conn.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                (f"session_messages\x1f{scope}\x1f{thread_id}",),
            )
            row = conn.execute(
                "SELECT coalesce(max(seq), 0) FROM session_messages "
                "WHERE scope = %s AND thread_id = %s",
                (scope, thread_id),
            ).fetchone()
            first = int(row[0] if row else 0) + 1
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO session_messages (scope, thread_id, seq, message_id, message, at) "
                    "VALUES (%s, %s, %s, %s, %s, %s)",
                    [
                        (scope, thread_id, first + i, message_id, message, at)
                        for i, (message_id, message) in enumerate(messages)
                    ],
                )
        return first

    def mark_compacted(self, scope: str, thread_id: str, seqs: Sequence[int]) -> None:
        """Mark these messages compacted."""
        self._run(
            "UPDATE session_messages SET compacted = 1 "
            "WHERE scope = %s AND thread_id = %s AND seq = ANY(%s) AND compacted = 0",
            (scope, thread_id, list(seqs)),
        )

    def latest_checkpoint(self, scope: str, thread_id: str) -> CheckpointRow | None:
        """The conversation's newest checkpoint, or ``None``."""
        r = self._one(
            f"SELECT {columns(CheckpointRow)} FROM checkpoints "
            "WHERE scope = %s AND thread_id = %s ORDER BY id DESC LIMIT 1",
            (scope, thread_id),
        )
        if r is None:
            return None
        row = CheckpointRow(*r)
        return replace(row, used_fallback=bool(row.used_fallback))

    def add_checkpoint(self, row: CheckpointRow) -> int:
        """Store a checkpoint; returns its id (ids grow)."""
        found = self._one(
            f"INSERT INTO checkpoints ({_CHECKPOINT_COLS}) "
            f"VALUES ({', '.join(['%s'] * 10)}) RETURNING id",
            (
                row.scope, row.thread_id, row.kind, row.summary, row.cut_seq, row.compacted,
                int(row.used_fallback), row.flushed, row.created_at, row.conversation_at,
            ),
        )  # fmt: skip
        return int(found[0]) if found else 0


__all__ = ["PgConversations", "PgSessions"]
