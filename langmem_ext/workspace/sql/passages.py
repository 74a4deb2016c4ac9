"""The passages (prose chunks, session events) as rows, and their vector side in
either engine: exact nearest search over the kept vectors, the passages still to
embed, and the writes of vectors and event passages.

An engine's passage table derives from :class:`SharedPassageVectors` and supplies
which vectors a search looks at (:meth:`SharedPassageVectors._kept`: SQLite keeps
them in memory, PostgreSQL reads them in the query) and how rows are written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from langmem_ext.core.runtime import blas_threads
from langmem_ext.workspace.docs import text_hash, vector_blob
from langmem_ext.workspace.sql.base import Dialect


@dataclass(frozen=True)
class Passage:
    """One indexed passage.

    Attributes:
        kind: ``prose`` or ``event``.
        id: A prose chunk's anchor (``p-…``) or an event's id (``ev-12``).
        scope: Whose it is.
        path: Its file (a memory file, or the event's transcript).
        line: Its first line (1-based).
        end_line: Its last line.
        category: The section's category (prose) or ``episode`` (events).
        heading: The headings above a prose chunk (``""`` for events).
        role: An event's role (``user``, ``assistant``, ``summary``); ``None`` for prose.
        text: The chunk's text, or what was said.
        created_at: When it was said (events), the day of its daily note, or when it
            was first indexed (prose of a long-term file).
    """

    kind: str
    id: str
    scope: str
    path: str
    line: int
    end_line: int
    category: str
    heading: str
    role: str | None
    text: str
    created_at: float

    @property
    def indexed_text(self) -> str:
        """What it is found by (and what its vector embeds): headings, then text."""
        return f"{self.heading}\n{self.text}" if self.heading else self.text

    @property
    def vector_id(self) -> str:
        """Its id in the vector index: ``path#^id`` (unique in its partition)."""
        return f"{self.path}#^{self.id}"


COLS = "kind, id, scope, path, line, end_line, category, heading, role, text, created_at"
"""The columns of a :class:`Passage`, in its fields' order."""
P_COLS = ", ".join("p." + c.strip() for c in COLS.split(","))


def passage(row: Sequence[Any]) -> Passage:
    """A :class:`Passage` from a :data:`COLS` row."""
    return Passage(
        str(row[0]), str(row[1]), str(row[2]), str(row[3]), int(row[4]), int(row[5]),
        str(row[6]), str(row[7]), None if row[8] is None else str(row[8]), str(row[9]),
        float(row[10]),
    )  # fmt: skip


@dataclass(frozen=True)
class Within:
    """Which passages a search counts: created in ``[since, until)``, said by ``role``
    (``None``: no bound)."""

    since: float | None = None
    until: float | None = None
    role: str | None = None


@dataclass(frozen=True)
class KeptVectors:
    """The vectors a search compares the query with.

    Attributes:
        rowids: The passages' row ids.
        matrix: Their unit vectors, one row each.
        found: The passages themselves by row id, when already read (else they are
            read for the hits only).
    """

    rowids: NDArray[np.int64]
    matrix: NDArray[np.float32]
    found: dict[int, Passage] | None = None


def unit_rows(vectors: Sequence[NDArray[Any]]) -> NDArray[np.float32] | None:
    """``vectors`` as the unit rows of a float32 matrix; ``None`` when their
    dimensions differ."""
    if len({v.shape[0] for v in vectors}) != 1:
        return None
    matrix = np.vstack(vectors).astype(np.float32, copy=True)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    np.divide(matrix, norms, out=matrix, where=norms > 0)
    return matrix


NO_VECTORS = KeptVectors(np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32))
"""A scope with no embedded passage of the kind."""


