"""Conversation context: a memory's neighbours vouch for it.

Memories written from a conversation sit in their files in the order they were
said. An answer often shares no word with the question that asked for it ("Have you
named the puppy?" / "Yes, Biscuit!"), and a later question ("what is Melanie's
puppy called?") then finds the question turn but not the answer. This stage lets
every fused candidate pass a share of its score to the entries up to
``context_window`` places before and after it *in the same file section*:

``context(e) = sum over candidates c near e of w(c -> e) * max(0, fused(c) - mean)``,
where ``mean`` is the mean fused score of all candidates, ``w = context_prev_weight``
when ``c`` comes before ``e`` and ``context_next_weight`` when it comes after, times
``context_decay ** (distance - 1)``. Only what a candidate scores *above the crowd*
is passed on: when every entry matches about as well ("memory 7" among "memory 1"
… "memory 99") no neighbour gains on the exact match, while a question turn that
stands out lifts the answer after it.

A candidate's score becomes ``fused + context``. Neighbours that neither engine
returned join the candidates when their context alone places them among the best
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

from langmem_ext.config import RetrievalSettings
from langmem_ext.retrieval.candidate import Candidate

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
    gain: dict[str, float] = {}
    rel_gain: dict[str, float] = {}
    for c in seeds:
        excess = c.score - mean
        rel = c.debug.get("relevance", 0.0)
        for offset, nid in layout.get(c.id, ()):
            share = shares.get(offset)  # None: the anchor itself, or beyond the window
            if share is None or nid == c.id:
                continue
            gain[nid] = gain.get(nid, 0.0) + share * excess
            rel_gain[nid] = rel_gain.get(nid, 0.0) + share * rel
    pool = {c.id for c in out}
    outside = heapq.nlargest(k, (i for i in gain if i not in pool), key=gain.__getitem__)
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
    out.sort(key=_score, reverse=True)
    return out


__all__ = ["Layout", "NeighbourSource", "context_boost"]
