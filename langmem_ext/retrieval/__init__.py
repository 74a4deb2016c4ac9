"""Retrieval logic without I/O: gate, recall intent, fusion, scoring, noise, MMR.

The engines (Chroma, SQLite FTS5) live in the workspace layer; they hand their hits
to :func:`rank` as :class:`Candidate` lists.
"""

from __future__ import annotations

from langmem_ext.retrieval.candidate import Candidate
from langmem_ext.retrieval.fusion import fuse_rrf, fuse_weighted
from langmem_ext.retrieval.gate import GateDecision, should_retrieve
from langmem_ext.retrieval.intent import RecallIntent, detect_recall_intent
from langmem_ext.retrieval.noise import is_noise
from langmem_ext.retrieval.pipeline import PipelineOptions, rank

__all__ = [
    "Candidate",
    "GateDecision",
    "PipelineOptions",
    "RecallIntent",
    "detect_recall_intent",
    "fuse_rrf",
    "fuse_weighted",
    "is_noise",
    "rank",
    "should_retrieve",
]