class SharedPassageVectors:
    """The passages' vector methods of the keyword index in either engine."""

    dialect: ClassVar[Dialect]
    exact_max_entries: int
    _replace_events: ClassVar[str]
    """The statement storing an event passage (its 14 values after ``kind``), replacing
    one stored under its path and id."""

    def _q(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def passages_by_rowid(self, rowids: Sequence[int]) -> dict[int, Passage]:
        raise NotImplementedError

    def _kept(self, kind: str, scope: str, model: str, within: Within) -> KeptVectors | None:
        """The unit vectors of the scope's passages of ``kind`` embedded by ``model``
        that ``within`` counts; ``None`` when the vector index must answer (more than
        ``exact_max_entries`` passages of the kind, or vectors of several dimensions)."""
        raise NotImplementedError

    def _write_passages(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        """Run ``sql`` once per row, in one transaction."""
        raise NotImplementedError

    def passage_nearest(
        self,
        kind: str,
        scope: str,
        model: str,
        query: Sequence[float],
        n: int,
        *,
        since: float | None = None,
        until: float | None = None,
        role: str | None = None,
    ) -> list[tuple[Passage, float]] | None:
        """Exact nearest passages of a kind among a scope's kept ``model`` vectors.

        Passages not embedded yet (or embedded by another model) are not found.

        Args:
            kind: ``prose`` or ``event``.
            scope: The scope searched.
            model: The embedder of ``query``.
            query: The query vector.
            n: How many.
            since: Only passages created at or after this time.
            until: Only passages created before this time.
            role: Only events of this role.

        Returns:
            ``(passage, cosine)`` pairs, best first; ``None`` when the vector index
            must answer (more than ``exact_max_entries`` passages of the kind, or
            vectors of another dimension).
        """
        kept = self._kept(kind, scope, model, Within(since, until, role))
        if kept is None:
            return None
        if not len(kept.rowids) or n <= 0:
            return []
        q = np.asarray(query, dtype=np.float32).ravel()
        if q.shape[0] != kept.matrix.shape[1]:
            return None  # another dimension: let the vector index say so
        norm = float(np.linalg.norm(q))
        if norm > 0:
            q = q / norm
        with blas_threads(1):
            sims = kept.matrix @ q
        if n < len(sims):
            part = np.argpartition(-sims, n - 1)[:n]
            top = part[np.argsort(-sims[part], kind="stable")]
        else:
            top = np.argsort(-sims, kind="stable")
        chosen = [int(kept.rowids[i]) for i in top]
        found = kept.found if kept.found is not None else self.passages_by_rowid(chosen)
        return [
            (found[r], float(sims[i]))
            for r, i in zip(chosen, top.tolist(), strict=True)
            if r in found
        ]

    def passage_todo(self, kind: str, limit: int = 100_000) -> list[tuple[int, Passage]]:
        """``(rowid, passage)`` of the passages of a kind whose text has no vector yet,
        oldest first (read through the partial index ``passages_todo``: O(result)).

        As for entries, vectors of another embedder are not redone here (a
        ``reindex`` does that); exact search only ever reads ``model``'s.
        """
        rows = self._q(
            self.dialect.sql(
                f"SELECT rowid, {COLS} FROM passages "
                "WHERE (vec_hash IS NULL OR vec_hash != text_hash) "
                f"AND {self.dialect.no_index('kind')} = ? ORDER BY rowid LIMIT ?"
            ),
            (kind, limit),
        )
        return [(int(r[0]), passage(r[1:])) for r in rows]

    def mark_passages(
        self,
        done: Sequence[tuple[int, str]],
        model: str,
        vectors: Sequence[Sequence[float]] | NDArray[np.float32],
    ) -> None:
        """Keep the vectors just written for ``(rowid, text_hash)`` pairs (a passage whose
        text changed meanwhile keeps waiting for its own)."""
        self._write_passages(
            self.dialect.sql(
                "UPDATE passages SET vec_model = ?, vec_hash = ?, vec = ? "
                "WHERE rowid = ? AND text_hash = ?"
            ),
            [
                (model, h, vector_blob(v), rowid, h)
                for (rowid, h), v in zip(done, vectors, strict=True)
            ],
        )

    def add_events(
        self,
        events: Sequence[Passage],
        model: str,
        vectors: Sequence[Sequence[float]] | NDArray[np.float32],
    ) -> None:
        """Store event passages with their vectors (one each, just written to the
        vector index); an event stored already is replaced."""
        rows = []
        for ev, v in zip(events, vectors, strict=True):
            h = text_hash(ev.indexed_text)
            rows.append(
                (ev.id, ev.scope, ev.path, ev.line, ev.end_line, ev.category, ev.heading,
                 ev.role, ev.text, h, ev.created_at, model, h, vector_blob(v))
            )  # fmt: skip
        self._write_passages(self.dialect.sql(self._replace_events), rows)


__all__ = [
    "COLS",
    "NO_VECTORS",
    "P_COLS",
    "KeptVectors",
    "Passage",
    "SharedPassageVectors",
    "Within",
    "passage",
    "unit_rows",
]
