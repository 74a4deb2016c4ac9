"""The memory service, its result types, and what the surfaces use of the storage below.

The surfaces (tools, retriever, middleware, store, serving) reach scopes and storage
through this package and :mod:`langmem_ext._scoping`, never through
:mod:`langmem_ext.workspace`: the scope names, and the LangGraph store's space
(:attr:`Memory.kv`) with its row types and filter semantics.
"""

from langmem_ext.memory.knowledge import Triple
from langmem_ext.memory.models import GetResult, MemoryEntry, PendingItem, SearchHit
from langmem_ext.memory.service import Memory
from langmem_ext.workspace.item_filter import matches_filter
from langmem_ext.workspace.kv import KvSpace
from langmem_ext.workspace.layout import MAIN_SCOPE, check_scope
from langmem_ext.workspace.records import ItemText, ItemWrite, StoredItem, TextMatch
from langmem_ext.workspace.vector_index import VectorHit

__all__ = [
    "MAIN_SCOPE",
    "GetResult",
    "ItemText",
    "ItemWrite",
    "KvSpace",
    "Memory",
    "MemoryEntry",
    "PendingItem",
    "SearchHit",
    "StoredItem",
    "TextMatch",
    "Triple",
    "VectorHit",
    "check_scope",
    "matches_filter",
]
