"""Embeddings: the offline default embedder, the optional ones and the embedding cache."""

from typing import TYPE_CHECKING

from langmem_ext.core.lazy import lazy_getattr

if TYPE_CHECKING:
    from langmem_ext.embeddings.factory import (
        CachedEmbeddings,
        E5SmallEmbeddings,
        HashingEmbeddings,
        UniversalSentenceEmbeddings,
        create_embeddings,
    )

__getattr__ = lazy_getattr(
    __name__,
    {
        "CachedEmbeddings": "langmem_ext.embeddings.factory",
        "E5SmallEmbeddings": "langmem_ext.embeddings.factory",
        "HashingEmbeddings": "langmem_ext.embeddings.factory",
        "UniversalSentenceEmbeddings": "langmem_ext.embeddings.factory",
        "create_embeddings": "langmem_ext.embeddings.factory",
    },
)

__all__ = [
    "CachedEmbeddings",
    "E5SmallEmbeddings",
    "HashingEmbeddings",
    "UniversalSentenceEmbeddings",
    "create_embeddings",
]
