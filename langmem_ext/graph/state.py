"""The state of the memory graph: ``MessagesState`` plus what memory needs."""

from __future__ import annotations

from typing import Annotated, Any

from langgraph.graph import MessagesState

from langmem_ext.graph.shared_state import SessionState, reduce_session

MESSAGE_SUMMARIES_MAX = 512
"""Per-message summaries a thread's state keeps (the newest; older ones belong to
messages a checkpoint has long moved into the running summary)."""


def merge_summaries(
    current: dict[str, str] | None, update: dict[str, str] | None
) -> dict[str, str]:
    """Reducer of ``message_summaries``: ``update`` over ``current``, the newest
    :data:`MESSAGE_SUMMARIES_MAX` kept."""
    merged = {**(current or {}), **(update or {})}
    if len(merged) > MESSAGE_SUMMARIES_MAX:
        merged = dict(list(merged.items())[-MESSAGE_SUMMARIES_MAX:])
    return merged


class MemoryState(MessagesState, total=False):
    """State of :func:`~langmem_ext.graph.build_memory_graph`.

    Attributes:
        messages: The conversation (``add_messages`` reducer; checkpoints remove
            old messages with ``RemoveMessage``).
        summary: The running summary of everything checkpointed away.
        memory_context: The delimited memory block built by ``preflight_recall``
            for this turn (recalled hits, core memories, first-turn notes).
        profile_context: The safety-critical part of the user profile, refreshed by
            ``preflight_recall`` every turn and sent in every answer call (in the first
            system message, before the memory block).
        recalled: The hits recalled this turn (id, text, score, citation as the model
            sees it: ``path#^id (line N)``, anchor, created_at, source).
        pending_ids: Pending saves of the scope waiting for the user's confirmation.
        proposed: The pending saves (ids, in the order they were numbered) that the
            assistant's last reply in this thread asked the user to confirm; only
            the user's next message can answer them (``pending_confirm``).
        proposals: The items of ``proposed`` as the turn that asked read them
            (:class:`~langmem_ext.PendingItem` fields, JSON): ``pending_confirm``
            resolves them without reading the ledger again.
        asks: How often each pending save of this thread has been asked about (one
            is asked at most twice, then waits in the pending list).
        notes: What ``pending_confirm`` did this turn (shown to the model).
        token_count: Tokens of the history as last counted.
        mode: ``FULL_HISTORY`` or ``SUMMARY_N``.
        first_turn_done: Whether first-turn daily notes were injected.
        checkpoints: Number of checkpoints made in this thread.
        flushed: Pending ids the last pre-compaction flush saved.
        tool_context: The last turn's tool results condensed for the next turn only
            (never stored as memory).
        session: The structured session value: meta, flow, shared
            entities and per-agent slots, merged by
            :func:`~langmem_ext.graph.shared_state.reduce_session` and saved with the
            thread's checkpoint (see :mod:`langmem_ext.graph.shared_state`).
        message_summaries: The per-message structured summaries (≤ 280
            characters, Goal / Decision / Todo / Facts) by message id, made in the
            background in ``short_term.mode="hybrid_window"`` and saved with the
            thread's checkpoint (see :mod:`langmem_ext.graph.summaries`).
    """

    summary: str | None
    memory_context: str
    profile_context: str
    recalled: list[dict[str, Any]]
    pending_ids: list[str]
    proposed: list[str]
    proposals: list[dict[str, Any]]
    asks: dict[str, int]
    notes: list[str]
    token_count: int
    mode: str
    first_turn_done: bool
    checkpoints: int
    flushed: list[str]
    tool_context: str | None
    session: Annotated[SessionState, reduce_session]
    message_summaries: Annotated[dict[str, str], merge_summaries]


__all__ = ["MESSAGE_SUMMARIES_MAX", "MemoryState", "merge_summaries"]
