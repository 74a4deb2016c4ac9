"""The ranking pipeline: one ordered list of stages over one candidate type.

Every step of a search — the engines, the stages that mark and join candidates,
fusion, the scoring stages, question coverage, other sources and the final order —
is a :class:`Stage` with a ``name`` and a ``run(pool, ctx)`` method.
:func:`default_stages` gives the list a search runs; :class:`Pipeline` runs it.
The stages read storage only through the protocols of
:mod:`langmem_ext.retrieval.stages.ports`.
"""

from __future__ import annotations

from langmem_ext.retrieval.stages.base import Pipeline, Pool, QueryContext, Stage
from langmem_ext.retrieval.stages.defaults import default_stages, ranking_stages
from langmem_ext.retrieval.stages.ports import SearchIO
from langmem_ext.retrieval.stages.reranker import Reranker

__all__ = [
    "Pipeline",
    "Pool",
    "QueryContext",
    "Reranker",
    "SearchIO",
    "Stage",
    "default_stages",
    "ranking_stages",
]
