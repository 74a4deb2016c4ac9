"""Shared harness of the retrieval benchmarks (``locomo.py``, ``memdaily.py``).

A dataset is a set of corpora (one scope each: the memories to store, each with an
external id such as a LoCoMo ``dia_id``) and questions (a scope, the question text,
the time it is asked, the external ids of its evidence). The harness

1. ingests every corpus through :meth:`langmem_ext.Memory.add_many` into a fresh
   workspace (one per ingest variant), embedding cache off, timed;
2. for every question, in the same loop so all methods see the same machine noise:
   times ``embed_query`` alone, then times a real ``SearchEngine.search`` of each
   *main* method (plain BM25, plain dense, RRF without stages, the full pipeline);
3. with ``--ablation``, fetches the engines' candidates once per question and
   re-ranks them with :func:`langmem_ext.retrieval.pipeline.rank` under each
   variant (a stage switched off, another fusion, other weights, a recall intent)
   — exactly what ``SearchEngine.search`` does after fetching; a consistency check
   confirms the re-ranked full pipeline equals the timed one;
4. prints Markdown tables (or JSON).

Metrics follow ``/work/shared/bench/README.md``: recall@1/5/10/20 (share of a
question's evidence in the top k, averaged over questions), MRR@20, hit@5 (any
evidence in the top 5), p50/p95 search latency; recall@3 and hit@3 too, since the
graph injects the top 3. Every search asks for k = 20 and
the smaller cut-offs are read from that list.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import shutil
import sys
import tempfile
import time
import weakref
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from langchain_core.embeddings import Embeddings

from langmem_ext import Memory
from langmem_ext.core.config import EmbeddingSettings, RetrievalSettings, Settings
from langmem_ext.embeddings.factory import E5SmallEmbeddings, UniversalSentenceEmbeddings
from langmem_ext.memory.recall.neighbours import IndexNeighbours
from langmem_ext.memory.recall.search import COVER_DEPTH, SearchEngine
from langmem_ext.retrieval import scoring
from langmem_ext.retrieval.candidate import Candidate
from langmem_ext.retrieval.compound import cover_questions, union_candidates
from langmem_ext.retrieval.intent import RecallIntent, detect_recall_intent
from langmem_ext.retrieval.pipeline import PipelineOptions, rank
from langmem_ext.retrieval.repair import focus_of
from langmem_ext.retrieval.stages import Pipeline, Pool
from langmem_ext.retrieval.stages.marks import Graph, GraphLinks
from langmem_ext.workspace.markdown import normalise_text

K_MAX = 20
RECALL_KS = (1, 3, 5, 10, 20)
EMBEDDERS = ("use", "e5")
ALL_OFF = PipelineOptions(
    recency=False, importance=False, length_norm=False, time_decay=False,
    thresholds=False, noise=False, mmr=False, context=False, person=False,
)  # fmt: skip
CATEGORY_METRICS = ("R@1", "R@3", "R@10", "hit@3", "hit@5")
"""Reported per category (the top 3 are what the graph injects)."""
CONTEXT_SEP = " | "
"""Joins the previous turn and the turn in the chunking variants."""


# -- data model --------------------------------------------------------------


@dataclass(frozen=True)
class Item:
    """One memory to store.

    Attributes:
        ext_id: The dataset's id (LoCoMo ``dia_id``, MemDaily ``<tid>/<mid>``).
        text: The memory text.
        created_at: Epoch seconds (naive local time, as ``Memory`` reads it).
        context: The previous turn / message, for the chunking variants.
    """

    ext_id: str
    text: str
    created_at: float
    context: str | None = None


@dataclass(frozen=True)
class Question:
    """One retrieval question."""

    qid: str
    scope: str
    text: str
    now: float
    evidence: frozenset[str]
    category: str


@dataclass
class Dataset:
    """Corpora by scope, and questions."""

    name: str
    corpora: dict[str, list[Item]]
    questions: list[Question]
    notes: list[str] = field(default_factory=list)

    def subset(self, limit: int | None) -> Dataset:
        """Every n-th question so that ``limit`` are left, spread over all scopes.

        Scopes without a selected question are not ingested.
        """
        if not limit or limit >= len(self.questions):
            return self
        step = len(self.questions) / limit
        qs = [self.questions[int(i * step)] for i in range(limit)]
        scopes = {q.scope for q in qs}
        corpora = {s: items for s, items in self.corpora.items() if s in scopes}
        note = (
            f"subset: {limit} of {len(self.questions)} questions (every "
            f"{step:.2f}-th), {len(corpora)} of {len(self.corpora)} scopes ingested"
        )
        return Dataset(self.name, corpora, qs, [*self.notes, note])


# -- methods and variants ----------------------------------------------------


@dataclass(frozen=True)
class Variant:
    """One way of ranking.

    Attributes:
        name: Row label.
        mode: Engines used: ``hybrid``, ``vector`` or ``fts``.
        options: Pipeline stages.
        retrieval: Overrides of ``RetrievalSettings`` (fusion, weights, ...).
        intent: Pass the recall intent detected in the question at its ``now``, as
            ``Memory.search`` does by default (``intent="auto"``).
        ingest: ``turn`` (the metric's setup), ``ctx-embed`` (the turn embedded with
            the previous turn as context, indexed for BM25 alone) or ``ctx-text``
            (the stored text is ``previous | turn``).
        k: Results asked for; ``pool`` is then ``max(4 k, 20)`` as in
            ``SearchEngine.search`` (k = 5 is ``Memory.search``'s default).
        resort: Re-sort ``rank()``'s output by score, as the search pipeline's
            ``order`` stage does (this undoes MMR's demotion order); ``False``
            keeps ``rank()``'s order.
        note: What it tests.
    """

    name: str
    mode: str = "hybrid"
    options: PipelineOptions = field(default_factory=PipelineOptions)
    retrieval: tuple[tuple[str, Any], ...] = ()
    intent: bool = False
    ingest: str = "turn"
    k: int = K_MAX
    resort: bool = True
    note: str = ""


def _off(**kw: bool) -> PipelineOptions:
    return PipelineOptions(**kw)


PLAIN = (("question_parts", False), ("context_vector_weight", 0.0), ("graph_stage", False))
"""Search the message as it is (no self-repair focus, no compound split), score
vector hits by their own vectors (no contextual vectors), no graph stage: the plain
baselines."""
EQUAL = (("vector_weight", 0.5), ("bm25_weight", 0.5), *PLAIN)
RRF = (("fusion", "rrf"),)
RRF_EQUAL = (*RRF, *EQUAL)
MAIN_METHODS: tuple[Variant, ...] = (
    Variant("BM25 (plain)", "fts", ALL_OFF, PLAIN, note="FTS5 BM25 alone, no stages"),
    Variant("dense (plain)", "vector", ALL_OFF, PLAIN, note="Chroma cosine alone, no stages"),
    Variant("RRF (equal weights, k=60), no stages", "hybrid", ALL_OFF, RRF_EQUAL,
            note="plain reciprocal-rank fusion of the two, nothing else"),
    Variant("hybrid pipeline, no graph stage", intent=True,
            retrieval=(("graph_stage", False),),
            note="the default without the knowledge graph's stage"),
    Variant("hybrid pipeline (default)", intent=True,
            note="what Memory.search runs (default settings, intent='auto')"),
)  # fmt: skip


def ablation_variants(chunking: Sequence[str]) -> list[Variant]:
    """The ablation rows: each stage off, fusions, weights, context settings, chunking.

    Rows that run the whole pipeline pass the recall intent, as ``Memory.search``
    does; the "no stages" rows do not.
    """
    weights_70_30 = (("vector_weight", 0.7), ("bm25_weight", 0.3))
    weights_70_30_plain = (*weights_70_30, *PLAIN)

    def full(name: str, **kw: Any) -> Variant:
        return Variant(name, intent=True, **kw)

    out = [
        full("full pipeline (default)", note="reference row"),
        Variant("- recall intent", note="SearchEngine.search without a recall intent"),
        full("- context (neighbours)", options=_off(context=False)),
        full("- recency boost", options=_off(recency=False)),
        full("- importance weight", options=_off(importance=False)),
        full("- length norm", options=_off(length_norm=False)),
        full("- time decay", options=_off(time_decay=False)),
        full("- thresholds (min / hard min)", options=_off(thresholds=False)),
        full("- noise filter", options=_off(noise=False)),
        full("- MMR demotion", options=_off(mmr=False)),
        full("MMR to the end (demotion factor 0)", retrieval=(("mmr_demotion", 0.0),)),
        full("MMR demotion factor 0.8", retrieval=(("mmr_demotion", 0.8),)),
        full("- question parts (self-repair focus, compound split)",
             retrieval=(("question_parts", False),),
             note="the whole message searched as one query"),
        full("- contextual vectors", retrieval=(("context_vector_weight", 0.0),),
             note="vector hits scored by their own vectors only"),
        full("contextual vector weight 0.5", retrieval=(("context_vector_weight", 0.5),)),
        full("MMR order kept (no final re-sort)", resort=False,
             note="rank()'s own order; the order stage sorts by score"),
        Variant("no stages: weighted 0.4 / 0.6 (default weights)", options=ALL_OFF,
                retrieval=PLAIN),
        Variant("no stages: weighted 0.7 / 0.3", options=ALL_OFF,
                retrieval=weights_70_30_plain),
        Variant("no stages: weighted 0.5 / 0.5", options=ALL_OFF, retrieval=EQUAL),
        Variant("no stages: RRF 0.5 / 0.5", options=ALL_OFF, retrieval=RRF_EQUAL),
        Variant("only context: weighted 0.4 / 0.6", retrieval=PLAIN, options=_off(
            recency=False, importance=False, length_norm=False, time_decay=False,
            thresholds=False, noise=False, mmr=False)),
        full("all stages: weighted 0.7 / 0.3", retrieval=weights_70_30),
        full("all stages: weighted 0.5 / 0.5", retrieval=EQUAL),
        full("all stages: RRF 0.5 / 0.5", retrieval=RRF_EQUAL),
        full("context window 1", retrieval=(("context_window", 1),)),
        full("context window 3", retrieval=(("context_window", 3),)),
        full("context window 10", retrieval=(("context_window", 10),)),
        full("context shares 0.25 / 0.25", retrieval=(
            ("context_prev_weight", 0.25), ("context_next_weight", 0.25))),
        full("context shares 0.5 / 0.3", retrieval=(
            ("context_prev_weight", 0.5), ("context_next_weight", 0.3))),
        full("context decay 0.7", retrieval=(("context_decay", 0.7),)),
        Variant("k=5 call: BM25 (plain)", "fts", ALL_OFF, PLAIN, k=5,
                note="k=5, pool 20: Memory.search's default; R@10/R@20 are of 5 hits"),
        full("k=5 call: full pipeline (default)", k=5),
    ]  # fmt: skip
    for kind in chunking:
        out += [
            Variant(f"{kind}: dense (plain)", "vector", ALL_OFF, PLAIN, ingest=kind),
            Variant(f"{kind}: BM25 (plain)", "fts", ALL_OFF, PLAIN, ingest=kind),
            Variant(f"{kind}: RRF 0.5 / 0.5, no stages", options=ALL_OFF, retrieval=RRF_EQUAL,
                    ingest=kind),
            Variant(f"{kind}: full pipeline", intent=True, ingest=kind),
            Variant(f"{kind}: full pipeline - context", options=_off(context=False),
                    intent=True, ingest=kind),
        ]  # fmt: skip
    return out


def retrieval_settings(
    base: RetrievalSettings, overrides: Iterable[tuple[str, Any]]
) -> RetrievalSettings:
    """``base`` with ``overrides`` applied."""
    upd = dict(overrides)
    return base.model_copy(update=upd) if upd else base


# -- embedders ---------------------------------------------------------------


def make_embedder(name: str) -> Embeddings:
    """The raw (uncached) embedder ``use`` or ``e5``."""
    if name == "use":
        return UniversalSentenceEmbeddings()
    if name == "e5":
        return E5SmallEmbeddings()
    raise ValueError(f"unknown embedder {name!r}")


class TimedEmbeddings(Embeddings):
    """Adds up the time spent in ``embed_documents`` (to split ingest time)."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self.model_name = getattr(inner, "model_name", type(inner).__name__)
        self.seconds = 0.0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed documents, timed."""
        t0 = time.perf_counter()
        try:
            return self.inner.embed_documents(texts)
        finally:
            self.seconds += time.perf_counter() - t0

    def embed_query(self, text: str) -> list[float]:
        """Embed a query (not timed here)."""
        return self.inner.embed_query(text)


class QueryMemo(Embeddings):
    """Serves query vectors computed (and timed) once; passes documents through."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self.model_name = getattr(inner, "model_name", type(inner).__name__)
        self.memo: dict[str, list[float]] = {}

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed documents with the inner embedder."""
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        """The memoised query vector (computed now if new)."""
        vec = self.memo.get(text)
        if vec is None:
            vec = self.memo[text] = self.inner.embed_query(text)
        return vec


class ContextEmbeddings(Embeddings):
    """Embeds a stored turn as ``previous | turn``; the index keeps the turn alone.

    Args:
        inner: The embedder.
        contexts: For each stored text, its contexts in ingest order (a text that
            occurs several times gets each occurrence's own context).
    """

    def __init__(self, inner: Embeddings, contexts: dict[str, deque[str | None]]) -> None:
        self.inner = inner
        self.model_name = getattr(inner, "model_name", type(inner).__name__)
        self.contexts = contexts

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed each text with its context prepended."""
        out: list[str] = []
        for t in texts:
            queue = self.contexts.get(t)
            ctx = queue.popleft() if queue else None
            out.append(f"{ctx}{CONTEXT_SEP}{t}" if ctx else t)
        return self.inner.embed_documents(out)

    def embed_query(self, text: str) -> list[float]:
        """Embed a query as is."""
        return self.inner.embed_query(text)


# -- engines -----------------------------------------------------------------


DatabaseFor = Callable[[str], "str | None"]
"""The ``database_url`` of a fresh workspace, given a name for it (``None``: embedded)."""


def _embedded(name: str) -> str | None:
    return None


@contextmanager
def engine_databases(engine: str, database_url: str | None) -> Iterator[DatabaseFor]:
    """Where each fresh workspace of a run keeps its data.

    ``engine="embedded"``: the workspace folder (SQLite, FTS5, embedded Chroma).
    ``engine="postgres"``: a new database per workspace on the server of
    ``database_url`` (its admin URL), or on a local server started for the run and
    stopped at the end when no URL is given.

    Args:
        engine: ``"embedded"`` or ``"postgres"``.
        database_url: A PostgreSQL URL with the right to create databases, or ``None``.

    Yields:
        A function from a workspace name to its ``database_url``.
    """
    if engine == "embedded":
        yield _embedded
        return
    from langmem_ext.workspace.postgres.local_server import (
        create_database,
        drop_database,
        start_local_server,
    )

    server = None
    admin = database_url
    if admin is None:
        server = start_local_server()
        admin = server.url
    created: list[str] = []

    def database_for(name: str) -> str:
        db = "bench_" + "".join(c if c.isalnum() else "_" for c in name.lower())
        created.append(db)
        return create_database(admin, db)

    try:
        yield database_for
    finally:
        if server is not None:
            server.stop()
        else:
            for db in created:
                drop_database(admin, db)


# -- ingest ------------------------------------------------------------------


@dataclass
class Store:
    """A workspace filled with one dataset under one ingest variant."""

    kind: str
    memory: Memory
    ext_of: dict[str, str]
    index_seconds: float
    embed_seconds: float
    n_items: int
    root: Path


def _ingest_text(item: Item, kind: str) -> str:
    if kind == "ctx-text" and item.context:
        return f"{item.context}{CONTEXT_SEP}{item.text}"
    return item.text


def build_store(
    dataset: Dataset,
    embedder: Embeddings,
    provider: str,
    kind: str,
    workdir: Path,
    log: Callable[[str], None],
    database_for: DatabaseFor = _embedded,
) -> Store:
    """Ingest every corpus of ``dataset`` into a fresh workspace, timed.

    The time covers ``add_many`` end to end (Markdown, ledger, keyword index,
    embedding, vector index), with the embedding cache off. ``database_for`` names
    the workspace's database (see :func:`engine_databases`).
    """
    root = workdir / f"ws-{provider}-{kind}"
    if root.exists():
        shutil.rmtree(root)
    settings = Settings(
        workspace=root,
        embeddings=EmbeddingSettings(provider=provider, cache=False),  # type: ignore[arg-type]
        database_url=database_for(f"{provider}-{kind}"),
    )
    emb = embedder
    if kind == "ctx-embed":
        ctx: dict[str, deque[str | None]] = defaultdict(deque)
        for items in dataset.corpora.values():
            for it in items:
                ctx[normalise_text(it.text)].append(it.context)
        emb = ContextEmbeddings(embedder, ctx)
    timed = TimedEmbeddings(emb)
    memory = Memory(root, settings=settings, embeddings=timed)
    ext_of: dict[str, str] = {}
    n = 0
    t0 = time.perf_counter()
    for scope, items in dataset.corpora.items():
        ids = memory.add_many(
            [_ingest_text(it, kind) for it in items],
            scope=scope,
            created_at=[it.created_at for it in items],
            embed=True,
        )
        for it, entry_id in zip(items, ids, strict=True):
            ext_of[entry_id] = it.ext_id
        n += len(items)
    seconds = time.perf_counter() - t0
    log(f"  ingest {kind}: {n} memories in {seconds:.1f} s ({n / max(seconds, 1e-9):.0f}/s), "
        f"embedding {timed.seconds:.1f} s")  # fmt: skip
    t1 = time.perf_counter()
    memory.background.wait()  # the knowledge graph's triples, extracted in the background
    log(f"  background (triples) done {time.perf_counter() - t1:.1f} s after ingest")
    return Store(kind, memory, ext_of, seconds, timed.seconds, n, root)


# -- metrics -----------------------------------------------------------------


def question_metrics(ranked: Sequence[str], evidence: frozenset[str]) -> dict[str, float]:
    """recall@k, MRR@20, hit@3 and hit@5 of one ranked list of external ids."""
    seen: list[str] = []
    for r in ranked:
        if r not in seen:
            seen.append(r)
    top = seen[:K_MAX]
    out = {f"R@{k}": len(evidence & set(top[:k])) / len(evidence) for k in RECALL_KS}
    rr = next((1.0 / (i + 1) for i, r in enumerate(top) if r in evidence), 0.0)
    out["MRR@20"] = rr
    out["hit@3"] = 1.0 if evidence & set(top[:3]) else 0.0
    out["hit@5"] = 1.0 if evidence & set(top[:5]) else 0.0
    return out


@dataclass
class Tally:
    """Per-question metrics and latencies of one method."""

    per_q: list[dict[str, float]] = field(default_factory=list)
    cats: list[str] = field(default_factory=list)
    latency_ms: list[float] = field(default_factory=list)
    returned: list[int] = field(default_factory=list)

    def add(self, m: dict[str, float], cat: str, n_returned: int, ms: float | None = None) -> None:
        """Record one question."""
        self.per_q.append(m)
        self.cats.append(cat)
        self.returned.append(n_returned)
        if ms is not None:
            self.latency_ms.append(ms)

    def summary(self) -> dict[str, Any]:
        """Means, per-category hit@5 / recall@10, latency percentiles."""
        keys = [f"R@{k}" for k in RECALL_KS] + ["MRR@20", "hit@3", "hit@5"]
        out: dict[str, Any] = {k: float(np.mean([q[k] for q in self.per_q])) for k in keys}
        out["n"] = len(self.per_q)
        out["mean_returned"] = float(np.mean(self.returned)) if self.returned else 0.0
        by_cat: dict[str, list[dict[str, float]]] = defaultdict(list)
        for q, c in zip(self.per_q, self.cats, strict=True):
            by_cat[c].append(q)
        out["by_category"] = {
            c: {"n": len(qs), **{m: float(np.mean([q[m] for q in qs])) for m in CATEGORY_METRICS}}
            for c, qs in sorted(by_cat.items())
        }
        if self.latency_ms:
            out["p50_ms"] = float(np.percentile(self.latency_ms, 50))
            out["p95_ms"] = float(np.percentile(self.latency_ms, 95))
        return out


def percentiles(values: Sequence[float]) -> dict[str, float]:
    """p50 / p95 / mean of a list of milliseconds."""
    return {
        "p50_ms": float(np.percentile(values, 50)),
        "p95_ms": float(np.percentile(values, 95)),
        "mean_ms": float(np.mean(values)),
    }


# -- the run -----------------------------------------------------------------


def _intent(q: Question, parts: bool = True) -> RecallIntent | None:
    """The intent ``Memory.search`` detects (in the self-repair focus when ``parts``)."""
    return detect_recall_intent(
        focus_of(q.text) if parts else q.text, datetime.fromtimestamp(q.now)
    )


def embed_like_search(engine: SearchEngine, embedder: Embeddings, text: str) -> dict[str, Any]:
    """Embed the texts a search of ``text`` embeds (``SearchEngine.query_texts``), as it
    does: one after another. The wall time of this call is the query-embedding time
    the latency floor compares with."""
    return {t: embedder.embed_query(t) for t in engine.query_texts(text)}


Pair = tuple[list[Candidate], list[Candidate]]


def _candidates(engine: SearchEngine, q: Question, pool: int, text: str | None = None) -> Pair:
    """What ``SearchEngine.search`` fetches before ranking (hybrid mode) for ``text``,
    with the graph stage's links when the engine has a knowledge graph."""
    t = q.text if text is None else text
    qvecs: list[Any] = []
    vector = engine._vectors([t], q.scope, pool, qvecs=qvecs)[0]
    keyword = engine._keyword(t, q.scope, pool, fts=True)
    return _linked(engine, q, t, qvecs, vector, keyword), keyword


def _linked(
    engine: SearchEngine,
    q: Question,
    text: str,
    qvecs: list[Any],
    vector: list[Candidate],
    keyword: list[Candidate],
) -> list[Candidate]:
    """The graph stages as ``SearchEngine.search`` runs them (current versions)."""
    if engine.knowledge is None or not engine.settings.retrieval.graph_stage:
        return vector
    ctx = engine.query_context([text], scope=q.scope, now=q.now)
    if ctx is None:
        return vector
    pool = Pool(vector=vector, keyword=keyword, query_vectors=list(qvecs))
    out = Pipeline([GraphLinks(), Graph()]).run(pool, ctx).vector
    return vector if out is None else out


class CandidateCache:
    """One question's fetched candidates, per ingest variant, query text and the
    contextual-vector weight (the one setting that changes what is fetched)."""

    # Per fetcher (weakly held: the fetchers of one embedder's run go away with it).
    _engines: ClassVar[weakref.WeakKeyDictionary[SearchEngine, dict[float, SearchEngine]]] = (
        weakref.WeakKeyDictionary()
    )

    def __init__(self, fetchers: dict[str, SearchEngine], q: Question, pool: int) -> None:
        self.fetchers, self.q, self.pool = fetchers, q, pool
        self.memo: dict[tuple[str, str, float, int], Pair] = {}
        self.many: dict[
            tuple[str, str, float, int], tuple[list[list[Candidate]], list[list[Candidate]]]
        ] = {}
        self.qvecs: dict[tuple[str, str, float, int], list[Any]] = {}

    def engine(self, ingest: str, weight: float) -> SearchEngine:
        """The fetcher of ``ingest`` scoring vector hits with contextual ``weight``."""
        base = self.fetchers[ingest]
        if weight == base.settings.retrieval.context_vector_weight:
            return base
        variants = self._engines.setdefault(base, {})
        if weight not in variants:
            rs = base.settings.retrieval.model_copy(update={"context_vector_weight": weight})
            settings = base.settings.model_copy(update={"retrieval": rs})
            variants[weight] = SearchEngine(base.workspace, base.embeddings, settings)
            variants[weight].knowledge = base.knowledge
        return variants[weight]

    def get(self, ingest: str, text: str, weight: float, pool: int | None = None) -> Pair:
        """Candidates of ``text`` in the ``ingest`` workspace (fetched once per pool).

        ``pool`` (default: the cache's) is what each engine is asked for: a smaller
        pool is not a prefix of a larger one once contextual vectors re-sort the
        vector hits, so a search with a smaller ``k`` is fetched with its own.
        """
        pool = self.pool if pool is None else pool
        key = (ingest, text, weight, pool)
        if key not in self.memo:
            engine = self.engine(ingest, weight)
            self.memo[key] = _candidates(engine, self.q, pool, text)
        return self.memo[key]

    def get_many(
        self, ingest: str, texts: list[str], weight: float, pool: int
    ) -> tuple[list[list[Candidate]], list[list[Candidate]]]:
        """Candidates of several texts as a compound search fetches them: the vector
        side in one pass (``SearchEngine._vectors``: one matrix product for all
        texts, whose float rounding can differ from one product per text)."""
        key = (ingest, "\x00".join(texts), weight, pool)
        if key not in self.many:
            engine = self.engine(ingest, weight)
            qvecs: list[Any] = []
            vectors = engine._vectors(texts, self.q.scope, pool, qvecs=qvecs)
            keywords = [engine._keyword(t, self.q.scope, pool, fts=True) for t in texts]
            self.many[key] = (vectors, keywords)
            self.qvecs[key] = qvecs
        return self.many[key]


@contextmanager
def memoised_noise_check() -> Iterator[None]:
    """Memoise the (pure) noise check of the scoring stages while re-ranking variants.

    Same results, far less time when ~40 variants re-rank the same candidates; the
    timed searches never run under it.
    """
    original = scoring.is_noise
    scoring.is_noise = functools.lru_cache(maxsize=1 << 16)(original)  # type: ignore[assignment]
    try:
        yield
    finally:
        scoring.is_noise = original  # type: ignore[assignment]


def _rank_text(
    v: Variant,
    cands: Pair,
    q: Question,
    rs: RetrievalSettings,
    engine: SearchEngine,
    k: int | None = None,
    extra: int = 0,
    query: str | None = None,
) -> list[Candidate]:
    k = v.k if k is None else k
    vector, keyword = cands
    # SearchEngine.search passes an empty list (not None) for an engine it did not run.
    vec = vector if v.mode in ("hybrid", "vector") else []
    kw = keyword if v.mode in ("hybrid", "fts") else []
    ranked = rank(
        vec,
        kw,
        k=k,
        settings=rs,
        now=q.now,
        options=v.options,
        intent=_intent(q, rs.question_parts) if v.intent else None,
        context=IndexNeighbours(engine.workspace.keyword, q.scope),
        cosine_baseline=engine.cosine_baseline,
        extra=extra,
        query=query,
    )
    if v.resort and not extra:  # see _resort
        _resort(ranked)
    return ranked


def _resort(ranked: list[Candidate]) -> None:
    """The search pipeline's ``order`` stage: by score rounded to 6 places (tiers
    aside)."""
    ranked.sort(key=lambda c: -round(float(c.score), 6))


def _ranked_for(
    v: Variant,
    cache: CandidateCache,
    q: Question,
    base: RetrievalSettings,
) -> list[Candidate]:
    """Re-rank as ``SearchEngine.search`` would: one ranking over every query text's
    candidates (a compound message: the whole message and each question, sharing
    the pool of k), then a hit for every question."""
    rs = retrieval_settings(base, v.retrieval)
    engine = cache.fetchers[v.ingest]
    texts = engine.query_texts(q.text, question_parts=rs.question_parts)
    if len(texts) == 1:
        pool = max(v.k * rs.candidate_multiplier, 20)
        cands1 = cache.get(v.ingest, texts[0], rs.context_vector_weight, pool)
        return _rank_text(v, cands1, q, rs, engine, query=texts[0])
    pool = max(-(-v.k // len(texts)) * rs.candidate_multiplier, 20)
    vectors, keywords = cache.get_many(v.ingest, texts, rs.context_vector_weight, pool)
    vector, keyword = union_candidates(vectors, keywords)
    qvecs = cache.qvecs[(v.ingest, "\x00".join(texts), rs.context_vector_weight, pool)]
    if vector is not None and rs.graph_stage:
        vector = _linked(cache.engine(v.ingest, rs.context_vector_weight), q, texts[0], qvecs,
                         vector, keyword or [])  # fmt: skip
    cands = (vector or [], keyword or [])
    ranked = _rank_text(v, cands, q, rs, engine, extra=COVER_DEPTH, query=texts[0])  # not re-sorted
    covered = cover_questions(ranked, v.k, len(texts) - 1)
    if v.resort:
        _resort(covered)
    return covered


def run_embedder(
    dataset: Dataset,
    provider: str,
    *,
    ablation: bool,
    chunking: Sequence[str],
    workdir: Path,
    log: Callable[[str], None],
    database_for: DatabaseFor = _embedded,
) -> dict[str, Any]:
    """Ingest and evaluate ``dataset`` with one embedder; returns the results."""
    raw = make_embedder(provider)
    raw.embed_query("warm up")  # load the model outside every timing
    memo = QueryMemo(raw)
    kinds = ["turn", *([k for k in chunking] if ablation else [])]
    stores = {k: build_store(dataset, raw, provider, k, workdir, log, database_for) for k in kinds}
    base_settings = stores["turn"].memory.settings
    rs = base_settings.retrieval
    pool = max(K_MAX * rs.candidate_multiplier, 20)

    timed_engines = {  # the graph stage reads the memory's knowledge graph
        v.name: SearchEngine(
            stores["turn"].memory.workspace,
            raw,
            base_settings.model_copy(update={"retrieval": retrieval_settings(rs, v.retrieval)}),
            knowledge=stores["turn"].memory.knowledge,
        )
        for v in MAIN_METHODS
    }
    fetchers = {
        k: SearchEngine(s.memory.workspace, memo, base_settings, knowledge=s.memory.knowledge)
        for k, s in stores.items()
    }
    variants = ablation_variants(chunking) if ablation else []

    # warm every scope's collection and FTS pages outside the timings
    for scope in dataset.corpora:
        for v in MAIN_METHODS:
            timed_engines[v.name].search(
                "warm up", scope=scope, k=K_MAX, mode=v.mode, options=v.options
            )
        for f in fetchers.values():
            f.search("warm up", scope=scope, k=K_MAX)

    embed_ms: list[float] = []
    by_message: dict[str, tuple[list[float], list[float]]] = {
        "single question": ([], []), "several questions": ([], [])
    }  # fmt: skip
    main = {v.name: Tally() for v in MAIN_METHODS}
    tops: dict[str, list[tuple[str, dict[str, float]]]] = {v.name: [] for v in MAIN_METHODS}
    abl = {v.name: Tally() for v in variants}
    mismatches = 0
    t_start = time.perf_counter()
    for i, q in enumerate(dataset.questions):
        # every query embedding the default search makes (compound messages: several)
        default_engine = timed_engines[MAIN_METHODS[-1].name]
        t0 = time.perf_counter()
        memo.memo.update(embed_like_search(default_engine, raw, q.text))
        embed_ms.append((time.perf_counter() - t0) * 1000)
        for text in dict.fromkeys(
            [q.text, *default_engine.query_texts(q.text, question_parts=False)]
        ):
            if text not in memo.memo:  # for the rows without question parts
                memo.memo[text] = raw.embed_query(text)
        kind = (
            "single question"
            if len(default_engine.query_texts(q.text)) <= 1
            else "several questions"
        )
        by_message[kind][1].append(embed_ms[-1])
        ext_of = stores["turn"].ext_of
        full_ids: list[str] = []
        for v in MAIN_METHODS:
            eng = timed_engines[v.name]
            t0 = time.perf_counter()
            hits = eng.search(  # the intent is detected inside the timing, as Memory.search does
                q.text,
                scope=q.scope,
                k=K_MAX,
                mode=v.mode,
                options=v.options,
                now=q.now,
                intent=_intent(q, timed_engines[v.name].settings.retrieval.question_parts)
                if v.intent
                else None,
            )
            ms = (time.perf_counter() - t0) * 1000
            ranked = [ext_of[h.id] for h in hits]
            met = question_metrics(ranked, q.evidence)
            main[v.name].add(met, q.category, len(hits), ms)
            tops[v.name].append((q.category, met))
            if v.name == MAIN_METHODS[-1].name:
                full_ids = [h.id for h in hits]
                by_message[kind][0].append(ms)
        if variants:
            cache = CandidateCache(fetchers, q, pool)
            with memoised_noise_check():
                ablated = [(v, _ranked_for(v, cache, q, rs)) for v in variants]
            for v, got in ablated:
                ranked = [stores[v.ingest].ext_of[c.id] for c in got]
                abl[v.name].add(question_metrics(ranked, q.evidence), q.category, len(got))
                if v.name == variants[0].name and [c.id for c in got] != full_ids:
                    mismatches += 1
        if (i + 1) % 100 == 0 or i + 1 == len(dataset.questions):
            el = time.perf_counter() - t_start
            log(f"  {provider}: {i + 1}/{len(dataset.questions)} questions, {el:.0f} s")
    for s in stores.values():
        s.memory.close()
    result: dict[str, Any] = {
        "embedder": provider,
        "model": getattr(raw, "model_name", provider),
        "memories": stores["turn"].n_items,
        "questions": len(dataset.questions),
        "index_seconds": {k: s.index_seconds for k, s in stores.items()},
        "embed_seconds": {k: s.embed_seconds for k, s in stores.items()},
        "query_embedding": percentiles(embed_ms),
        "methods": {name: t.summary() for name, t in main.items()},
        "paired": {m: paired(tops, m) for m in PAIRED_METRICS},
        "latency_by_message": {
            kind: {"n": len(search), "search": percentiles(search), "embedding": percentiles(emb)}
            for kind, (search, emb) in by_message.items()
            if search
        },
    }
    if variants:
        result["ablation"] = {name: t.summary() for name, t in abl.items()}
        result["ablation_notes"] = {v.name: v.note for v in variants if v.note}
        result["ablation_consistency_mismatches"] = mismatches
    return result


def sign_test_p(wins: int, losses: int) -> float:
    """Two-sided exact sign test: how likely a split at least this uneven is by chance
    when either method is as likely to win each question it disagrees on."""
    n = wins + losses
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(wins, losses) + 1)) / 2**n
    return min(1.0, 2 * tail)


PAIRED_METRICS = ("hit@3", "hit@5")
"""Compared question by question between the pipeline and each baseline."""


def paired(
    tops: dict[str, list[tuple[str, dict[str, float]]]], metric: str
) -> dict[str, dict[str, Any]]:
    """The default pipeline against each other method, question by question.

    For each method and category: the questions where only the pipeline has a hit
    (``metric``, e.g. ``hit@3``: a gold memory in its top 3) (``wins``), those where
    only the other method has one (``losses``) and the sign test's p. A floor missed
    by a split with a large p is within what these questions can tell.
    """
    ref = tops[MAIN_METHODS[-1].name]
    out: dict[str, dict[str, Any]] = {}
    for name, got in tops.items():
        if name == MAIN_METHODS[-1].name:
            continue
        by_cat: dict[str, list[int]] = {}
        for (cat, m_ref), (_, m_got) in zip(ref, got, strict=True):
            mine, theirs = m_ref[metric] > 0, m_got[metric] > 0
            for key in (cat, "all"):
                tally = by_cat.setdefault(key, [0, 0])
                tally[0] += mine and not theirs
                tally[1] += theirs and not mine
        out[name] = {
            c: {"wins": w, "losses": lo, "p": sign_test_p(w, lo)} for c, (w, lo) in by_cat.items()
        }
    return out


# -- output ------------------------------------------------------------------


def _f(x: float) -> str:
    return f"{x:.3f}"


def _ms(x: float | None) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.1f}"


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def _metric_rows(methods: dict[str, dict[str, Any]], latency: bool) -> list[list[str]]:
    rows = []
    for name, s in methods.items():
        row = [name] + [_f(s[f"R@{k}"]) for k in RECALL_KS]
        row += [_f(s["MRR@20"]), _f(s["hit@3"]), _f(s["hit@5"])]
        if latency:
            row += [_ms(s.get("p50_ms")), _ms(s.get("p95_ms"))]
        rows.append(row)
    return rows


def render(results: dict[str, Any]) -> str:
    """All tables of a run as Markdown."""
    out: list[str] = []
    ds = results["dataset"]
    engine = results.get("engine", "embedded")
    out.append(f"## {ds} retrieval — {results['date']}, {results['machine']}, {engine} engine\n")
    out.append(f"Command: `{results['command']}`\n")
    for note in results.get("notes", []):
        out.append(f"- {note}")
    out.append("")
    for r in results["runs"]:
        out.append(f"### Embedder `{r['embedder']}` ({r['model']})\n")
        qe = r["query_embedding"]
        idx = ", ".join(
            f"{k}: {v:.1f} s (embedding {r['embed_seconds'][k]:.1f} s)"
            for k, v in r["index_seconds"].items()
        )
        out.append(
            f"{r['memories']} memories, {r['questions']} questions. Indexing "
            f"(add_many end to end, cache off): {idx}; "
            f"{r['memories'] / r['index_seconds']['turn']:.0f} memories/s. "
            f"Query embedding alone (every text the default search embeds: a compound "
            f"message embeds each question too): p50 {qe['p50_ms']:.1f} ms, "
            f"p95 {qe['p95_ms']:.1f} ms.\n"
        )
        header = [
            "method",
            "R@1",
            "R@3",
            "R@5",
            "R@10",
            "R@20",
            "MRR@20",
            "hit@3",
            "hit@5",
            "p50 ms",
            "p95 ms",
        ]
        out.append(markdown_table(header, _metric_rows(r["methods"], latency=True)))
        out.append("")
        cats = sorted({c for s in r["methods"].values() for c in s["by_category"]})
        head = ["method"] + [
            f"{c} (n={next(iter(r['methods'].values()))['by_category'][c]['n']})" for c in cats
        ]
        out.append(" / ".join(CATEGORY_METRICS) + " per category:\n")
        rows = [
            [name]
            + [" / ".join(f"{s['by_category'][c][m]:.3f}" for m in CATEGORY_METRICS) for c in cats]
            for name, s in r["methods"].items()
        ]
        out.append(markdown_table(head, rows))
        out.append("")
        for metric, table in r.get("paired", {}).items():
            out.append(
                f"Paired {metric}, the default pipeline against each method: questions only "
                "the pipeline hits / only the method hits (two-sided sign test p):\n"
            )
            keys = ["all", *cats]
            rows = [
                [name]
                + [f"{d[c]['wins']} / {d[c]['losses']} (p {d[c]['p']:.2f})" for c in keys if c in d]
                for name, d in table.items()
            ]
            out.append(markdown_table(["against", *keys], rows))
            out.append("")
        if "ablation" in r:
            ref = r["ablation"][next(iter(r["ablation"]))]
            out.append("Ablation (re-ranking the same candidates; Δ against the first row):\n")
            header = ["variant", "R@1", "R@3", "R@5", "R@10", "R@20", "MRR@20", "hit@3", "hit@5",
                      "Δ R@10", "Δ MRR", "mean hits"]  # fmt: skip
            rows = []
            for name, s in r["ablation"].items():
                row = _metric_rows({name: s}, latency=False)[0]
                row += [
                    f"{s['R@10'] - ref['R@10']:+.3f}",
                    f"{s['MRR@20'] - ref['MRR@20']:+.3f}",
                    f"{s['mean_returned']:.1f}",
                ]
                rows.append(row)
            out.append(markdown_table(header, rows))
            mm = r.get("ablation_consistency_mismatches", 0)
            out.append(
                f"\nConsistency: the re-ranked default pipeline differed from the timed "
                f"`SearchEngine.search` on {mm} of {r['questions']} questions."
            )
            out.append("")
        out.append(floor_line(r, results.get("floor_points", 0.0)))
        out.append("")
    return "\n".join(out)


def floor_line(r: dict[str, Any], points: float) -> str:
    """The floors: hybrid recall@10 vs the best plain baseline, p95 latency."""
    m = r["methods"]
    hyb = m[MAIN_METHODS[-1].name]
    best_name = max(("BM25 (plain)", "dense (plain)"), key=lambda n: m[n]["R@10"])
    gap = (hyb["R@10"] - m[best_name]["R@10"]) * 100
    need = hyb["p95_ms"] <= r["query_embedding"]["p95_ms"] + 10
    need50 = hyb["p95_ms"] <= r["query_embedding"]["p50_ms"] + 10
    return (
        f"**Floors.** Hybrid recall@10 {hyb['R@10']:.3f} vs best plain baseline "
        f"({best_name}) {m[best_name]['R@10']:.3f}: {gap:+.1f} points (floor +{points:.0f}: "
        f"{'met' if gap >= points else 'NOT met'}). Hybrid search p95 {hyb['p95_ms']:.1f} ms vs "
        f"query-embedding p95 {r['query_embedding']['p95_ms']:.1f} ms + 10 ms: "
        f"{'met' if need else 'NOT met'} (against query-embedding p50 + 10 ms: "
        f"{'met' if need50 else 'NOT met'})." + _latency_by_message(r)
    )


def _latency_by_message(r: dict[str, Any]) -> str:
    """The latency floor for messages asking one question and several (searched per question)."""
    parts = []
    for kind, d in r.get("latency_by_message", {}).items():
        search, emb = d["search"]["p95_ms"], d["embedding"]["p95_ms"]
        verdict = "met" if search <= emb + 10 else "NOT met"
        parts.append(
            f"{kind} (n={d['n']}): search p95 {search:.1f} ms vs embedding p95 {emb:.1f} + 10 ms, "
            f"{verdict}"
        )
    return (" By message: " + "; ".join(parts) + ".") if parts else ""


# -- CLI ---------------------------------------------------------------------


def parser(description: str) -> argparse.ArgumentParser:
    """Arguments shared by the retrieval benchmarks."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--data", type=Path, required=True, help="folder of the dataset's JSON files")
    p.add_argument("--embedder", choices=[*EMBEDDERS, "both"], default="use")
    p.add_argument("--limit", type=int, default=None,
                   help="evaluate N questions, spread evenly over the dataset")  # fmt: skip
    p.add_argument("--ablation", action="store_true",
                   help="each stage off, fusions, weights, intent, chunking variants")  # fmt: skip
    p.add_argument("--chunking", choices=["ctx-embed", "ctx-text", "both", "none"],
                   default="both", help="chunking ingest variants run with --ablation")  # fmt: skip
    p.add_argument("--json", nargs="?", const="-", default=None, metavar="PATH",
                   help="write the results as JSON to PATH ('-' or no value: stdout, "
                        "instead of the Markdown tables)")  # fmt: skip
    p.add_argument("--workdir", type=Path, default=None,
                   help="where the temporary workspaces go (default: a temp dir, removed)")  # fmt: skip
    add_engine_arguments(p)
    return p


def add_engine_arguments(p: argparse.ArgumentParser) -> None:
    """``--engine`` and ``--database-url`` (see :func:`engine_databases`)."""
    p.add_argument("--engine", choices=["embedded", "postgres"], default="embedded",
                   help="the storage engines: the workspace folder, or PostgreSQL "
                        "(one database per workspace)")  # fmt: skip
    p.add_argument("--database-url", default=None, metavar="URL",
                   help="with --engine postgres: the server's admin URL (default: a local "
                        "server started for the run)")  # fmt: skip


def run_cli(
    argv: Sequence[str] | None,
    description: str,
    load: Callable[[Path], Dataset],
    floor_points: float,
) -> dict[str, Any]:
    """Parse arguments, run the benchmark, print tables / JSON; returns the results."""
    args = parser(description).parse_args(argv)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    dataset = load(args.data).subset(args.limit)
    chunking = {"both": ["ctx-embed", "ctx-text"], "none": []}.get(args.chunking, [args.chunking])
    embedders = list(EMBEDDERS) if args.embedder == "both" else [args.embedder]
    tmp = Path(tempfile.mkdtemp(prefix="langmem-bench-", dir=args.workdir))
    load_start = os.getloadavg()
    log(f"{dataset.name}: {sum(len(c) for c in dataset.corpora.values())} memories, "
        f"{len(dataset.questions)} questions; workspaces in {tmp}")  # fmt: skip
    try:
        with engine_databases(args.engine, args.database_url) as database_for:
            runs = [
                run_embedder(
                    dataset,
                    e,
                    ablation=args.ablation,
                    chunking=chunking,
                    workdir=tmp,
                    log=log,
                    database_for=database_for,
                )
                for e in embedders
            ]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    results = {
        "dataset": dataset.name,
        "date": date.today().isoformat(),
        "machine": "2 cores",
        "engine": args.engine,
        "command": "python "
        + " ".join([sys.argv[0], *(argv if argv is not None else sys.argv[1:])]),
        "notes": [
            *dataset.notes,
            "load average (1/5/15 min) at start {:.1f}/{:.1f}/{:.1f}, at end {:.1f}/{:.1f}/{:.1f} "
            "(other processes share the 2 cores: latencies are comparable within a run "
            "only)".format(*load_start, *os.getloadavg()),
        ],
        "floor_points": floor_points,
        "runs": runs,
    }
    if args.json is not None and args.json != "-":
        Path(args.json).write_text(json.dumps(results, indent=2, ensure_ascii=False))
    if args.json == "-":
        print(json.dumps(results, indent=2, ensure_ascii=False))
    else:
        print(render(results))
    return results


__all__ = [
    "ALL_OFF",
    "Dataset",
    "Item",
    "Question",
    "Variant",
    "markdown_table",
    "percentiles",
    "question_metrics",
    "render",
    "run_cli",
]
