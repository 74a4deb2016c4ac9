"""The memory layer's side of the ranking pipeline's protocols
(:mod:`langmem_ext.retrieval.stages.ports`): the workspace's engines and ledger, the
knowledge graph, the safety links and other sources, bound to one search's scope.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from langmem_ext.language.statements import question_slots, single_valued
from langmem_ext.memory.knowledge.stage import graph_links
from langmem_ext.memory.recall.neighbours import doc_candidate
from langmem_ext.memory.safety.facts import (
    USER,
    SafetyTopic,
    is_relation,
    owner,
    persons,
    safety_facts,
    same_person,
    subject_phrase,
)
from langmem_ext.memory.types import SearchHit
from langmem_ext.retrieval.candidate import Candidate
from langmem_ext.retrieval.stages.ports import SlotState

if TYPE_CHECKING:
    from langmem_ext.core.config import RetrievalSettings
    from langmem_ext.memory.knowledge.triples import KnowledgeGraph
    from langmem_ext.memory.safety.links import SafetyLinks
    from langmem_ext.workspace.store import Workspace

SLOT_HITS = 3
"""Current memories of one slot the slot stage brings in, newest first: a store of
imported statements may hold many current memories of one slot (added, not
superseded), and only the newest are the answer; the rest stay reachable by
ordinary search."""

Warn = Callable[[str, str], None]

_POOL_WORKERS = 4
_pool: tuple[int, ThreadPoolExecutor] | None = None
_pool_lock = threading.Lock()


def keyword_pool() -> ThreadPoolExecutor:
    """The threads that run keyword queries next to the vector side (one set per process).

    Created lazily, and again in a forked child, whose copy has no threads.
    """
    global _pool
    pid = os.getpid()
    with _pool_lock:
        if _pool is None or _pool[0] != pid:
            _pool = (pid, ThreadPoolExecutor(_POOL_WORKERS, thread_name_prefix="langmem-fts"))
        return _pool[1]


@dataclass
class KeywordPort:
    """The workspace's keyword index (BM25 on worker threads)."""

    fetch: Callable[..., list[Candidate]]
    """``fetch(text, scope, pool, fts=...)``: the engine's keyword query."""
    scope: str

    def submit(self, text: str, pool: int, *, fts: bool) -> Future[list[Candidate]]:
        """Start the keyword query of ``text`` on a worker thread."""
        return keyword_pool().submit(self.fetch, text, self.scope, pool, fts=fts)

    def search(self, text: str, pool: int, *, fts: bool) -> list[Candidate]:
        """Run the keyword query of ``text`` on this thread."""
        return self.fetch(text, self.scope, pool, fts=fts)


@dataclass
class VectorPort:
    """The workspace's vector index, with contextual vectors."""

    fetch: Callable[..., list[list[Candidate]]]
    """``fetch(texts, scope, pool, qvecs=...)``: the engine's vector query."""
    scope: str

    def search(
        self, texts: Sequence[str], pool: int, query_vectors: list[Any]
    ) -> list[list[Candidate]]:
        """Embed each text and fetch its vector candidates (see ``SearchEngine._vectors``)."""
        return self.fetch(list(texts), self.scope, pool, qvecs=query_vectors)


@dataclass
class SlotPort:
    """The ledger's current statements of the user's attributes."""

    workspace: Workspace
    scope: str

    def states(self, query: str) -> list[SlotState]:
        """The current memories of the slots ``query`` asks about."""
        slots = question_slots(query)
        if not slots:
            return []
        ledger = self.workspace.ledger
        return [
            SlotState(s.id, s.slot, s.created_at, s.slot is not None and single_valued(s.slot))
            for s in ledger.entries.current_of_slots(self.scope, slots, limit=SLOT_HITS)
        ]

    def candidates(self, ids: Sequence[str]) -> dict[str, Candidate]:
        """Candidates for the memories of this scope among ``ids``."""
        docs = self.workspace.keyword.docs(list(ids))
        return {i: doc_candidate(d) for i, d in docs.items() if d.scope == self.scope}


