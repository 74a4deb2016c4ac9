"""Put every embedder's cosines on one scale.

Embedders disagree about what "unrelated" looks like: multilingual USE gives
unrelated short texts a cosine near 0.0-0.2 and relevant pairs 0.2-0.6, while
multilingual-e5 puts *everything* between 0.75 and 0.95 (measured on the LoCoMo
turns: median cosine of two unrelated turns 0.36 with USE, 0.86 with e5; median
question/evidence cosine 0.35 and 0.83). Rescaling ``(cos - b) / (1 - b)`` with
``b`` the embedder's *baseline* (0.0 for USE, 0.75 for e5) lines the two up closely
enough (e5 question/evidence median 0.33, duplicate pairs above 0.8 in both) that
one set of thresholds — ``vector_full_match``, ``mmr_threshold`` — serves both.
"""

from __future__ import annotations

from langchain_core.embeddings import Embeddings

from langmem_ext.core.runtime import model_name_of

KNOWN_BASELINES: dict[str, float] = {
    "use-multilingual-v3": 0.0,
    "multilingual-e5-small-q4": 0.75,
}
"""Baselines measured for the offline embedders, by model name."""


def cosine_baseline_of(embeddings: Embeddings, override: float | None = None) -> float:
    """The cosine baseline of ``embeddings``.

    Args:
        embeddings: The embedder; its ``cosine_baseline`` attribute wins, then its
            model name is looked up in :data:`KNOWN_BASELINES`.
        override: A configured value (``retrieval.cosine_baseline``), used when set.

    Returns:
        The baseline; 0.0 (no rescaling) for an unknown embedder.
    """
    if override is not None:
        return override
    own = getattr(embeddings, "cosine_baseline", None)
    if isinstance(own, (int, float)):
        return float(own)
    return KNOWN_BASELINES.get(model_name_of(embeddings), 0.0)


def rescale_cosine(cos: float, baseline: float) -> float:
    """``(cos - baseline) / (1 - baseline)``: 0 for unrelated texts, 1 for identical.

    Args:
        cos: A cosine similarity.
        baseline: The embedder's baseline (below 1).

    Returns:
        The rescaled similarity (negative below the baseline).
    """
    if baseline <= 0.0 or baseline >= 1.0:
        return cos
    return (cos - baseline) / (1.0 - baseline)


__all__ = ["KNOWN_BASELINES", "cosine_baseline_of", "rescale_cosine"]
