"""langmem-ext: a durable, offline-first memory layer for LangChain / LangGraph agents.

Long-term memory lives in Markdown files a person can read and edit, indexed in
Chroma and an FTS5 keyword index and searched by a hybrid pipeline; saves wait for
the user's confirmation. Importing this package loads no model and opens no
connection.
"""

from __future__ import annotations

from langmem_ext.config import Settings
from langmem_ext.errors import (
    EmbeddingError,
    EmptyTextError,
    EntryNotFoundError,
    IndexUnavailableError,
    InvalidCategoryError,
    InvalidInputError,
    InvalidPathError,
    InvalidScopeError,
    LangmemError,
    NoiseTextError,
    NotFoundError,
    PendingAlreadyResolvedError,
    PendingExpiredError,
    PendingNotFoundError,
    PendingStateError,
    TextTooLongError,
    WorkspaceLockTimeout,
)
from langmem_ext.memory import GetResult, Memory, MemoryEntry, PendingItem, SearchHit
from langmem_ext.tokens import count_tokens, truncate_by_tokens

__version__ = "0.1.0"

__all__ = [
    "EmbeddingError",
    "EmptyTextError",
    "EntryNotFoundError",
    "GetResult",
    "IndexUnavailableError",
    "InvalidCategoryError",
    "InvalidInputError",
    "InvalidPathError",
    "InvalidScopeError",
    "LangmemError",
    "Memory",
    "MemoryEntry",
    "NoiseTextError",
    "NotFoundError",
    "PendingAlreadyResolvedError",
    "PendingExpiredError",
    "PendingItem",
    "PendingNotFoundError",
    "PendingStateError",
    "SearchHit",
    "Settings",
    "TextTooLongError",
    "WorkspaceLockTimeout",
    "count_tokens",
    "truncate_by_tokens",
]
