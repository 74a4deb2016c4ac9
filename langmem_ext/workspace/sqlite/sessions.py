"""Repositories of the session tables of the ledger: ``sessions``, ``session_messages``
and ``checkpoints`` (the statements both engines run are in
:mod:`langmem_ext.workspace.sql.sessions`)."""

from __future__ import annotations

from collections.abc import Sequence

from langmem_ext.workspace.records import CheckpointRow
from langmem_ext.workspace.sql.base import SQLITE, columns
from langmem_ext.workspace.sql.sessions import SharedConversationReads, SharedSessions
from langmem_ext.workspace.sqlite._repo import SqliteRepo

_CHECKPOINT_COLS = columns(CheckpointRow, skip={"id"})
"""The columns a checkpoint is written with (the table assigns its id)."""


class SqliteSessions(SqliteRepo, SharedSessions):
    """:class:`~langmem_ext.workspace.records.SessionRepository` on SQLite."""

    dialect = SQLITE


class SqliteConversations(SqliteRepo, SharedConversationReads):
    """:class:`~langmem_ext.workspace.records.ConversationRepository` on SQLite."""

    dialect = SQLITE

    def append(
        self, scope: str, thread_id: str, messages: Sequence[tuple[str, str]], at: float
    ) -> int:
        with self._lock:  # the last seq and the inserts: one step of the lock holder
            row = self._one(
                "SELECT COALESCE(MAX(seq), 0) FROM session_messages "
                "WHERE scope = ? AND thread_id = ?",
                (scope, thread_id),
            )
            first = int(row[0] if row else 0) + 1
            self._run_many(
                "INSERT INTO session_messages (scope, thread_id, seq, message_id, message, at) "
                "VALUES (?,?,?,?,?,?)",
                [
                    (scope, thread_id, first + i, message_id, message, at)
                    for i, (message_id, message) in enumerate(messages)
                ],
            )
        return first

    def mark_compacted(self, scope: str, thread_id: str, seqs: Sequence[int]) -> None:
        self._run_many(
            "UPDATE session_messages SET compacted = 1 "
            "WHERE scope = ? AND thread_id = ? AND seq = ? AND compacted = 0",
            [(scope, thread_id, seq) for seq in seqs],
        )

    def add_checkpoint(self, row: CheckpointRow) -> int:
        cur = self._run(
            f"INSERT INTO checkpoints ({_CHECKPOINT_COLS}) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (
                row.scope,
                row.thread_id,
                row.kind,
                row.summary,
                row.cut_seq,
                row.compacted,
                int(row.used_fallback),
                row.flushed,
                row.created_at,
                row.conversation_at,
            ),
        )
        return int(cur.lastrowid or 0)


__all__ = ["SqliteConversations", "SqliteSessions"]
