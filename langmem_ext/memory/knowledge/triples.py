"""The knowledge graph of a memory: subject–predicate–object triples.

Triples are a by-product of memories. Each lists the memories that support it; a
triple counts at time ``t`` while one of them is live at ``t``, so deleting or
superseding a memory withdraws its support at once (the ledger's read queries decide
it; see :mod:`langmem_ext.workspace.sqlite.triples`), and a superseded memory's
triples close with it. Extraction runs on the memory's background writer, never on
the reply path: :meth:`KnowledgeGraph.schedule` after every write, then
:meth:`KnowledgeGraph.catch_up` extracts every memory not extracted from its current
text (with a chat model when :attr:`KnowledgeGraph.model` is set, else the
deterministic extractor). Everything here is rebuildable from the Markdown and the
ledger's entries (:meth:`KnowledgeGraph.rebuild`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from langmem_ext.core.config import KnowledgeSettings
from langmem_ext.language.text import query_tokens
from langmem_ext.memory.knowledge.extract import (
    TripleDraft,
    extract_triples,
    extract_triples_with_model,
    normalise_entity,
)
from langmem_ext.memory.knowledge.vectors import Embed, GraphVectors, triple_sentence
from langmem_ext.workspace.records import (
    ExtractedEntry,
    NewTriple,
    TripleRepository,
    TripleRow,
    triple_id,
)

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from langmem_ext.memory.background import TurnWriter
    from langmem_ext.memory.leases import JobLeases
    from langmem_ext.memory.profile import ProfileBook
    from langmem_ext.workspace.store import Workspace

logger = logging.getLogger(__name__)

KNOWLEDGE_JOB = "knowledge"
"""Lease name of a scope's triple extraction."""
DETERMINISTIC = "deterministic"
"""Extractor name recorded for memories read without a model."""


@dataclass(frozen=True)
class Triple:
    """One subject–predicate–object triple with the memories that support it.

    Attributes:
        id: Stable id (the same after a rebuild).
        scope: Whose memory.
        subject: Display form of the subject.
        predicate: Canonical relation (``likes``, ``lives_in``).
        object: Display form of the object.
        subject_key: The subject's entity key (:func:`normalise_entity`).
        object_key: The object's entity key.
        negated: The memories deny the relation.
        frequency: A frequency adverb, when stated.
        condition: A condition, when stated.
        support: Ids of the supporting memories live at the time asked (current first).
        valid_to: ``None`` while a supporting memory is current, else when the last
            one was superseded (epoch seconds).

    Example:
        >>> Triple("t-1", "main", "Lin Wei", "likes", "green tea", "lin wei", "green tea",
        ...        False, None, None, ("m-1",), None).text
        'Lin Wei — likes → green tea'
    """

    id: str
    scope: str
    subject: str
    predicate: str
    object: str
    subject_key: str
    object_key: str
    negated: bool
    frequency: str | None
    condition: str | None
    support: tuple[str, ...]
    valid_to: float | None

    @property
    def text(self) -> str:
        """The triple as one readable line (``not`` shown when negated)."""
        relation = self.predicate.replace("_", " ")
        if self.negated:
            relation = f"not {relation}"
        if self.frequency:
            relation = f"{relation} ({self.frequency})"
        line = f"{self.subject} — {relation} → {self.object}"
        return f"{line} [if {self.condition}]" if self.condition else line


def _triple(row: TripleRow) -> Triple:
    t = row.triple
    return Triple(
        row.id, row.scope, t.subject, t.predicate, t.object, t.subject_key, t.object_key,
        t.negated, t.frequency, t.condition, tuple(s[0] for s in row.support), row.valid_to,
    )  # fmt: skip


def _words_of(t: Triple) -> tuple[frozenset[str], frozenset[str]]:
    """The search tokens of ``predicate object`` and of ``predicate subject``."""
    relation = t.predicate.replace("_", " ")
    return (
        frozenset(query_tokens(f"{relation} {t.object}")),
        frozenset(query_tokens(f"{relation} {t.subject}")),
    )


