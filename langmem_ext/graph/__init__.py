"""The memory agent graph and its nodes (each usable in a user's own graph)."""

from langmem_ext.graph.bookkeeping import TurnWriter, flush_turn_writes, turn_writer
from langmem_ext.graph.builder import (
    build_memory_graph,
    default_checkpointer,
    resolve_model,
    sqlite_checkpointer,
)
from langmem_ext.graph.nodes import (
    ANSWER,
    CHECKPOINT_SUMMARIZE,
    PENDING_CONFIRM,
    PRE_COMPACTION_FLUSH,
    PREFLIGHT_RECALL,
    PROPOSE_SAVES,
    RECORD_TURN,
    TOOLS,
    create_answer_node,
    create_checkpoint_node,
    create_flush_node,
    create_pending_confirm_node,
    create_pending_interrupt_node,
    create_pending_router,
    create_preflight_recall_node,
    create_propose_node,
    create_record_turn_node,
)
from langmem_ext.graph.replies import ReplyDecision, classify_reply
from langmem_ext.graph.runs import SerializedGraph
from langmem_ext.graph.shared_state import (
    SessionState,
    agent_slot,
    reduce_session,
    set_entities,
    set_flow,
    update_slot,
)
from langmem_ext.graph.state import MemoryState

__all__ = [
    "ANSWER",
    "CHECKPOINT_SUMMARIZE",
    "PENDING_CONFIRM",
    "PREFLIGHT_RECALL",
    "PRE_COMPACTION_FLUSH",
    "PROPOSE_SAVES",
    "RECORD_TURN",
    "TOOLS",
    "MemoryState",
    "ReplyDecision",
    "SerializedGraph",
    "SessionState",
    "TurnWriter",
    "agent_slot",
    "build_memory_graph",
    "classify_reply",
    "create_answer_node",
    "create_checkpoint_node",
    "create_flush_node",
    "create_pending_confirm_node",
    "create_pending_interrupt_node",
    "create_pending_router",
    "create_preflight_recall_node",
    "create_propose_node",
    "create_record_turn_node",
    "default_checkpointer",
    "flush_turn_writes",
    "reduce_session",
    "resolve_model",
    "set_entities",
    "set_flow",
    "sqlite_checkpointer",
    "turn_writer",
    "update_slot",
]
