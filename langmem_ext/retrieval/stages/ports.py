"""What the stages read from storage, as protocols: the memory layer implements them.

Retrieval never imports the memory layer: a search builds a :class:`SearchIO` from
its workspace, knowledge graph and profile, and the stages read through it. A part
left ``None`` switches its stage off.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Protocol

from langmem_ext.retrieval.candidate import Candidate
from langmem_ext.retrieval.context import NeighbourSource


class KeywordIndex(Protocol):
    """The keyword engine (BM25, or substring search)."""

    def submit(self, text: str, pool: int, *, fts: bool) -> Future[list[Candidate]]:
        """Start fetching the best ``pool`` keyword candidates of ``text``.

        Args:
            text: One query text.
            pool: How many candidates.
            fts: BM25 (``False``: plain substring search).

        Returns:
            A future of the candidates, best first, with ``bm25_score``,
            ``bm25_rank`` and ``bm25_full`` set.
        """
        ...

    def search(self, text: str, pool: int, *, fts: bool) -> list[Candidate]:
        """Fetch the best ``pool`` keyword candidates of ``text`` on this thread (see
        :meth:`submit`)."""
        ...


class VectorIndex(Protocol):
    """The vector engine."""

    def search(
        self, texts: Sequence[str], pool: int, query_vectors: list[Any]
    ) -> list[list[Candidate]]:
        """Embed each text and fetch its best ``pool`` vector candidates.

        Args:
            texts: The query texts.
            pool: How many candidates per text.
            query_vectors: The texts' embeddings are appended here.

        Returns:
            One list per text, best first, with ``vector_score``, ``vector_rank`` and
            ``embedding`` set.

        Raises:
            Exception: The embedder or the index failed (the stage falls back to
                keyword search).
        """
        ...


@dataclass(frozen=True)
class SlotState:
    """A current memory stating one of the user's attributes.

    Attributes:
        id: The memory id.
        slot: The attribute (``home``, ``employer``, ...).
        created_at: When it was stated, epoch seconds.
        single: The attribute has one current value (the newest statement is the
            answer).
    """

    id: str
    slot: str | None
    created_at: float
    single: bool


class SlotIndex(Protocol):
    """The memories stating the attributes a question asks about."""

    def states(self, query: str) -> list[SlotState]:
        """The current memories of the slots ``query`` asks about, newest first per
        slot (empty: it asks about none)."""
        ...

    def candidates(self, ids: Sequence[str]) -> dict[str, Candidate]:
        """New candidates (no engine scores) for memories of the scope searched."""
        ...


class GraphLinker(Protocol):
    """The knowledge graph, as the graph stage reads it."""

    def links(self, query: str, query_vector: Any | None) -> dict[str, float]:
        """Memory id -> how strongly the graph links it to the query's entities (0-1)."""
        ...


class Joiner(Protocol):
    """Candidates for memories neither engine returned (a stage links them)."""

    def join(self, ids: Sequence[str], query_vector: Any | None) -> list[Candidate]:
        """Candidates for ``ids`` of the scope, category and versions searched, in
        ``ids`` order, each with its cosine to ``query_vector`` when given."""
        ...


class SafetyQuestion(Protocol):
    """A question about a safety topic ("what am I allergic to?")."""

    @property
    def fields(self) -> tuple[str, ...]:
        """The safety fields it asks about, in order."""
        ...

    def linked_among(self, ids: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """Of these memories, those linked to a field asked about when they were
        stored: id -> the fields."""
        ...

    def worth_joining(self, limit: int) -> list[tuple[str, tuple[str, ...]]]:
        """At most ``limit`` linked memories (id, fields), those most worth joining
        the candidates first."""
        ...

    def stated(self, candidate: Candidate) -> set[str]:
        """The fields asked about that ``candidate``'s text states about the person
        asked about."""
        ...


class SafetyIndex(Protocol):
    """The profile's safety links."""

    def question(self, query: str) -> SafetyQuestion | None:
        """The safety question ``query`` asks (``None``: none, or unreadable)."""
        ...


class PersonReader(Protocol):
    """Whom questions and memories are about."""

    def other_person(self, query: str, candidates: Sequence[Candidate]) -> set[str]:
        """Ids of ``candidates`` about someone other than whom ``query`` asks about."""
        ...

    def subject(self, query: str) -> str:
        """The words of ``query`` that say whom it asks about (``""``: nobody named)."""
        ...


class ProfileNotes(Protocol):
    """The safety fields of the user's profile each memory states."""

    def fields_of(self, ids: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """Memory id -> the profile fields it states."""
        ...


class CandidateSource(Protocol):
    """Another source of results merged into the ranking (notes, session events)."""

    @property
    def name(self) -> str:
        """What the source is (``notes``, ``source``)."""
        ...

    def candidates(
        self, query: str, query_vector: Any | None, current: Sequence[Candidate]
    ) -> list[Candidate]:
        """This source's results for ``query``, best first, scored on the ranking's
        scale (0..1).

        Args:
            query: The query text.
            query_vector: Its embedding (``None``: the vector side did not run).
            current: The results so far.
        """
        ...


@dataclass
class SearchIO:
    """The stores one search reads. ``None`` (or empty) switches the stage off.

    Attributes:
        keyword: The keyword engine (the ``keyword`` stage).
        vector: The vector engine (the ``vector`` stage).
        slots: The slot stage's memories.
        graph: The knowledge graph (the ``graph_links`` and ``graph`` stages).
        joiner: Brings in memories a stage links but no engine returned.
        safety: The safety stage's profile links.
        persons: The person stage's reader.
        neighbours: The context stage's neighbours.
        profile: The profile fields noted in each result's ``debug``.
        notes: The prose of the memory files (the ``notes`` stage).
        sources: Other sources (the ``sources`` stage), merged in this order.
    """

    keyword: KeywordIndex | None = None
    vector: VectorIndex | None = None
    slots: SlotIndex | None = None
    graph: GraphLinker | None = None
    joiner: Joiner | None = None
    safety: SafetyIndex | None = None
    persons: PersonReader | None = None
    neighbours: NeighbourSource | None = None
    profile: ProfileNotes | None = None
    notes: CandidateSource | None = None
    sources: list[CandidateSource] = field(default_factory=list)


__all__ = [
    "CandidateSource",
    "GraphLinker",
    "Joiner",
    "KeywordIndex",
    "PersonReader",
    "ProfileNotes",
    "SafetyIndex",
    "SafetyQuestion",
    "SearchIO",
    "SlotIndex",
    "SlotState",
    "VectorIndex",
]
