"""The LangGraph store: :class:`ChromaMemoryStore`, a ``BaseStore`` over the memory's workspace."""

from typing import TYPE_CHECKING

from langmem_ext.core.lazy import lazy_getattr

if TYPE_CHECKING:
    from langmem_ext.store.chroma import ChromaMemoryStore, create_memory_store

__getattr__ = lazy_getattr(
    __name__,
    {
        "ChromaMemoryStore": "langmem_ext.store.chroma",
        "create_memory_store": "langmem_ext.store.chroma",
    },
)

__all__ = ["ChromaMemoryStore", "create_memory_store"]
