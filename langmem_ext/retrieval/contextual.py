"""Contextual vectors: an entry read together with the entry before it.

"Yes, Biscuit!" means nothing alone; after "Have you named the puppy?" it is the
answer to "what is my dog called?". A short conversational memory's own embedding
misses that, and so does a dense search for it. Embedding every entry again with its
predecessor's text would fix it at the price of a second embedding pass, and an
entry's vector would go stale whenever the entry before it is edited.

Here the context is added at query time from vectors the index already keeps: the
entry's unit vector plus ``weight`` times the unit vector of the entry before it in
its file section, normalised. Nothing is stored, so nothing goes stale, and it costs
one small matrix product. Search scores an entry by the better of its own cosine and
its contextual cosine (the strongest evidence, as fusion's relevance is): context
helps a memory whose meaning depends on the turn before it, and never dilutes an
independent fact that happens to follow an unrelated one (replacing the vector did:
"我妹妹吃素吗？" lost its answer in the demo workspace).

On LoCoMo (USE) this lifts plain dense recall@10 from 0.33 to 0.42 and the whole
pipeline by about 1 point; see BENCHMARKS.md.

Only a reply is read this way (:func:`is_reply`): a transcript line (``Name: text``)
after another speaker's line. A memory that is not a turn of a conversation (a fact
the user stated, a sentence of a document) means what it says; its predecessor is
another fact or the next sentence on the same topic, and reading them together lifts
the neighbours of every match past memories that match better on their own
(BENCHMARKS.md §24).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from langmem_ext.language.text import speaker_of


def is_reply(text: str, before: str | None) -> bool:
    """Whether ``text`` is a turn that answers ``before``: both are transcript lines
    (``Name: text``, :func:`~langmem_ext.language.text.speaker_of`) of different speakers.

    Example:
        >>> is_reply("Caroline: Yes, Biscuit!", "Melanie: Have you named the puppy?")
        True
        >>> is_reply("My dog is Biscuit", "I live in Berlin")
        False
    """
    if before is None:
        return False
    who = speaker_of(text)
    return who is not None and speaker_of(before) not in (None, who)


def _units(rows: NDArray[np.float64]) -> NDArray[np.float64]:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    out: NDArray[np.float64] = np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)
    return out


def contextual_units(
    vectors: Sequence[Sequence[float] | NDArray[np.floating]],
    previous: Sequence[Sequence[float] | NDArray[np.floating] | None],
    weight: float,
) -> NDArray[np.float64]:
    """Each entry's contextual vector as a unit row (see the module docstring).

    Computed once for the candidates of several query texts, it serves them all:
    the cosine of a query with an entry is the dot product of the query's unit vector
    with the entry's row.

    Args:
        vectors: Each entry's own vector.
        previous: The vector of the entry before it in its section, or ``None``
            (first entry, or no vector kept): its row is then its own unit vector.
        weight: Weight of the previous entry's unit vector (0: own unit vectors).

    Returns:
        A ``(len(vectors), dim)`` array; a zero vector gives a zero row.

    Raises:
        ValueError: If ``vectors`` and ``previous`` differ in length.
    """
    if len(vectors) != len(previous):
        raise ValueError("one previous vector (or None) per vector is needed")
    if not len(vectors):
        return np.zeros((0, 0))
    own = _units(np.asarray(vectors, dtype=np.float64))
    dim = own.shape[1]
    zero = np.zeros(dim)
    prev = _units(
        np.asarray([p if p is not None and len(p) == dim else zero for p in previous], np.float64)
    )
    return _units(own + weight * prev)


def own_cosine_signal(cosine: float, full_match_cosine: float, min_score: float) -> float:
    """How far a hit's own (rescaled) cosine goes towards ``min_score``, 0..1.

    ``cosine / full_match_cosine`` is its relevance; over ``min_score`` it is 1 for a
    hit that passes the threshold by itself and 0 for one with no cosine at all.
    The contextual vector lifts a hit by this share of what its predecessor adds:
    an answer that says something related to the question keeps the whole lift, a
    memory about something else (cosine ~0) that merely follows the answer gets none.

    Args:
        cosine: The hit's own rescaled cosine with the query.
        full_match_cosine: ``retrieval.vector_full_match``.
        min_score: ``retrieval.min_score``.

    Returns:
        The share of the contextual lift the hit keeps.
    """
    if min_score <= 0.0 or full_match_cosine <= 0.0:
        return 1.0
    return min(1.0, max(0.0, cosine / full_match_cosine) / min_score)


def unit_query(query: Sequence[float] | NDArray[np.floating]) -> NDArray[np.float64]:
    """``query`` as a float64 unit vector (a zero vector stays zero)."""
    q = np.asarray(query, dtype=np.float64)
    norm = float(np.linalg.norm(q))
    return q / norm if norm > 0 else q


def contextual_cosines(
    query: Sequence[float] | NDArray[np.floating],
    vectors: Sequence[Sequence[float] | NDArray[np.floating]],
    previous: Sequence[Sequence[float] | NDArray[np.floating] | None],
    weight: float,
) -> NDArray[np.float64]:
    """Cosine of ``query`` with each entry's contextual vector.

    Args:
        query: The query vector.
        vectors: Each entry's own vector.
        previous: The vector of the entry before it in its section, or ``None``
            (first entry, or no vector kept): its cosine is then the plain one.
        weight: Weight of the previous entry's unit vector (0: plain cosines).

    Returns:
        One cosine per entry, in ``vectors`` order.

    Raises:
        ValueError: If ``vectors`` and ``previous`` differ in length.
    """
    units = contextual_units(vectors, previous, weight)
    if not len(units):
        return np.zeros(0)
    out: NDArray[np.float64] = units @ unit_query(query)
    return out


__all__ = [
    "contextual_cosines",
    "contextual_units",
    "is_reply",
    "own_cosine_signal",
    "unit_query",
]
