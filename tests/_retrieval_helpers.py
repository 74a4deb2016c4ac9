"""Builders shared by the test_retrieval_* files."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from langmem_ext.retrieval.candidate import Candidate
from langmem_ext.retrieval.context import Layout

if TYPE_CHECKING:
    from langmem_ext import Memory

NOW = 1_700_000_000.0  # 2023-11-14T22:13:20Z
DAY = 86_400.0


def cand(
    id: str,
    text: str | None = None,
    *,
    cos: float | None = None,
    bm25: float | None = None,
    age_days: float = 0.0,
    importance: float = 1.0,
    category: str = "fact",
    embedding: Sequence[float] | None = None,
) -> Candidate:
    """A candidate created ``age_days`` before ``NOW``."""
    return Candidate(
        id=id,
        text=text if text is not None else f"memory number {id} about something",
        category=category,
        created_at=NOW - age_days * DAY,
        importance=importance,
        vector_score=cos,
        bm25_score=bm25,
        embedding=embedding,
    )


def ids(candidates: Sequence[Candidate]) -> list[str]:
    return [c.id for c in candidates]


@contextmanager
def retrieval_overrides(memory: Memory, **values: Any) -> Iterator[None]:
    """Set ``memory.settings.retrieval`` fields for the body, then restore them."""
    rs = memory.settings.retrieval
    saved = {name: getattr(rs, name) for name in values}
    for name, value in values.items():
        setattr(rs, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(rs, name, value)


class ListNeighbours:
    """Entries in one ordered list (one file section)."""

    def __init__(self, order: Sequence[str]) -> None:
        self.order = list(order)

    def neighbours(self, candidates: Sequence[Candidate], window: int) -> Layout:
        out: dict[str, list[tuple[int, str]]] = {}
        for c in candidates:
            if c.id not in self.order:
                continue
            at = self.order.index(c.id)
            out[c.id] = [
                (j - at, self.order[j])
                for j in range(max(at - window, 0), min(at + window + 1, len(self.order)))
                if j != at
            ]
        return out

    def candidates(self, ids: Sequence[str]) -> list[Candidate]:
        return [cand(i, f"entry {i} of the conversation") for i in ids]


def _fused(id: str, score: float, relevance: float = 0.8) -> Candidate:
    c = cand(id)
    c.score = score
    c.debug.update(fused=score, relevance=relevance)
    return c


def _crowd(n: int, score: float = 0.2) -> list[Candidate]:
    """``n`` weak candidates far away from everything else (``far0`` ...)."""
    return [_fused(f"far{i}", score, relevance=0.2) for i in range(n)]