@dataclass(frozen=True)
class GraphView:
    """The current triples of one scope, held in memory for the search's graph stage.

    Built on the background writer after each extraction (:meth:`KnowledgeGraph.view`),
    so a search reads dictionaries, never the ledger. A memory deleted or superseded
    since the last build may still appear as support: the search keeps only live,
    current memories.

    Attributes:
        degrees: Entity key -> number of current triples it is part of.
        by_key: Entity key -> its current triples.
        words: Triple id -> the search tokens of ``predicate object`` and of
            ``predicate subject`` (what the triple says beyond either end).
        triples: How many current triples the view holds.
    """

    degrees: dict[str, int]
    by_key: dict[str, list[Triple]]
    words: dict[str, tuple[frozenset[str], frozenset[str]]]
    triples: int = 0

    @classmethod
    def of(cls, triples: Sequence[Triple], previous: GraphView | None = None) -> GraphView:
        """The view of ``triples`` (the word sets of ``previous`` are reused)."""
        by_key: dict[str, list[Triple]] = {}
        words: dict[str, tuple[frozenset[str], frozenset[str]]] = {}
        known = previous.words if previous is not None else {}
        for t in triples:
            by_key.setdefault(t.subject_key, []).append(t)
            if t.object_key != t.subject_key:
                by_key.setdefault(t.object_key, []).append(t)
            got = known.get(t.id)
            words[t.id] = got if got is not None else _words_of(t)
        return cls({k: len(v) for k, v in by_key.items()}, by_key, words, len(words))

    def all_triples(self) -> list[Triple]:
        """Every triple of the view, once."""
        seen: dict[str, Triple] = {}
        for found in self.by_key.values():
            for t in found:
                seen.setdefault(t.id, t)
        return list(seen.values())

    def grown(
        self, scope: str, extracted: Sequence[ExtractedEntry]
    ) -> tuple[GraphView, list[Triple]]:
        """This view with the triples of newly extracted memories (a new view; this one
        is unchanged, searches may be reading it), and the triples that changed.

        A memory extracted again after an edit leaves its old triples first
        (:meth:`without`, as :meth:`KnowledgeGraph.schedule` does for ``retired``).
        """
        by_key = dict(self.by_key)
        words = dict(self.words)
        current = self._named(extracted, scope)
        changed: dict[str, Triple] = {}
        for e in extracted:
            for nt in e.triples:
                tid = triple_id(scope, nt)
                old = changed.get(tid) or current.get(tid)
                if old is None:
                    t = Triple(tid, scope, nt.subject, nt.predicate, nt.object, nt.subject_key,
                               nt.object_key, nt.negated, nt.frequency, nt.condition,
                               (e.entry_id,), None)  # fmt: skip
                elif e.entry_id in old.support:
                    continue
                else:
                    t = replace(old, support=(e.entry_id, *old.support))  # newest first
                changed[tid] = t
        for tid, t in changed.items():
            for key in dict.fromkeys((t.subject_key, t.object_key)):
                kept = [x for x in by_key.get(key, ()) if x.id != tid]
                by_key[key] = [*kept, t]
            if tid not in words:
                words[tid] = _words_of(t)
        view = GraphView({k: len(v) for k, v in by_key.items()}, by_key, words, len(words))
        return view, list(changed.values())

    def without(
        self, retired: Collection[str], supported: Sequence[tuple[str, str, str]]
    ) -> GraphView:
        """This view without the support of ``retired`` memories (deleted, superseded
        or edited): a new view; a triple left with no support leaves it.

        Args:
            retired: Memory ids.
            supported: ``(triple id, subject key, object key)`` of the triples they
                supported (:meth:`TripleRepository.supported_by`); only those triples'
                entities are visited.
        """
        by_key = dict(self.by_key)
        words = dict(self.words)
        touched = {tid for tid, _s, _o in supported}
        for key in dict.fromkeys(k for _t, s_key, o_key in supported for k in (s_key, o_key)):
            kept: list[Triple] = []
            for t in by_key.get(key, ()):
                if t.id in touched:
                    support = tuple(i for i in t.support if i not in retired)
                    if not support:
                        words.pop(t.id, None)
                        continue
                    t = replace(t, support=support)
                kept.append(t)
            if kept:
                by_key[key] = kept
            else:
                by_key.pop(key, None)
        return GraphView({k: len(v) for k, v in by_key.items()}, by_key, words, len(words))

    def _named(self, extracted: Sequence[ExtractedEntry], scope: str) -> dict[str, Triple]:
        """The view's triples that ``extracted`` names, by id."""
        ids = {triple_id(scope, nt) for e in extracted for nt in e.triples}
        keys = {nt.subject_key for e in extracted for nt in e.triples}
        return {t.id: t for key in keys for t in self.by_key.get(key, ()) if t.id in ids}


