"""langmem-ext: a durable, offline-first memory layer for LangChain / LangGraph agents.

Long-term memory lives in Markdown files a person can read and edit, indexed in
Chroma and an FTS5 keyword index and searched by a hybrid pipeline; saves wait for
the user's confirmation. Importing this package loads no model and opens no
connection.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from langmem_ext.config import Settings
from langmem_ext.errors import (
    EmbeddingError,
    EmptyTextError,
    EntryNotFoundError,
    EntrySupersededError,
    IndexUnavailableError,
    InvalidCategoryError,
    InvalidInputError,
    InvalidMessageListError,
    InvalidMessagesError,
    InvalidPathError,
    InvalidReviewError,
    InvalidScopeError,
    InvalidTimeError,
    LangmemError,
    LineBreakError,
    MemoryFileError,
    ModelUnavailableError,
    NoiseTextError,
    NotFoundError,
    PendingAlreadyResolvedError,
    PendingExpiredError,
    PendingNotFoundError,
    PendingStateError,
    SchemaVersionError,
    TextTooLongError,
    ThreadConflictError,
    WorkspaceLockTimeout,
)
from langmem_ext.memory import GetResult, Memory, MemoryEntry, PendingItem, SearchHit, Triple
from langmem_ext.memory.extraction import ExtractionReport
from langmem_ext.memory.maintenance import MaintenanceReport
from langmem_ext.memory.profile import Profile, ProfileUpdate
from langmem_ext.tokens import count_tokens, truncate_by_tokens
from langmem_ext.workspace.store import SyncReport

if TYPE_CHECKING:
    from langmem_ext.graph import MemoryState, build_memory_graph
    from langmem_ext.memory.events import SessionLog
    from langmem_ext.memory.session import SessionManager
    from langmem_ext.middleware import MemoryMiddleware
    from langmem_ext.retrievers import MemoryRetriever
    from langmem_ext.store import ChromaMemoryStore, create_memory_store
    from langmem_ext.tools import create_memory_tools

__version__ = "0.1.0"

# The LangChain / LangGraph surfaces load on first use: `import langmem_ext` stays
# light (no tool, graph or middleware module, and never a model or a connection).
_LAZY: dict[str, str] = {
    "ChromaMemoryStore": "langmem_ext.store",
    "MemoryMiddleware": "langmem_ext.middleware",
    "MemoryRetriever": "langmem_ext.retrievers",
    "MemoryState": "langmem_ext.graph",
    "SessionLog": "langmem_ext.memory.events",
    "SessionManager": "langmem_ext.memory.session",
    "build_memory_graph": "langmem_ext.graph",
    "create_memory_store": "langmem_ext.store",
    "create_memory_tools": "langmem_ext.tools",
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'langmem_ext' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


__all__ = [
    "ChromaMemoryStore",
    "EmbeddingError",
    "EmptyTextError",
    "EntryNotFoundError",
    "EntrySupersededError",
    "ExtractionReport",
    "GetResult",
    "IndexUnavailableError",
    "InvalidCategoryError",
    "InvalidInputError",
    "InvalidMessageListError",
    "InvalidMessagesError",
    "InvalidPathError",
    "InvalidReviewError",
    "InvalidScopeError",
    "InvalidTimeError",
    "LangmemError",
    "LineBreakError",
    "MaintenanceReport",
    "Memory",
    "MemoryEntry",
    "MemoryFileError",
    "MemoryMiddleware",
    "MemoryRetriever",
    "MemoryState",
    "ModelUnavailableError",
    "NoiseTextError",
    "NotFoundError",
    "PendingAlreadyResolvedError",
    "PendingExpiredError",
    "PendingItem",
    "PendingNotFoundError",
    "PendingStateError",
    "Profile",
    "ProfileUpdate",
    "SchemaVersionError",
    "SearchHit",
    "SessionLog",
    "SessionManager",
    "Settings",
    "SyncReport",
    "TextTooLongError",
    "ThreadConflictError",
    "Triple",
    "WorkspaceLockTimeout",
    "build_memory_graph",
    "count_tokens",
    "create_memory_store",
    "create_memory_tools",
    "truncate_by_tokens",
]
