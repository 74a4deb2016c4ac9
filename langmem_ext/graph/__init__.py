"""The memory agent graph and its nodes (each usable in a user's own graph)."""

from langmem_ext.graph import nodes as _nodes
from langmem_ext.graph.bookkeeping import TurnWriter, flush_turn_writes, turn_writer
from langmem_ext.graph.builder import (
    build_memory_graph,
    default_checkpointer,
    resolve_model,
    sqlite_checkpointer,
)
from langmem_ext.graph.nodes import *  # noqa: F403  (the nodes, their names and helpers: its __all__)
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
    "MemoryState",
    "ReplyDecision",
    "SerializedGraph",
    "SessionState",
    "TurnWriter",
    "agent_slot",
    "build_memory_graph",
    "classify_reply",
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
__all__ += _nodes.__all__
