"""The last stages: every question of a compound message gets a hit, other sources
join, and the final order is set. What they leave in ``pool.ranked`` is what the
caller gets, in that order: nothing re-sorts after the pipeline.
"""

from __future__ import annotations

from dataclasses import dataclass

from langmem_ext.retrieval.compound import cover_questions
from langmem_ext.retrieval.stages.base import Pool, QueryContext
from langmem_ext.retrieval.stages.ports import CandidateSource


@dataclass(frozen=True)
class Coverage:
    """A question of a compound message with no hit in the top ``k`` gets its best
    hit from the ones the ranking kept after them
    (:func:`~langmem_ext.retrieval.compound.cover_questions`)."""

    name: str = "coverage"

    def run(self, pool: Pool, ctx: QueryContext) -> Pool:
        """Cut ``pool.ranked`` to ``k``, covering every question."""
        if len(ctx.texts) > 1:
            pool.ranked = cover_questions(pool.ranked, ctx.k, len(ctx.texts) - 1)
        else:
            pool.ranked = pool.ranked[: ctx.k]
        pool.memories = list(pool.ranked)
        return pool


@dataclass(frozen=True)
class Profile:
    """Note in each memory's ``debug`` the safety fields of the user's profile it
    states (``debug["profile.allergies"] = 1``; ``io.profile``). Changes no score."""

    name: str = "profile"

    def run(self, pool: Pool, ctx: QueryContext) -> Pool:
        """Annotate ``pool.ranked``."""
        notes = ctx.io.profile
        if notes is None or not pool.ranked:
            return pool
        try:
            fields = notes.fields_of([c.id for c in pool.ranked])
        except Exception as e:  # a note must never break search
            ctx.warn(f"profile:{type(e).__name__}", f"safety links unreadable: {e}")
            return pool
        for c in pool.ranked:
            for f in fields.get(c.id, ()):
                c.debug[f"profile.{f}"] = 1.0
        return pool


def _merge(source: CandidateSource, pool: Pool, ctx: QueryContext) -> None:
    qvec = pool.query_vectors[0] if pool.query_vectors else None
    try:
        found = source.candidates(ctx.query, qvec, pool.ranked)
    except Exception as e:  # another source must never break search
        ctx.warn(f"source:{source!r}", f"extra search source failed: {e}")
        return
    pool.ranked += found


@dataclass(frozen=True)
class Notes:
    """The prose of the memory files, ranked by the ranking stages on their own,
    join the results (``io.notes``; ``settings.prose``)."""

    name: str = "notes"

    def run(self, pool: Pool, ctx: QueryContext) -> Pool:
        """Append the notes' hits to ``pool.ranked``."""
        if ctx.io.notes is not None:
            _merge(ctx.io.notes, pool, ctx)
        return pool


@dataclass(frozen=True)
class Sources:
    """Other sources (session events) join the results (``io.sources``, in order)."""

    name: str = "sources"

    def run(self, pool: Pool, ctx: QueryContext) -> Pool:
        """Append each source's hits to ``pool.ranked``."""
        for source in ctx.io.sources:
            _merge(source, pool, ctx)
        return pool


@dataclass(frozen=True)
class Order:
    """The final order: a memory stating a safety field the question asks about
    first, then one stating the very attribute asked about (``slot_match``), then
    the rest by score (the memories' ranking and the other sources' hits, merged);
    the first ``k``."""

    name: str = "order"

    def run(self, pool: Pool, ctx: QueryContext) -> Pool:
        """Sort and cut ``pool.ranked``."""
        tier = {c.id: 0 if c.safety else 1 for c in pool.memories if c.safety or c.slot_match}
        pool.ranked.sort(key=lambda c: (tier.get(c.id, 2), -round(float(c.score), 6)))
        pool.ranked = pool.ranked[: ctx.k]
        return pool


__all__ = ["Coverage", "Notes", "Order", "Profile", "Sources"]
