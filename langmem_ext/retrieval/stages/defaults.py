"""The ordered stage lists: :func:`default_stages` for a search,
:func:`ranking_stages` for ranking candidates already fetched.

A new stage is a class with a ``name`` and a ``run(pool, ctx)`` method
(:class:`~langmem_ext.retrieval.stages.base.Stage`), in its own module of this
package, plus one line in the list below.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from langmem_ext.retrieval.stages.base import Pipeline, Stage
from langmem_ext.retrieval.stages.engines import Keyword, Vector
from langmem_ext.retrieval.stages.marks import (
    Category,
    Graph,
    GraphLinks,
    OlderStatement,
    Person,
    Safety,
    Slot,
    Union,
    Validity,
)
from langmem_ext.retrieval.stages.ranking import (
    MMR,
    Adjust,
    Context,
    Fusion,
    GraphBoost,
    HardMinScore,
    MinScore,
    Noise,
    PersonDemote,
    SafetyFirst,
    TopK,
    WorkingSet,
)
from langmem_ext.retrieval.stages.reranker import Reranker
from langmem_ext.retrieval.stages.results import Coverage, Notes, Order, Profile, Sources

if TYPE_CHECKING:
    from langchain_core.documents import BaseDocumentCompressor

    from langmem_ext.core.config import RetrievalSettings


def ranking_stages() -> list[Stage]:
    """Fusion and the scoring stages, in order (see
    :mod:`langmem_ext.retrieval.stages.ranking`).

    Returns:
        New stage objects.
    """
    return [
        Fusion(),
        Context(),
        GraphBoost(),
        PersonDemote(),
        WorkingSet(),
        MinScore(),
        Adjust("recency"),
        Adjust("importance"),
        Adjust("length_norm"),
        Adjust("time_decay"),
        Adjust("time_window"),
        HardMinScore(),
        MMR(),
        Noise(),
        SafetyFirst(),
        TopK(),
    ]


def default_stages(
    settings: RetrievalSettings | None = None,
    *,
    reranker: BaseDocumentCompressor | None = None,
) -> Pipeline:
    """Every stage of a search, in the order they run.

    The engines fetch candidates per query text; the marking stages filter them and
    mark what the stores link to the question; fusion and the scoring stages rank
    them; the last stages cover each question of a compound message, merge the
    other sources and set the final order. A stage whose setting is off
    (``retrieval.slot_stage``, ``graph_stage``, ``safety_stage``, ``person_stage``,
    ``prose``) is left out of the list.

    Args:
        settings: The retrieval settings (default: every stage).
        reranker: A LangChain document compressor that reorders the results last
            (off when ``None``).

    Returns:
        The pipeline.
    """
    off: frozenset[str] = frozenset()
    if settings is not None:
        flags = {
            "slot": settings.slot_stage,
            "graph_links": settings.graph_stage,
            "graph": settings.graph_stage,
            "safety": settings.safety_stage,
            "person": settings.person_stage,
            "notes": settings.prose,
        }
        off = frozenset(name for name, on in flags.items() if not on)
    base = _search_stages(off)
    return base if reranker is None else Pipeline([*base, Reranker(reranker)])


@functools.lru_cache(maxsize=64)
def _search_stages(off: frozenset[str]) -> Pipeline:
    """The search stages without those named in ``off`` (stages hold no state: one
    list serves every search with the same settings)."""
    stages: list[Stage] = [
        Keyword(),
        Vector(),
        GraphLinks(),
        Category(),
        Validity(),
        Slot(),
        Union(),
        Graph(),
        Safety(),
        Person(),
        OlderStatement(),
        *ranking_stages(),
        Coverage(),
        Profile(),
        Notes(),
        Sources(),
        Order(),
    ]
    return Pipeline(s for s in stages if s.name not in off)


__all__ = ["default_stages", "ranking_stages"]
