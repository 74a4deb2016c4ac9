"""The pipeline's parts: the :class:`Stage` protocol, the :class:`Pool` of candidates a
stage works on, the :class:`QueryContext` it reads and the :class:`Pipeline` that runs
an ordered list of stages.

A search is one pipeline run: the engine stages fill the pool's per-engine lists,
the marking stages annotate them, fusion makes one ranked list, the scoring stages
rescore and filter it, and the last stages merge other sources and set the final
order. What the caller gets is the pool's ``ranked`` list as the last stage left it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from langmem_ext.core.errors import InvalidInputError
from langmem_ext.retrieval.candidate import Candidate
from langmem_ext.retrieval.fusion import DEFAULT_FULL_MATCH_COSINE

if TYPE_CHECKING:
    from langmem_ext.core.config import RetrievalSettings
    from langmem_ext.retrieval.intent import RecallIntent
    from langmem_ext.retrieval.stages.ports import SearchIO


@dataclass
class Pool:
    """The candidates of one query on their way through the stages.

    Attributes:
        vectors: Each query text's vector candidates, best first (engine stages);
            ``None`` when the vector engine did not run.
        keyword_futures: Each text's keyword candidates still being fetched on a
            worker thread (read them with :meth:`keyword_lists`).
        keywords: Each text's keyword candidates, best first, once fetched;
            ``None`` when the keyword engine did not run.
        vector: The vector candidates of all texts in one list (after ``union``).
        keyword: The keyword candidates of all texts in one list.
        ranked: One list, best first, from fusion on; what the caller gets.
        memories: The ranked memories before other sources joined (the ordering
            stage reads which of them answer the question's slot or safety field).
        query_vectors: The query texts' embeddings (empty: the vector side did not
            run).
        graph_links: Memory id -> how strongly the knowledge graph links it to the
            query (``None``: not computed).
        older: Ids of statements a newer statement of the same slot replaces.
        subject_words: The query's keyword tokens that say whom it asks about (the
            person stage's reading; fusion counts a keyword match of only these
            as no match of the question).
        vector_failed: The vector engine failed; search went on with keywords.
        checkpoint: The stage index and the candidates to restart the scoring
            stages from (set by the working-set stage, read by the noise stage).
    """

    vectors: list[list[Candidate]] | None = None
    keyword_futures: list[Future[list[Candidate]]] = field(default_factory=list)
    keywords: list[list[Candidate]] | None = None
    vector: list[Candidate] | None = None
    keyword: list[Candidate] | None = None
    ranked: list[Candidate] = field(default_factory=list)
    memories: list[Candidate] = field(default_factory=list)
    query_vectors: list[Any] = field(default_factory=list)
    graph_links: dict[str, float] | None = None
    older: set[str] = field(default_factory=set)
    subject_words: frozenset[str] = frozenset()
    vector_failed: bool = False
    checkpoint: tuple[int, list[Candidate]] | None = None
    position: int = 0
    """Index of the stage running."""

    def keyword_lists(self) -> list[list[Candidate]] | None:
        """Each text's keyword candidates, waiting for those still being fetched.

        Returns:
            One list per text, or ``None`` when the keyword engine did not run.
        """
        if self.keyword_futures:
            self.keywords = [f.result() for f in self.keyword_futures]
            self.keyword_futures = []
        return self.keywords


@dataclass
class QueryContext:
    """What the stages read about the query (they never change it).

    Attributes:
        query: The query text (the whole message).
        texts: The texts searched: the query, then each question of a compound
            message.
        k: How many results the caller wants.
        now: The time of the question, epoch seconds.
        settings: The retrieval settings.
        io: The stores the stages read (:class:`~langmem_ext.retrieval.stages.ports.SearchIO`).
        mode: ``hybrid``, ``fts``, ``keyword`` or ``vector``.
        category: Only candidates of this category.
        intent: The recall intent (its time window).
        current_only: Only current versions are searched (not as of a past time):
            the stages that know current versions only run.
        keeps: Whether a candidate's version may be returned (``None``: every one).
        pool_size: Candidates each engine brings per text.
        extra: Candidates the ranking keeps after the best ``k`` (a compound message:
            the question-coverage stage picks from them).
        full_match_cosine: Cosine at which vector evidence counts as certain.
        cosine_baseline: Cosine of unrelated texts for the query embedder.
        copy_inputs: Fusion copies the engine candidates (``False``: they are ours).
        warn: Logs a failure once per key (a stage that reads a store must never
            break search).
    """

    query: str
    texts: list[str]
    k: int
    now: float
    settings: RetrievalSettings
    io: SearchIO
    mode: str = "hybrid"
    category: str | None = None
    intent: RecallIntent | None = None
    current_only: bool = True
    keeps: Callable[[Candidate], bool] | None = None
    pool_size: int = 20
    extra: int = 0
    full_match_cosine: float = DEFAULT_FULL_MATCH_COSINE
    cosine_baseline: float = 0.0
    copy_inputs: bool = False
    warn: Callable[[str, str], None] = field(default=lambda key, msg: None)
    active: frozenset[str] = frozenset()
    """Names of the stages this run runs (set by :meth:`Pipeline.run`)."""
    pipeline: Pipeline | None = None
    """The pipeline running (set by :meth:`Pipeline.run`)."""


@runtime_checkable
class Stage(Protocol):
    """One step of the pipeline.

    A stage reads the query context and the pool and returns the pool (the same
    object, changed, or a new one). It runs only when it has something to do (an
    engine stage in a mode without its engine, a marking stage without its store
    and the like return the pool unchanged).
    """

    @property
    def name(self) -> str:
        """Short name, unique in a pipeline (``SearchEngine.stages.names`` lists them)."""
        ...

    def run(self, pool: Pool, ctx: QueryContext) -> Pool:
        """Run the stage.

        Args:
            pool: The candidates so far.
            ctx: The query.

        Returns:
            The candidates after the stage.
        """
        ...


class Pipeline:
    """An ordered list of stages, run one after the other.

    Args:
        stages: The stages, in order; names must be unique.

    Raises:
        InvalidInputError: Two stages share a name.
    """

    def __init__(self, stages: Iterable[Stage]) -> None:
        self.stages: tuple[Stage, ...] = tuple(stages)
        names = [s.name for s in self.stages]
        dup = (
            sorted({n for n in names if names.count(n) > 1}) if len(set(names)) < len(names) else []
        )
        if dup:
            raise InvalidInputError(f"Pipeline stages must have unique names: {', '.join(dup)}.")

    @property
    def names(self) -> list[str]:
        """The stage names, in order."""
        return [s.name for s in self.stages]

    def __iter__(self) -> Iterator[Stage]:
        return iter(self.stages)

    def __len__(self) -> int:
        return len(self.stages)

    def without(self, names: Iterable[str]) -> Pipeline:
        """This pipeline without the stages named ``names``.

        Args:
            names: Names of stages to leave out (unknown names are ignored).

        Returns:
            A new pipeline.
        """
        off = set(names)
        return Pipeline(s for s in self.stages if s.name not in off)

    def run(self, pool: Pool, ctx: QueryContext) -> Pool:
        """Run every stage on ``pool``.

        Args:
            pool: The starting candidates.
            ctx: The query; its ``active`` and ``pipeline`` are set for the run.

        Returns:
            The pool after the last stage; its ``ranked`` is the result, in order.
        """
        ctx.active = frozenset(self.names)
        ctx.pipeline = self
        return self.run_range(pool, ctx, 0, len(self.stages))

    def run_range(self, pool: Pool, ctx: QueryContext, start: int, stop: int) -> Pool:
        """Run the stages ``start`` to ``stop - 1`` (a stage that restarts part of the
        pipeline, as the noise stage does, calls it).

        Args:
            pool: The candidates.
            ctx: The query.
            start: Index of the first stage to run.
            stop: Index after the last one.

        Returns:
            The pool after stage ``stop - 1``.
        """
        for i in range(start, stop):
            pool.position = i
            pool = self.stages[i].run(pool, ctx)
        return pool


__all__ = ["Pipeline", "Pool", "QueryContext", "Stage"]
