"""Repositories of the session tables on PostgreSQL: ``sessions``, ``session_messages``
and ``checkpoints`` (the statements both engines run are in
:mod:`langmem_ext.workspace.sql.sessions`)."""

from __future__ import annotations

from collections.abc import Sequence

from langmem_ext.workspace.postgres._base import PgRepo
from langmem_ext.workspace.records import CheckpointRow
from langmem_ext.workspace.sql.base import POSTGRES, columns
from langmem_ext.workspace.sql.sessions import SharedConversationReads, SharedSessions

_CHECKPOINT_COLS = columns(CheckpointRow, skip={"id"})


class PgSessions(PgRepo, SharedSessions):
    """:class:`~langmem_ext.workspace.records.SessionRepository` on PostgreSQL."""

    dialect = POSTGRES


class PgConversations(PgRepo, SharedConversationReads):
    """:class:`~langmem_ext.workspace.records.ConversationRepository` on PostgreSQL."""

    dialect = POSTGRES

    def append(
        self, scope: str, thread_id: str, messages: Sequence[tuple[str, str]], at: float
    ) -> int:
        """The conversation's rows are locked for the step (a transaction-scoped
        advisory lock on the thread), so two replicas appending to one conversation
        take turns instead of colliding on a sequence number."""
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
        self._run(
            "UPDATE session_messages SET compacted = 1 "
            "WHERE scope = %s AND thread_id = %s AND seq = ANY(%s) AND compacted = 0",
            (scope, thread_id, list(seqs)),
        )

    def add_checkpoint(self, row: CheckpointRow) -> int:
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
