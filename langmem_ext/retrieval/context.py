"""Conversation context: a memory's neighbours vouch for it.

Memories written from a conversation sit in their files in the order they were
said. An answer often shares no word with the question that asked for it ("Have you
named the puppy?" / "Yes, Biscuit!"), and a later question ("what is Melanie's
puppy called?") then finds the question turn but not the answer. This stage lets
every fused candidate pass a share of its score to the entries up to
``context_window`` places before and after it *in the same file section*:

``lift(c -> e) = w(c -> e) * max(0, fused(c) - max(mean, fused(e)))`` for each candidate
``c`` near ``e``, where ``mean`` is the mean fused score of all candidates, ``w =
context_prev_weight`` when ``c`` comes before ``e`` and ``context_next_weight`` when it
comes after, times ``context_decay ** (distance - 1)``. Only what a candidate scores
*above the crowd* and above ``e`` is passed on: when every entry matches about as well
("memory 7" among "memory 1" … "memory 99") no neighbour gains on the exact match,
while a question turn that stands out lifts the answer after it. Three limits:

* the lifts are capped at :data:`CONTEXT_GAP_SHARE` (0.75) of ``e``'s gap to the best
  candidate next to it: borrowed evidence narrows the gap, never closes it (without
  the cap two strong sentences lifted the weaker one between them past both);
* several neighbours' lifts combine as independent evidence, not as a sum
  (:func:`combine_lifts`): each closes its share of what is left of that gap, so one
  neighbour gives its whole lift (the answer after its question) while a run of
  on-topic neighbours (a paragraph, a long exchange) no longer adds up to the cap for
  every memory in it and lifts them past the one that matches best on its own
  (summed: XQuAD en→zh R@3 0.753, below plain dense; BENCHMARKS.md §25);
* a candidate an engine returned gets ``min(1, own relevance / min_score)`` of its
  lift (:func:`own_signal`): a memory whose own cosine is ~0 is not lifted by
  sitting next to the answer. An entry no engine returned is unknown, not weak,
  and keeps the whole lift.

``context(e)`` is that gated lift; a candidate's score becomes ``fused + context``.
Neighbours that neither engine returned join the candidates when their context alone places them among the best
(they carry no engine score, ``debug["fused"] == 0``). ``debug["context"]`` shows
what each hit received. ``debug["relevance"]`` rises to the same weighted sum over
the neighbours' relevance when that is higher (capped at 1): the entry right after a
full match has relevance 0.5 and passes the thresholds, so an answer is returned
with the question it answers. The price: in a list of unrelated facts, the fact next
to the one asked for may come back too, ranked below it.

The stage is a pure function of the candidates and a :class:`NeighbourSource`,
which the search engine implements over the keyword index.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from operator import attrgetter
from typing import Protocol

from langmem_ext.core.config import RetrievalSettings
from langmem_ext.retrieval.candidate import Candidate, best_first

_MIN_SEEDS = 20
"""Candidates whose neighbours are looked up: the best ``max(2 k, 20)`` by fused
score. The shares weaker candidates would pass on are small, and looking up every
candidate's neighbours costs more than it changes."""

_score = attrgetter("score")

Layout = Mapping[str, Sequence[tuple[int, str]]]
"""Candidate id -> ``(offset, neighbour id)`` pairs; a negative offset is before it."""


class NeighbourSource(Protocol):
    """Where the context stage finds the entries next to a candidate."""

    def neighbours(self, candidates: Sequence[Candidate], window: int) -> Layout:
        """The entries up to ``window`` places around each candidate, same file section.

        Args:
            candidates: Fused candidates (their ``metadata`` holds ``path`` and ``line``).
            window: Places on each side.

        Returns:
            For each candidate id, its neighbours as ``(offset, id)`` pairs.
        """
        ...

    def candidates(self, ids: Sequence[str]) -> list[Candidate]:
        """New candidates (no engine scores) for entries no engine returned; the stage
        scores them in place."""
        ...


def _share(offset: int, settings: RetrievalSettings) -> float:
    """Share of a candidate's score that goes to the entry ``offset`` places away.

    ``offset > 0``: the entry comes after the candidate, which is its predecessor.
    """
    base = settings.context_prev_weight if offset > 0 else settings.context_next_weight
    return base * settings.context_decay ** (abs(offset) - 1)


CONTEXT_GAP_SHARE = 0.75
"""Context is borrowed evidence: what a neighbour gains, combined over the hits next to
it (:func:`combine_lifts`), closes at most this share of its gap to the best of them (measured from the
larger of its own fused score and the pool's mean). Without the cap two strong
sentences lift the weaker one between them past both, which cost R@1 and R@3; with the whole gap (share 1) a neighbour ties its anchor."""


def combine_lifts(lifts: Sequence[float], cap: float) -> float:
    """Several neighbours' lifts of one entry, combined as independent evidence.

    Each lift closes its share of what the others left of ``cap``:
    ``cap * (1 - prod(1 - min(1, lift / cap)))``. One lift counts whole (up to the
    cap); two lifts of half the cap give three quarters of it, not all of it; the
    result never exceeds ``cap`` and never falls below the largest lift (capped).

    Example:
        >>> combine_lifts([0.05], 0.2), combine_lifts([0.1, 0.1], 0.2), combine_lifts([0.3], 0.2)
        (0.05, 0.15000000000000002, 0.2)
    """
    if cap <= 0.0:
        return 0.0
    left = 1.0
    for lift in lifts:
        left *= 1.0 - min(1.0, max(0.0, lift) / cap)
    return cap * (1.0 - left)


