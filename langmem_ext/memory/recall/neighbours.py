"""The context stage's view of the keyword index (see :mod:`langmem_ext.retrieval.context`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from langmem_ext.retrieval.candidate import Candidate
from langmem_ext.retrieval.context import Layout

if TYPE_CHECKING:
    from langmem_ext.workspace.docs import Doc
    from langmem_ext.workspace.protocols import KeywordIndex


def doc_candidate(d: Doc) -> Candidate:
    """A candidate for an indexed entry, with no engine scores yet."""
    return Candidate(
        id=d.id,
        text=d.text,
        category=d.category,
        created_at=d.created_at,
        importance=d.importance,
        metadata={"path": d.path, "line": d.line, "updated_at": d.updated_at},
    )


@dataclass
class IndexNeighbours:
    """Neighbours of candidates in one scope, read from the keyword index."""

    keyword: KeywordIndex
    """The workspace's keyword index."""
    scope: str
    """The scope searched; entries of other scopes are never returned."""
    category: str | None = None
    """When set, only entries of this category are materialised."""
    model: str | None = None
    """The embedder whose doc cache to read docs from (see
    :meth:`KeywordIndex.docs_with_vectors`); ``None`` reads ``index.db``."""
    keeps: Callable[[Candidate], bool] | None = None
    """When set, only candidates it keeps are materialised (e.g. current versions)."""
    max_gap: float | None = None
    """When set, seconds: only entries written at most this long before or after a
    candidate are its neighbours. Facts noted weeks apart next to each other in a
    file are not each other's context; the turns of one conversation are."""

    def neighbours(self, candidates: Sequence[Candidate], window: int) -> Layout:
        """See :meth:`langmem_ext.retrieval.context.NeighbourSource.neighbours`."""
        anchors = [
            (c.id, str(c.metadata["path"]), int(c.metadata["line"]), c.category)
            for c in candidates
            if "path" in c.metadata and "line" in c.metadata
        ]
        layout = self.keyword.neighbours(self.scope, anchors, window)
        if self.max_gap is None or not layout:
            return layout
        when = {c.id: c.created_at for c in candidates}
        ids = list({n for pairs in layout.values() for _, n in pairs})
        if self.model is None:
            docs = self.keyword.docs(ids)
        else:
            found = self.keyword.docs_with_vectors(ids, self.model, self.scope)
            docs = {i: d for i, (d, _v) in found.items()}
        gap = self.max_gap
        return {
            a: [
                (o, n)
                for o, n in pairs
                if (d := docs.get(n)) is not None and abs(d.created_at - when[a]) <= gap
            ]
            for a, pairs in layout.items()
        }

    def candidates(self, ids: Sequence[str]) -> list[Candidate]:
        """See :meth:`langmem_ext.retrieval.context.NeighbourSource.candidates`."""
        if self.model is None:
            docs = self.keyword.docs(ids)
        else:
            found = self.keyword.docs_with_vectors(list(ids), self.model, self.scope)
            docs = {i: d for i, (d, _v) in found.items()}
        out = [
            doc_candidate(d)
            for i in ids
            if (d := docs.get(i)) is not None
            and d.scope == self.scope
            and (self.category is None or d.category == self.category)
        ]
        return out if self.keeps is None else [c for c in out if self.keeps(c)]


__all__ = ["IndexNeighbours", "doc_candidate"]
