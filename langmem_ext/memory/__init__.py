"""The memory service, its result types, and what the surfaces use of the storage below.

The surfaces (tools, retriever, middleware, store, serving) reach scopes and storage
through this package and :mod:`langmem_ext.memory.scoping`, never through
:mod:`langmem_ext.workspace`: the scope names, and the LangGraph store's space
(:attr:`Memory.kv`) with its row types and filter semantics.
"""

from typing import TYPE_CHECKING

from langmem_ext.core.lazy import lazy_getattr

if TYPE_CHECKING:
    from langmem_ext.memory.knowledge.triples import Triple
    from langmem_ext.memory.service import Memory
    from langmem_ext.memory.types import GetResult, MemoryEntry, PendingItem, SearchHit
    from langmem_ext.workspace.item_filter import matches_filter
    from langmem_ext.workspace.kv import KvSpace
    from langmem_ext.workspace.layout import MAIN_SCOPE, check_scope
    from langmem_ext.workspace.records import ItemText, ItemWrite, StoredItem, TextMatch
    from langmem_ext.workspace.vector_index import VectorHit

# Its names load their module on first use: the result types stay light to import.
__getattr__ = lazy_getattr(
    __name__,
    {
        "Triple": "langmem_ext.memory.knowledge.triples",
        "GetResult": "langmem_ext.memory.types",
        "MemoryEntry": "langmem_ext.memory.types",
        "PendingItem": "langmem_ext.memory.types",
        "SearchHit": "langmem_ext.memory.types",
        "Memory": "langmem_ext.memory.service",
        "matches_filter": "langmem_ext.workspace.item_filter",
        "KvSpace": "langmem_ext.workspace.kv",
        "MAIN_SCOPE": "langmem_ext.workspace.layout",
        "check_scope": "langmem_ext.workspace.layout",
        "ItemText": "langmem_ext.workspace.records",
        "ItemWrite": "langmem_ext.workspace.records",
        "StoredItem": "langmem_ext.workspace.records",
        "TextMatch": "langmem_ext.workspace.records",
        "VectorHit": "langmem_ext.workspace.vector_index",
    },
)

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