def _new_triple(draft: TripleDraft, user_names: Sequence[str]) -> NewTriple | None:
    s_key = normalise_entity(draft.subject, user_names=user_names)
    o_key = normalise_entity(draft.object, user_names=user_names)
    if not s_key or not o_key or not draft.predicate.strip():
        return None
    return NewTriple(
        subject_key=s_key,
        subject=draft.subject.strip(),
        predicate=draft.predicate.strip(),
        object_key=o_key,
        object=draft.object.strip(),
        negated=bool(draft.negated),
        frequency=draft.frequency,
        condition=draft.condition,
    )


class KnowledgeGraph:
    """The triples of one :class:`~langmem_ext.Memory` (``memory.knowledge``).

    Args:
        workspace: The workspace whose entries the triples are read from.
        settings: ``settings.knowledge`` of the memory.
        profiles: The scopes' profiles (the user's names resolve to ``user``).
        background: The memory's background writer (called when first needed).
        model: A chat model for structured extraction (``None``: deterministic).
        embed: Embeds a batch of texts: triples and entity names are embedded after
            each extraction (:attr:`vectors`, read by the search's graph stage).
            ``None``: no vectors.

    Example:
        >>> from langmem_ext import Memory, Settings
        >>> import tempfile
        >>> s = Settings(workspace=tempfile.mkdtemp())
        >>> s.embeddings.provider = "fake"
        >>> memory = Memory(settings=s)
        >>> _ = memory.add("Alice likes green tea")
        >>> _ = memory.background.wait()
        >>> [t.text for t in memory.knowledge.neighbourhood("main", ["alice"])]
        ['Alice — likes → green tea']
        >>> memory.close()
    """

    def __init__(
        self,
        workspace: Workspace,
        settings: KnowledgeSettings,
        profiles: ProfileBook,
        background: Callable[[], TurnWriter],
        model: BaseChatModel | None = None,
        embed: Embed | None = None,
        leases: JobLeases | None = None,
    ) -> None:
        self.workspace = workspace
        self.leases = leases
        """The processes' leases: one at a time extracts a scope (``None``: no lease)."""
        self.vectors = GraphVectors(embed) if embed is not None else None
        """Embeddings of triples and entity names (``None`` without an embedder)."""
        self.settings = settings
        self._lock = threading.Lock()
        self.profiles = profiles
        self._background = background
        self.model = model
        """Chat model used by :meth:`catch_up` (``None``: the deterministic extractor)."""
        self._queued: set[str] = set()
        self._full: set[str] = set()
        self._added: dict[str, list[str]] = {}
        self._retired: dict[str, list[str]] = {}
        self._looked: set[str] = set()
        self._views: dict[str, GraphView] = {}

    @property
    def _repo(self) -> TripleRepository:
        return self.workspace.ledger.triples

    # -- reads -------------------------------------------------------------

    def entities(self, scope: str) -> Mapping[str, int]:
        """Live entity keys of ``scope`` -> their degree (number of current triples).

        From the scope's :class:`GraphView` once the background writer has built it,
        else from the ledger.
        """
        view = self.view(scope)
        return view.degrees if view is not None else self._repo.degrees(scope)

    def neighbourhood(
        self,
        scope: str,
        keys: Sequence[str],
        *,
        hops: int = 1,
        as_of: float | None = None,
        include_closed: bool = False,
        limit: int = 200,
    ) -> list[Triple]:
        """Triples whose subject or object key is in ``keys``, breadth first.

        Args:
            scope: Whose graph.
            keys: Entity keys (:func:`normalise_entity` forms).
            hops: 1: the triples of ``keys``; 2: also those of the entities they reach.
            as_of: The time (epoch seconds; ``None``: now, current triples).
            include_closed: Also triples whose memories were all superseded.
            limit: At most this many triples; each entity contributes at most
                ``settings.knowledge.max_per_entity`` per hop.
        """
        out: dict[str, Triple] = {}
        seen: set[str] = set()
        frontier = list(dict.fromkeys(k for k in keys if k))
        per_key = self.settings.max_per_entity
        for _ in range(max(1, hops)):
            if not frontier or len(out) >= limit:
                break
            seen.update(frontier)
            rows = self._repo.live(scope, frontier, as_of, include_closed, per_key)
            reached: dict[str, None] = {}
            for row in rows:
                if len(out) >= limit:
                    break
                if row.id in out:
                    continue
                out[row.id] = _triple(row)
                for key in (row.triple.subject_key, row.triple.object_key):
                    if key not in seen:
                        reached[key] = None
            frontier = list(reached)[:limit]
        return list(out.values())

    # -- extraction --------------------------------------------------------

    def user_names(self, scope: str) -> tuple[str, ...]:
        """Names of the scope's user from its profile (they resolve to ``user``)."""
        try:
            profile = self.profiles.read(scope, wait=False)
        except Exception:  # a broken PROFILE.md must not stop extraction
            logger.warning("profile of %s unreadable; extracting without user names", scope)
            return ()
        return tuple(n for n in (profile.name, profile.preferred_name) if n)

    def _drafts(
        self, texts: Sequence[str], user_names: Sequence[str]
    ) -> tuple[str, list[list[TripleDraft]]]:
        if self.model is not None:  # None when the model failed (it logs why)
            found = extract_triples_with_model(self.model, texts, user_names=user_names)
            if found is not None and len(found) == len(texts):
                return "model", [list(f) for f in found]
        return DETERMINISTIC, [extract_triples(t, user_names=user_names) for t in texts]

    def catch_up(
        self,
        scope: str,
        ids: Sequence[str] | None = None,
        *,
        found: list[ExtractedEntry] | None = None,
    ) -> int:
        """Extract every live memory of ``scope`` (of ``ids`` only, when given) not yet
        extracted from its text.

        Superseded versions are extracted too (their triples are closed). Each batch of
        ``settings.knowledge.batch_size`` memories is one ledger transaction. With
        :attr:`leases`, the extraction holds the scope's ``knowledge`` lease (another
        process extracting the scope is waited for, and what it did is not done again).

        Args:
            scope: Whose memories.
            ids: Only these memories (a write's own): the scan of the scope is skipped.
            found: What was extracted is appended here.

        Returns:
            How many memories were extracted.
        """
        if not self._unextracted(scope, ids):
            return 0
        with self.leases.held(KNOWLEDGE_JOB, scope) if self.leases else nullcontext():
            todo = self._unextracted(scope, ids)  # another process may have done them
            names = self.user_names(scope)
            ws = self.workspace
            done = 0
            size = self.settings.batch_size
            for start in range(0, len(todo), size):
                batch = todo[start : start + size]
                docs = ws.keyword.docs([entry_id for entry_id, _h in batch])
                present = [(i, h) for i, h in batch if i in docs]  # not indexed yet: next time
                if not present:
                    continue
                extractor, drafts = self._drafts([docs[i].text for i, _h in present], names)
                extracted = [
                    ExtractedEntry(
                        entry_id,
                        text_hash,
                        tuple(t for d in found if (t := _new_triple(d, names)) is not None),
                    )
                    for (entry_id, text_hash), found in zip(present, drafts, strict=True)
                ]
                with ws.ledger.transaction():
                    self._repo.record(scope, extracted, extractor=extractor, at=time.time())
                done += len(extracted)
                if found is not None:
                    found += extracted
            return done

    def _unextracted(self, scope: str, ids: Sequence[str] | None) -> list[tuple[str, str]]:
        if ids is not None:
            return self._repo.unextracted_of(scope, ids)
        return self._repo.unextracted(scope, 1_000_000)

    def prune(self, scope: str | None = None) -> int:
        """Delete support of deleted memories and triples left with none."""
        return self._repo.prune(scope)

    def schedule(
        self, scope: str, ids: Sequence[str] | None = None, *, retired: Sequence[str] = ()
    ) -> None:
        """Queue one coalesced update of ``scope``'s graph on the memory's background
        writer (nothing when ``settings.knowledge.extract`` is off).

        Args:
            scope: Whose graph.
            ids: The memories a write added (or edited in place): only they are
                extracted, and the view grows by their triples. ``None`` (a sync): the
                whole scope is caught up and pruned and its view read again.
            retired: The memories a write deleted, superseded or edited in place
                (with ``ids``): their support leaves the view, and a deleted one's
                rows the ledger, without reading the scope.
        """
        if not self.settings.extract:
            return
        with self._lock:
            if ids is None:
                self._full.add(scope)
            else:
                self._added.setdefault(scope, []).extend(ids)
                self._retired.setdefault(scope, []).extend(retired)
            if scope in self._queued:
                return
            self._queued.add(scope)
        self._background().submit(scope, lambda: self._scheduled(scope), defer=0.05)

    def schedule_behind(self, scopes: Sequence[str]) -> list[str]:
        """:meth:`schedule` a whole-scope update of each of ``scopes`` with memories not
        extracted yet (a process stopped before it extracted what it wrote, or died
        mid-extraction): the daily jobs' pass, so another process finishes the work.

        Returns:
            The scopes scheduled (none when ``settings.knowledge.extract`` is off).
        """
        if not self.settings.extract:
            return []
        behind = [scope for scope in scopes if self._repo.unextracted(scope, 1)]
        for scope in behind:
            self.schedule(scope)
        return behind

    def ensure(self, scope: str) -> None:
        """:meth:`schedule` once per scope and process, on the first look at its graph:
        memories written before (an older version, another process) get their triples.

        Not when this process has built the scope's view already: that first build read
        the whole scope (the ``view is None`` branch of the scheduled job), and a second
        one racing the searches would make their results depend on its timing (the
        rebuilt view orders the same triples as the ledger does)."""
        if scope not in self._looked:
            self._looked.add(scope)
            if scope not in self._views:
                self.schedule(scope)

    def _scheduled(self, scope: str) -> None:
        with self._lock:
            self._queued.discard(scope)
            full = scope in self._full
            self._full.discard(scope)
            added = self._added.pop(scope, [])
            retired = self._retired.pop(scope, [])
        view = self._views.get(scope)
        if full or view is None:
            self.prune(scope)
            self.catch_up(scope)
            view = self.refresh_view(scope)
            self.embed_pending(scope, view.all_triples())
            return
        supported = self._repo.supported_by(retired) if retired else []
        found: list[ExtractedEntry] = []
        self.catch_up(scope, added, found=found)
        new: list[Triple] = []
        if retired:
            self._repo.prune_entries(retired, [t for t, _s, _o in supported])
            view = view.without(set(retired), supported)
        if found:
            view, new = view.grown(scope, found)
        if retired or found:
            with self._lock:
                self._views[scope] = view
        if new:
            self.embed_pending(scope, new)

    def view(self, scope: str) -> GraphView | None:
        """The scope's current triples in memory (``None`` until the background writer
        has built it: the first look schedules that)."""
        self.ensure(scope)
        return self._views.get(scope)

    def refresh_view(self, scope: str) -> GraphView:
        """Build the scope's :class:`GraphView` from the ledger (background writer)."""
        view = GraphView.of([_triple(r) for r in self._repo.current(scope)], self._views.get(scope))
        with self._lock:
            self._views[scope] = view
        return view

    def embed_pending(self, scope: str, triples: Sequence[Triple]) -> int:
        """Embed those of ``triples`` and of their entity names not embedded yet (in
        :attr:`vectors`); the scheduled job runs it after each extraction.

        Returns:
            How many texts were embedded (0 without an embedder).
        """
        if self.vectors is None:
            return 0
        sentences = {
            t.id: triple_sentence(t.subject, t.predicate, t.object, t.negated) for t in triples
        }
        names: dict[str, str] = {}
        for t in triples:
            names.setdefault(t.subject_key, t.subject)
            names.setdefault(t.object_key, t.object)
        try:
            return self.vectors.refresh(scope, sentences.items(), names.items())
        except Exception:  # the embedder down: the graph stage uses word overlap
            logger.warning("embedding the knowledge graph of %s failed", scope, exc_info=True)
            return 0

    def rebuild(
        self, scope: str | None = None, *, progress: Callable[[int, int], object] | None = None
    ) -> int:
        """Forget the triples of ``scope`` (all scopes when ``None``) and extract again.

        Args:
            scope: One scope, or every scope with memories.
            progress: ``progress(done, total)`` per scope.

        Returns:
            How many memories were extracted.
        """
        scopes = [scope] if scope is not None else self.workspace.ledger.entries.scopes()
        self._repo.clear(scope)
        done = 0
        for n, s in enumerate(scopes, 1):
            done += self.catch_up(s)
            self.embed_pending(s, self.refresh_view(s).all_triples())
            if progress is not None:
                progress(n, len(scopes))
        return done


__all__ = ["DETERMINISTIC", "KNOWLEDGE_JOB", "GraphView", "KnowledgeGraph", "Triple"]