@dataclass
class GraphPort:
    """The knowledge graph (:func:`~langmem_ext.memory.knowledge.stage.graph_links`)."""

    knowledge: KnowledgeGraph
    settings: RetrievalSettings
    scope: str

    def links(self, query: str, query_vector: Any | None) -> dict[str, float]:
        """Memory id -> graph score for ``query``."""
        rs = self.settings
        return graph_links(
            self.knowledge, self.scope, query, query_vector=query_vector,
            hops=rs.graph_hops, limit=rs.graph_max_triples,
        ).scores  # fmt: skip


@dataclass
class JoinPort:
    """Memories a stage links that neither engine returned."""

    fetch: Callable[[list[str], Any], list[Candidate]]
    """``fetch(ids, query_vector)``: the engine's join, bound to the search."""

    def join(self, ids: Sequence[str], query_vector: Any | None) -> list[Candidate]:
        """Candidates for ``ids`` (see ``SearchEngine._joined``)."""
        return self.fetch(list(ids), query_vector)


@dataclass
class _SafetyQuestion:
    fields: tuple[str, ...]
    subject: str
    subjects: set[str]
    names: tuple[str, ...]
    links: SafetyLinks
    scope: str
    topic: SafetyTopic
    warn: Warn

    def linked_among(self, ids: Sequence[str]) -> dict[str, tuple[str, ...]]:
        try:
            return self.links.linked_among(self.scope, self.topic, ids)
        except Exception as e:  # the stage must never break search
            self.warn(f"safety:{type(e).__name__}", f"safety links unreadable: {e}")
            return {}

    def worth_joining(self, limit: int) -> list[tuple[str, tuple[str, ...]]]:
        try:
            return self.links.worth_joining(self.scope, self.topic, limit)
        except Exception as e:
            self.warn(f"safety:{type(e).__name__}", f"safety links unreadable: {e}")
            return []

    def stated(self, candidate: Candidate) -> set[str]:
        # a relation and the name next to it are one person ("我丈夫Mark")
        about = () if self.subject == USER else persons(candidate.text, self.names)
        return {
            f.field
            for f in safety_facts(candidate.text, self.names)
            if f.field in self.fields
            and (
                any(same_person(f.subject, s) for s in self.subjects)
                or (f.subject in about and self.subject in about)
            )
        }


@dataclass
class SafetyPort:
    """The profile's safety links (:class:`~langmem_ext.memory.safety.links.SafetyLinks`)
    and the safety facts a memory's text states
    (:func:`~langmem_ext.memory.safety.facts.safety_facts`: a memory written by hand)."""

    links: SafetyLinks
    scope: str
    warn: Warn

    def question(self, query: str) -> _SafetyQuestion | None:
        """The safety question ``query`` asks; ``None`` when none, or the links are
        unreadable (logged once: the stage must never break search)."""
        links = self.links
        try:
            topic = links.topic(self.scope, query)
            if topic is None:
                return None
            names = links.names(self.scope)
            subjects = set(links.subjects(self.scope, topic))
        except Exception as e:
            self.warn(f"safety:{type(e).__name__}", f"safety stage failed: {e}")
            return None
        return _SafetyQuestion(
            tuple(topic.fields), topic.subject, subjects, names, links, self.scope, topic, self.warn
        )