def own_signal(c: Candidate, settings: RetrievalSettings) -> float:
    """How far a candidate's own evidence goes towards ``min_score``, 0..1.

    Its relevance from fusion (before context; for a vector hit scored by its
    contextual vector, from its own cosine) over ``min_score``: 1 for a hit that
    would pass the threshold by itself, near 0 for one with no signal of its own.
    :func:`context_boost` scales a pool candidate's lift by it; an entry no engine
    returned is not asked (unknown, not weak) and keeps its whole lift.

    Args:
        c: A fused candidate (``debug["relevance"]`` set).
        settings: ``min_score`` is used.

    Returns:
        The share of its lift the candidate keeps.
    """
    if settings.min_score <= 0.0:
        return 1.0
    rel = c.debug.get("own_relevance", c.debug.get("relevance", 0.0))
    return min(1.0, max(0.0, rel) / settings.min_score)


def context_boost(
    candidates: Sequence[Candidate],
    source: NeighbourSource,
    settings: RetrievalSettings,
    *,
    k: int,
    copy_inputs: bool = True,
) -> list[Candidate]:
    """Add each candidate's neighbours' share of score (see the module docstring).

    Args:
        candidates: Fused candidates (``score`` and ``debug["relevance"]`` set).
        source: Finds neighbours and materialises entries no engine returned.
        settings: ``context_window``, ``context_prev_weight``,
            ``context_next_weight``, ``context_decay``.
        k: Results the caller wants; at most this many neighbours outside the pool
            are added.
        copy_inputs: ``False`` when the caller does not use the given candidates
            again: they are then changed in place instead of copied.

    Returns:
        The candidates (copies with ``copy_inputs``) and the neighbours that joined
        them, sorted by score, best first, with ``debug["context"]``.
    """
    window = settings.context_window
    out = [c.copy() for c in candidates] if copy_inputs else list(candidates)
    if window <= 0 or not out or (settings.context_prev_weight + settings.context_next_weight) <= 0:
        return out
    mean = sum(c.score for c in out) / len(out)
    best = heapq.nlargest(max(2 * k, _MIN_SEEDS), out, key=_score)  # = sorted(...)[:n]
    seeds = [c for c in best if c.score > mean]  # only what stands out is passed on
    layout = source.neighbours(seeds, window) if seeds else {}
    shares = {o: _share(o, settings) for o in range(-window, window + 1) if o != 0}
    fused = {c.id: c.score for c in out}
    lifts: dict[str, list[float]] = {}
    rel_gain: dict[str, float] = {}
    ceiling: dict[str, float] = {}  # the best score of a seed that lifts each neighbour
    for c in seeds:
        rel = c.debug.get("relevance", 0.0)
        for offset, nid in layout.get(c.id, ()):
            share = shares.get(offset)  # None: the anchor itself, or beyond the window
            if share is None or nid == c.id:
                continue
            ceiling[nid] = max(ceiling.get(nid, 0.0), c.score)
            # the gap to the anchor, not the excess over the mean: never past it
            lifts.setdefault(nid, []).append(
                share * max(0.0, c.score - max(mean, fused.get(nid, 0.0)))
            )
            rel_gain[nid] = rel_gain.get(nid, 0.0) + share * rel
    gain = {  # combined over anchors, and still below the best of them
        i: combine_lifts(
            ls, max(0.0, ceiling[i] - max(mean, fused.get(i, 0.0))) * CONTEXT_GAP_SHARE
        )
        for i, ls in lifts.items()
    }
    pool = {c.id for c in out}
    # A hit whose own evidence is known gets context only in proportion to it (an
    # entry no engine returned is unknown, not weak: it keeps the whole share).
    own = {c.id: own_signal(c, settings) for c in out}
    gain = {i: g * own.get(i, 1.0) for i, g in gain.items()}
    rel_gain = {i: g * own.get(i, 1.0) for i, g in rel_gain.items()}
    outside = heapq.nlargest(
        k, (i for i in gain if i not in pool and gain[i] > 0.0), key=gain.__getitem__
    )
    out.extend(c for c in source.candidates(outside) if c.id not in pool)
    for c in out:
        added = gain.get(c.id, 0.0)
        if c.id not in pool:
            c.score = 0.0
            c.debug["fused"] = 0.0
            c.debug["relevance"] = 0.0
        c.score += added
        c.debug["context"] = added
        relevance = max(c.debug.get("relevance", 0.0), min(1.0, rel_gain.get(c.id, 0.0)))
        c.debug["relevance"] = relevance
    out.sort(key=best_first)
    return out


__all__ = [
    "CONTEXT_GAP_SHARE",
    "Layout",
    "NeighbourSource",
    "combine_lifts",
    "context_boost",
    "own_signal",
]
