"""langmem-ext: a durable, offline-first memory layer for LangChain / LangGraph agents.

Long-term memory lives in Markdown files a person can read and edit, indexed in
Chroma and an FTS5 keyword index and searched by a hybrid pipeline; saves wait for
the user's confirmation. Importing this package loads no model and opens no
connection.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from langmem_ext.core import errors as _errors
from langmem_ext.core.errors import *  # noqa: F403  (every typed error, listed in its __all__)
from langmem_ext.core.lazy import lazy_getattr

if TYPE_CHECKING:
    from langmem_ext.core.config import Settings
    from langmem_ext.core.tokens import count_tokens, truncate_by_tokens
    from langmem_ext.graph import MemoryState, build_memory_graph
    from langmem_ext.memory.extraction.extractor import ExtractionReport
    from langmem_ext.memory.knowledge.triples import Triple
    from langmem_ext.memory.lifecycle.maintenance import MaintenanceReport
    from langmem_ext.memory.profile import Profile, ProfileUpdate
    from langmem_ext.memory.service import Memory
    from langmem_ext.memory.sessions.log import SessionLog
    from langmem_ext.memory.sessions.manager import SessionManager
    from langmem_ext.memory.types import GetResult, MemoryEntry, PendingItem, SearchHit
    from langmem_ext.middleware import MemoryMiddleware
    from langmem_ext.retrievers import MemoryRetriever
    from langmem_ext.store.chroma import ChromaMemoryStore, create_memory_store
    from langmem_ext.tools import create_memory_tools
    from langmem_ext.workspace.store import SyncReport

__version__ = "0.1.0"

# Everything but the errors loads on first use: `import langmem_ext` stays light (no
# LangChain model class, tool, graph or middleware module, and never a model or a
# connection), so a CLI command sent to a server starts fast.
__getattr__ = lazy_getattr(
    __name__,
    {
        "ChromaMemoryStore": "langmem_ext.store.chroma",
        "ExtractionReport": "langmem_ext.memory.extraction.extractor",
        "MaintenanceReport": "langmem_ext.memory.lifecycle.maintenance",
        "Profile": "langmem_ext.memory.profile",
        "ProfileUpdate": "langmem_ext.memory.profile",
        "SyncReport": "langmem_ext.workspace.store",
        "GetResult": "langmem_ext.memory.types",
        "Memory": "langmem_ext.memory.service",
        "MemoryEntry": "langmem_ext.memory.types",
        "MemoryMiddleware": "langmem_ext.middleware",
        "MemoryRetriever": "langmem_ext.retrievers",
        "MemoryState": "langmem_ext.graph",
        "PendingItem": "langmem_ext.memory.types",
        "SearchHit": "langmem_ext.memory.types",
        "SessionLog": "langmem_ext.memory.sessions.log",
        "SessionManager": "langmem_ext.memory.sessions.manager",
        "Settings": "langmem_ext.core.config",
        "Triple": "langmem_ext.memory.knowledge.triples",
        "build_memory_graph": "langmem_ext.graph",
        "count_tokens": "langmem_ext.core.tokens",
        "create_memory_store": "langmem_ext.store.chroma",
        "create_memory_tools": "langmem_ext.tools",
        "truncate_by_tokens": "langmem_ext.core.tokens",
    },
)


__all__ = [
    "ChromaMemoryStore",
    "ExtractionReport",
    "GetResult",
    "MaintenanceReport",
    "Memory",
    "MemoryEntry",
    "MemoryMiddleware",
    "MemoryRetriever",
    "MemoryState",
    "PendingItem",
    "Profile",
    "ProfileUpdate",
    "SearchHit",
    "SessionLog",
    "SessionManager",
    "Settings",
    "SyncReport",
    "Triple",
    "build_memory_graph",
    "count_tokens",
    "create_memory_store",
    "create_memory_tools",
    "truncate_by_tokens",
]
__all__ += _errors.__all__