@dataclass
class PersonPort:
    """Whom the question and each memory are about
    (:func:`~langmem_ext.memory.safety.facts.persons`).

    A question about the user ("what am I allergic to?", "我住在哪") and a memory
    about another person ("My sister is allergic to shellfish"), or a question about
    another person ("What is my wife allergic to?") and the user's own fact: the
    memory is about someone else. Two other people are never told apart (a name
    and a relation may be one person), nor is a memory whose wording names nobody;
    and a question naming someone by name may be about the user (whose name the
    profile may not hold), so only a relation ("my wife", "我妈妈") sets the user's
    own facts apart. A relation of the person a question names ("Wu Lei's wife" for
    "What is Wu Lei allergic to?") is someone else."""

    links: SafetyLinks | None
    scope: str
    warn: Warn

    def _names(self) -> tuple[str, ...]:
        if self.links is None:
            return ()
        try:
            return self.links.names(self.scope)
        except Exception as e:  # a profile must never break search
            self.warn(f"names:{type(e).__name__}", f"profile unreadable: {e}")
            return ()

    def subject(self, query: str) -> str:
        """The words of ``query`` that say whom it asks about
        (:func:`~langmem_ext.memory.safety.facts.subject_phrase`)."""
        return subject_phrase(query, self._names())

    def other_person(self, query: str, candidates: Sequence[Candidate]) -> set[str]:
        """Ids of ``candidates`` about someone other than whom ``query`` asks about."""
        names = self._names()
        asked = persons(query, names)
        if asked and asked[0] != USER and not is_relation(asked[0]):
            # a name: only a relation of that person is surely someone else
            # ("Wu Lei's wife" for a question about Wu Lei)
            who = asked[0]
            return {
                c.id
                for c in candidates
                if (o := owner(c.text, names)) is not None and same_person(o, who)
            }
        if not asked:
            return set()
        mine = asked[0] == USER
        out: set[str] = set()
        for c in candidates:
            about = persons(c.text, names)
            if about and (is_relation(about[0]) if mine else about == (USER,)):
                out.add(c.id)
        return out


@dataclass
class ProfilePort:
    """The safety fields of the user's profile each memory states."""

    links: SafetyLinks
    scope: str

    def fields_of(self, ids: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """Memory id -> profile fields."""
        return self.links.fields_of(self.scope, list(ids))


def hit_candidate(hit: SearchHit) -> Candidate:
    """A candidate carrying a finished hit of another source (``metadata["hit"]``)."""
    return Candidate(
        id=hit.id,
        text=hit.text,
        category=hit.category,
        created_at=hit.created_at.timestamp(),
        importance=hit.importance,
        score=hit.score,
        debug=dict(hit.debug),
        metadata={"hit": hit},
    )


@dataclass
class NotesPort:
    """The prose of the memory files (:mod:`~langmem_ext.memory.recall.notes`); their
    keyword query started when the search began."""

    name: str
    fetch: Callable[[str, Any], list[SearchHit]]

    def candidates(
        self, query: str, query_vector: Any | None, current: Sequence[Candidate]
    ) -> list[Candidate]:
        """The notes' hits, without those whose text is a memory's among ``current``."""
        from langmem_ext.memory.recall.notes import note_key

        hits = self.fetch(query, query_vector)
        memories = {note_key(c.text) for c in current if "hit" not in c.metadata}
        return [hit_candidate(h) for h in hits if note_key(h.text) not in memories]


@dataclass
class HitsSource:
    """A source added with ``SearchEngine.add_source`` (the session log)."""

    source: Callable[..., list[SearchHit]]
    with_vector: bool
    scope: str
    k: int
    intent: Any
    category: str | None
    name: str = field(default="source")

    def __repr__(self) -> str:
        return repr(self.source)

    def candidates(
        self, query: str, query_vector: Any | None, current: Sequence[Candidate]
    ) -> list[Candidate]:
        """The source's hits of the category searched."""
        if self.with_vector:
            hits = self.source(query, self.scope, self.k, self.intent, query_vector=query_vector)
        else:
            hits = self.source(query, self.scope, self.k, self.intent)
        return [hit_candidate(h) for h in hits if not self.category or h.category == self.category]


__all__ = [
    "SLOT_HITS",
    "GraphPort",
    "HitsSource",
    "JoinPort",
    "KeywordPort",
    "NotesPort",
    "PersonPort",
    "ProfilePort",
    "SafetyPort",
    "SlotPort",
    "VectorPort",
    "hit_candidate",
    "keyword_pool",
]
