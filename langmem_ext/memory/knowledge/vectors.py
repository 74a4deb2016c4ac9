"""Embeddings of the knowledge graph's triples and entity names, held in memory.

A triple read as a short sentence ("Melanie finish another painting") is a
condensed form of the chatty memory behind it, and its cosine to a question says
more than the memory's own: the graph stage (:mod:`langmem_ext.memory.knowledge.stage`)
ranks the triples it reaches by it. Entity names are embedded too, for questions
that name no known entity in so many words (another language, another wording).

Vectors are computed on the memory's background writer after each extraction
(:meth:`GraphVectors.refresh`), never on the reply path: a search reads what is
there and falls back to word overlap for a triple not embedded yet. They are
derived data, kept per process (the memory's embedding cache, when on, makes a
restart cheap).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

logger = logging.getLogger(__name__)

Embed = Callable[[list[str]], list[list[float]]]
BATCH = 256
"""Texts embedded per call."""


def triple_sentence(subject: str, predicate: str, obj: str, negated: bool) -> str:
    """A triple as the sentence that is embedded (``Melanie not like durian``)."""
    relation = predicate.replace("_", " ")
    return f"{subject} {'not ' if negated else ''}{relation} {obj}"


@dataclass
class _Table:
    """Unit vectors by key, appended in place (rows of ``matrix``)."""

    row: dict[str, int] = field(default_factory=dict)
    matrix: NDArray[np.float32] = field(default_factory=lambda: np.zeros((0, 0), np.float32))

    def add(self, keys: Sequence[str], vectors: list[list[float]]) -> None:
        if not keys:
            return
        m = np.asarray(vectors, dtype=np.float32)
        norms = np.linalg.norm(m, axis=1, keepdims=True)
        m = (m / np.where(norms > 0, norms, 1.0)).astype(np.float32)
        start = len(self.row)
        self.matrix = m if self.matrix.size == 0 else np.vstack([self.matrix, m])
        for i, key in enumerate(keys):
            self.row[key] = start + i


@dataclass
class _Scope:
    triples: _Table = field(default_factory=_Table)
    entities: _Table = field(default_factory=_Table)
    entity_keys: list[str] = field(default_factory=list)


class GraphVectors:
    """Unit vectors of triples (by id) and entity names (by key), per scope.

    Args:
        embed: Embeds a batch of texts (the memory's ``embed_documents``).
    """

    def __init__(self, embed: Embed) -> None:
        self._embed = embed
        self._scopes: dict[str, _Scope] = {}
        self._lock = threading.Lock()

    def _scope(self, scope: str) -> _Scope:
        with self._lock:
            return self._scopes.setdefault(scope, _Scope())

    def refresh(
        self,
        scope: str,
        triples: Iterable[tuple[str, str]],
        entities: Iterable[tuple[str, str]],
    ) -> int:
        """Embed the triples and entity names of ``scope`` not embedded yet.

        Args:
            scope: Whose graph.
            triples: ``(triple id, sentence)`` pairs (:func:`triple_sentence`).
            entities: ``(entity key, display name)`` pairs.

        Returns:
            How many texts were embedded.
        """
        sc = self._scope(scope)
        new_t = [(i, t) for i, t in triples if i not in sc.triples.row]
        new_e = [(k, n) for k, n in entities if k not in sc.entities.row]
        for table, items in ((sc.triples, new_t), (sc.entities, new_e)):
            for start in range(0, len(items), BATCH):
                batch = items[start : start + BATCH]
                vectors = self._embed([text for _key, text in batch])
                with self._lock:
                    table.add([key for key, _text in batch], vectors)
        if new_e:
            with self._lock:
                sc.entity_keys = list(sc.entities.row)
        return len(new_t) + len(new_e)

    def triple_cosines(
        self, scope: str, query: NDArray[np.float64], ids: Sequence[str]
    ) -> dict[str, float]:
        """Cosine of the unit ``query`` to each embedded triple of ``ids``."""
        sc = self._scopes.get(scope)
        if sc is None:
            return {}
        with self._lock:
            rows = [(i, sc.triples.row[i]) for i in ids if i in sc.triples.row]
            if not rows:
                return {}
            cos = sc.triples.matrix[[r for _i, r in rows]] @ query.astype(np.float32)
        return {i: float(c) for (i, _r), c in zip(rows, cos.tolist(), strict=True)}

    def entity_cosines(
        self, scope: str, query: NDArray[np.float64], keys: Sequence[str] | None = None
    ) -> dict[str, float]:
        """Cosine of the unit ``query`` to the embedded entity names (of ``keys``, or all)."""
        sc = self._scopes.get(scope)
        if sc is None:
            return {}
        with self._lock:
            if keys is None:
                names = sc.entity_keys
                matrix = sc.entities.matrix
            else:
                names = [k for k in keys if k in sc.entities.row]
                matrix = sc.entities.matrix[[sc.entities.row[k] for k in names]]
            if not names or matrix.size == 0:
                return {}
            cos = matrix @ query.astype(np.float32)
        return dict(zip(names, cos.tolist(), strict=True))


__all__ = ["GraphVectors", "triple_sentence"]
