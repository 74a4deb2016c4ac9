"""Process-level helpers the sibling layers share (base layer, no project imports).

BLAS thread limits (the embedder batches and the exact vector search both run
numpy matrix products) and the stable name of an embedder (cache keys, Chroma
collection names, per-embedder cosine baselines).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from langchain_core.embeddings import Embeddings


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
