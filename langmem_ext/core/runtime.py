"""Process-level helpers the sibling layers share (base layer).

BLAS thread limits (the embedder batches and the exact vector search both run
numpy matrix products), the stable name of an embedder (cache keys, Chroma
collection names, per-embedder cosine baselines) and embedding texts in batches
into one float32 matrix (the write path and the vector outbox).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings
from numpy.typing import NDArray

from langmem_ext.core.errors import EmbeddingError


@functools.cache
def _blas_controller() -> Any:
    """The process's ``threadpoolctl.ThreadpoolController`` (finds BLAS libraries once)."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


@contextmanager
def blas_threads(threads: int) -> Iterator[None]:
    """Limit numpy's BLAS (OpenBLAS, MKL, ...) to ``threads`` threads in the body.

    Entering and leaving costs ~0.1 ms.

    Args:
        threads: Thread count inside the ``with`` block (restored after).
    """
    with _blas_controller().limit(limits=threads, user_api="blas"):
        yield


def model_name_of(embeddings: Embeddings) -> str:
    """A stable name for an embedder, used in cache keys and collection names."""
    name = getattr(embeddings, "model_name", None) or getattr(embeddings, "model", None)
    return str(name or type(embeddings).__name__)


__all__ = ["blas_threads", "model_name_of"]


def embed_matrix(
    embeddings: Embeddings, texts: Sequence[str], batch_size: int
) -> NDArray[np.float32]:
    """Embed texts in batches of ``batch_size``, as one float32 matrix (one conversion
    serves Chroma and the kept copies).

    Raises:
        EmbeddingError: the embedder failed or returned uneven vectors.
    """
    vecs: list[list[float]] = []
    for j in range(0, len(texts), batch_size):
        try:
            vecs.extend(embeddings.embed_documents(list(texts[j : j + batch_size])))
        except EmbeddingError:
            raise
        except Exception as e:
            raise EmbeddingError(f"embedding failed: {e}") from e
    try:
        return np.asarray(vecs, dtype=np.float32)
    except ValueError as e:
        raise EmbeddingError(f"the embedder returned uneven vectors: {e}") from e
