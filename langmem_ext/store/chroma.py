"""A LangGraph ``BaseStore`` in the memory workspace: SQLite for the truth, Chroma for vectors.

Layout. Items live in the workspace ledger (``state.db``, tables ``store_items``,
``store_texts`` and the keyword index ``store_fts``), so a ``put`` is durable when
it returns, like a confirmed memory.
The texts chosen by the index config are embedded with the memory's embedder (or
the index config's own ``embed``) into Chroma — one collection per namespace and
embedder, named from a scope-safe key (``kv.<slug>.<hash>``, which no memory scope
can spell because scopes have no dots),
so a search in one namespace never touches another's vectors. Chroma is derived:
every search checks that a namespace's collection holds what the ledger says it
should, and re-embeds (through the embedding cache) when it does not — after a
crash between the commit and the Chroma write, a ``reindex`` or a deleted
``.index/``.

Search. With a ``query``, the vector engine (Chroma, per namespace) and the keyword
engine (BM25 over the items' texts in the ledger) bring candidates, with the prefix,
the ``filter`` and the expiry applied in their queries, and the package's retrieval
pipeline ranks them, as for :meth:`langmem_ext.Memory.search`; items neither engine
ranked follow, newest first (see :mod:`langmem_ext.store.search`). The ``score``
reported is the plain cosine, LangGraph's scale. When the embedder or Chroma is
down, search degrades to keyword ranking and says so in the log.

The store holds no SQL: its items are a ledger repository (filters run in its
queries), reached with its vector partitions through :attr:`Memory.kv
<langmem_ext.memory.Memory.kv>` (a :class:`~langmem_ext.memory.KvSpace`);
:mod:`langmem_ext.store.vectors` keeps the partitions in step.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import json
import logging
import re
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from langchain_core.embeddings import Embeddings
from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    validate_op_namespace,
)
from langgraph.store.base.embed import (
    EmbeddingsLambda,
    ensure_embeddings,
    get_text_at_path,
    tokenize_path,
)

from langmem_ext.core.errors import InvalidInputError
from langmem_ext.memory import ItemText, ItemWrite, Memory, StoredItem, matches_filter
from langmem_ext.retrieval.calibration import cosine_baseline_of
from langmem_ext.store.ops_queue import AwaitableFlag, AwaitableInt, OpQueue, SweeperFuture
from langmem_ext.store.search import StoreSearch
from langmem_ext.store.vectors import StoreVectors

logger = logging.getLogger(__name__)


# -- pure helpers ------------------------------------------------------------------


def _ns_key(namespace: Sequence[str]) -> str:
    return ".".join(namespace)


def _ns_tuple(key: str) -> tuple[str, ...]:
    return tuple(key.split("."))


def partition_of(namespace: Sequence[str], embedder: str | None = None) -> str:
    """The scope-safe key of a namespace, which names its Chroma collection.

    ``("memories", "alice")`` -> ``kv.memories-alice.<12 hex>``. The hash keeps
    namespaces whose slugs coincide apart; the dots keep the key out of the space of
    memory scope names.

    Args:
        namespace: The store namespace.
        embedder: The tag of an ``index["embed"]`` other than the memory's embedder;
            its vectors live in their own collection (``None``: the memory's).
    """
    ns = _ns_key(namespace)
    keyed = ns if embedder is None else f"{ns}\x00{embedder}"
    digest = hashlib.sha256(keyed.encode("utf-8")).hexdigest()[:12]
    slug = re.sub(r"[^a-z0-9]+", "-", ns.lower()).strip("-")[:40].strip("-")
    return f"kv.{slug}.{digest}" if slug else f"kv.{digest}"


def _vec_id(ns: str, key: str, path: str) -> str:
    return hashlib.sha256(json.dumps([ns, key, path]).encode("utf-8")).hexdigest()[:32]


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def _leaves(obj: Any) -> Iterable[str]:
    if isinstance(obj, Mapping):
        for v in obj.values():
            yield from _leaves(v)
    elif isinstance(obj, list | tuple):
        for v in obj:
            yield from _leaves(v)
    elif isinstance(obj, str):
        if obj.strip():
            yield obj.strip()
    elif obj is not None and not isinstance(obj, bool):
        yield str(obj)


def item_texts(value: Mapping[str, Any], fields: Sequence[str]) -> list[tuple[str, str]]:
    """The ``(path, text)`` pairs of a value that get embedded and keyword-indexed.

    ``"$"`` is the whole value as its leaf values joined by newlines (not the JSON
    dump, so keys and quotes add no noise to embeddings); other paths follow
    LangGraph's path syntax (``"a.b"``, ``"items[*].text"``); a path with several
    texts yields ``path.0``, ``path.1``, ...
    """
    out: list[tuple[str, str]] = []
    for path in fields:
        if path == "$":
            text = "\n".join(_leaves(value))
            if text:
                out.append(("$", text))
            continue
        texts = [t for t in get_text_at_path(value, tokenize_path(path)) if t.strip()]
        if len(texts) == 1:
            out.append((path, texts[0]))
        else:
            out.extend((f"{path}.{i}", t) for i, t in enumerate(texts))
    return out


def _does_match(condition: MatchCondition, ns: tuple[str, ...]) -> bool:
    path = condition.path
    if len(ns) < len(path):
        return False
    pairs = (
        zip(ns, path, strict=False)
        if condition.match_type == "prefix"
        else zip(reversed(ns), reversed(path), strict=False)
    )
    return all(p == "*" or k == p for k, p in pairs)


def _embedder_tag(embed: Any, embeddings: Embeddings, dims: int | None) -> str:
    """A stable name of a user embedder (its model string, or its class / function name).

    It keys the embedder's own Chroma collections and marks which vectors it made,
    so switching embedders re-embeds instead of mixing vector spaces.
    """
    if isinstance(embed, str):
        ident = embed
    else:
        target: Any = embeddings
        if isinstance(embeddings, EmbeddingsLambda):
            target = getattr(embeddings, "func", None) or getattr(embeddings, "afunc", None)
        kind = target if callable(target) and not isinstance(target, Embeddings) else type(target)
        ident = f"{getattr(kind, '__module__', '')}.{getattr(kind, '__qualname__', repr(kind))}"
        for attr in ("model", "model_name"):
            val = getattr(embeddings, attr, None)
            if isinstance(val, str):
                ident += f":{val}"
    return hashlib.sha256(f"{ident}|{dims}".encode()).hexdigest()[:12]


def _dt(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, tz=UTC)


def _item(row: StoredItem) -> Item:
    return Item(
        value=row.value,
        key=row.key,
        namespace=_ns_tuple(row.ns),
        created_at=_dt(row.created_at),
        updated_at=_dt(row.updated_at),
    )


def _search_item(row: StoredItem, score: float | None) -> SearchItem:
    return SearchItem(
        namespace=_ns_tuple(row.ns),
        key=row.key,
        value=row.value,
        created_at=_dt(row.created_at),
        updated_at=_dt(row.updated_at),
        score=score,
    )


# -- the store ---------------------------------------------------------------------


class ChromaMemoryStore(BaseStore):
    """LangGraph ``BaseStore`` kept in a :class:`~langmem_ext.Memory` workspace.

    Values are JSON objects stored durably in the workspace ledger; their texts are
    embedded into Chroma with the memory's embedder and also keyword-indexed, so
    ``search(..., query=...)`` is hybrid (see the module docstring). It works with
    ``create_agent(..., store=store)``, ``langgraph.config.get_store()`` and
    langmem's ``create_manage_memory_tool`` / ``create_search_memory_tool``.

    Differences from ``InMemoryStore`` (where the semantics are ours):

    * Indexing is on by default (``fields=["$"]``, the memory's embedder); ``"$"``
      embeds the value's leaf texts rather than its JSON dump. ``index["embed"]``
      takes what LangGraph's stores take (an ``Embeddings``, a sync or async
      function of a list of texts, or a ``"provider:model"`` string); its vectors
      are kept in Chroma collections of their own. ``text_fields`` (SqliteStore's
      key) is read as ``fields``.
    * ``search(query=...)`` orders hits by the package's hybrid ranking (cosine +
      BM25, fused as ``retrieval.fusion`` says; see the module docstring), but each hit's ``score`` is what LangGraph's
      stores report: the cosine similarity of the query's vector and the item's
      closest indexed text (-1..1; 1.0 for an exact match), so thresholds written
      for ``SqliteStore`` / ``PostgresStore`` / ``InMemoryStore`` keep working.
      Because the order is hybrid, scores need not decrease down the list (a
      keyword match may outrank a closer vector). ``score`` is ``None`` for items
      without indexed text (they come last) and for every hit when the query
      could not be embedded (keyword ranking only).
    * ``filter`` keys with dots reach nested fields (``{"meta.lang": "en"}``), as in
      ``SqliteStore``; operators ``$eq``, ``$ne``, ``$gt``, ``$gte``, ``$lt``,
      ``$lte``; ordering compares numbers with numbers and strings with strings.
      Conditions run in the ledger's queries (the reference semantics:
      :func:`~langmem_ext.memory.matches_filter`).
    * Without a ``query``, results are newest first (``updated_at`` descending),
      as in LangGraph's SQLite and Postgres stores.
    * ``created_at`` is kept when an item is overwritten (``InMemoryStore`` resets
      it), and reset when the old item had expired.
    * TTL is supported (``ttl`` in minutes on ``put``; ``refresh_ttl`` on reads;
      ``ttl_config`` as in LangGraph). Expired items are never returned, even
      before a sweep; sweeps run on writes at most every
      ``sweep_interval_minutes`` (default 5), on :meth:`sweep_ttl`, and in the
      thread of :meth:`start_ttl_sweeper` / :meth:`stop_ttl_sweeper`. These return
      values that may also be awaited, so both ``SqliteStore``'s and
      ``AsyncSqliteStore``'s calling forms work.
    * Async calls made concurrently (``asyncio.gather`` of ``aput`` ...) are grouped
      into one batch: one ledger transaction and one embedding batch.
    * Like ``InMemoryStore``, reads in a batch see the state before the batch's
      writes; several puts to one key in a batch keep the last.
    * Bad values (not JSON-serialisable) raise ``InvalidInputError`` before
      anything of the batch is written.
    * ``list_namespaces`` lists only namespaces holding live items
      (``InMemoryStore`` keeps listing a namespace after its last item is deleted).
    * Cost: a search asks one Chroma collection per namespace under the prefix
      (exhaustively up to 1,000 vectors), one BM25 query and reads only the items
      it ranks or returns; keep prefixes narrow (e.g. one user's namespace) on
      stores with many namespaces.

    Setup:
        .. code-block:: bash

            pip install langmem-ext

    Instantiate:
        .. code-block:: python

            from langmem_ext import Memory
            from langmem_ext.store.chroma import ChromaMemoryStore

            memory = Memory("./memory-ws")
            store = ChromaMemoryStore(memory, index={"fields": ["text"]})

    Invoke:
        .. code-block:: python

            store.put(("docs", "alice"), "d1", {"text": "Alice likes ramen", "stars": 5})
            store.put(("docs", "alice"), "d2", {"text": "Alice's bike is red", "stars": 2})
            store.get(("docs", "alice"), "d1").value["stars"]          # 5
            hits = store.search(("docs",), query="what food?", filter={"stars": {"$gte": 3}})
            hits[0].key                                                  # 'd1'

    Async:
        .. code-block:: python

            await store.aput(("docs", "bob"), "d3", {"text": "Bob drinks tea"})
            [i.key for i in await store.asearch(("docs", "bob"), query="tea")]   # ['d3']

    Use in a graph:
        .. code-block:: python

            from langgraph.config import get_store
            from langgraph.graph import END, START, MessagesState, StateGraph

            def recall(state: MessagesState) -> dict:
                hits = get_store().search(("docs", "alice"), query=state["messages"][-1].content)
                return {"messages": [("ai", hits[0].value["text"] if hits else "nothing found")]}

            graph = StateGraph(MessagesState).add_node(recall)
            graph = graph.add_edge(START, "recall").add_edge("recall", END).compile(store=store)
            graph.invoke({"messages": [("user", "ramen")]})["messages"][-1].content

    Args:
        memory: The memory whose workspace, embedder and Chroma client are used.
        index: ``{"fields": [...], "embed": ..., "dims": N}`` — JSON paths to embed
            (default ``["$"]``), the embedder (default: the memory's; else anything
            LangGraph's ``ensure_embeddings`` accepts) and its vector size (recorded;
            the embedder decides the size).
        ttl: LangGraph ``TTLConfig`` (``default_ttl``, ``refresh_on_read``,
            ``sweep_interval_minutes``).
    """

    supports_ttl: bool = True

    def __init__(
        self,
        memory: Memory,
        *,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
    ) -> None:
        cfg: Mapping[str, Any] = dict(index or {})
        fields = cfg.get("fields") or cfg.get("text_fields") or ["$"]
        if isinstance(fields, str):
            fields = [fields]
        for f in fields:
            if f != "$":
                tokenize_path(f)  # fail now on a malformed path
        self.memory = memory
        self.fields: list[str] = list(fields)
        self.dims: int | None = cfg.get("dims")
        embed = cfg.get("embed")
        self.embeddings: Embeddings
        if embed is None or embed is memory.embeddings:
            self.embeddings = memory.embeddings
            self._embedder_tag: str | None = None
        else:
            self.embeddings = ensure_embeddings(embed)
            self._embedder_tag = _embedder_tag(embed, self.embeddings, self.dims)
        # vec_hash = text_hash + this suffix: which embedder made the row's vector.
        self._vec_suffix = "" if self._embedder_tag is None else f":{self._embedder_tag}"
        self.index_config: IndexConfig = {"fields": self.fields}
        if self.dims is not None:
            self.index_config["dims"] = self.dims
        if self._embedder_tag is not None:
            self.index_config["embed"] = self.embeddings
        self.ttl_config = ttl
        self._kv = memory.kv
        self._items = self._kv.items
        self._last_sweep = 0.0
        self._warned: set[str] = set()
        self._vectors = StoreVectors(
            self._kv, self._embed, self._partition, self._vec_suffix, self._warn_once
        )
        retrieval = memory.settings.retrieval
        own = self._embedder_tag is None  # the configured baseline is the memory embedder's
        self._searcher = StoreSearch(
            self._kv,
            self._vectors,
            self._partition,
            retrieval,
            cosine_baseline_of(self.embeddings, retrieval.cosine_baseline if own else None),
            self._warn_once,
        )
        self._queue = OpQueue(self.batch)
        self._ttl_stop = threading.Event()
        self._ttl_thread: threading.Thread | None = None
        self._ttl_future: SweeperFuture | None = None
        self._ttl_lock = threading.Lock()

    def _partition(self, ns: str) -> str:
        """The Chroma partition of a namespace key for this store's embedder."""
        return partition_of(_ns_tuple(ns), self._embedder_tag)

    # -- BaseStore ---------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run get / search / list-namespaces / put operations in order of results."""
        ops = list(ops)
        for op in ops:
            validate_op_namespace(op)
        now = time.time()
        puts = self._prepare_puts(ops)
        queries = {op.query for op in ops if isinstance(op, SearchOp) and op.query}
        qvecs = self._embed_queries(queries)
        results: list[Result] = []
        refresh: set[int] = set()
        for op in ops:
            if isinstance(op, GetOp):
                row = self._get(op, now)
                if row is not None and op.refresh_ttl:
                    refresh.add(row.id)
                results.append(None if row is None else _item(row))
            elif isinstance(op, SearchOp):
                found = self._search(op, qvecs, now)
                if op.refresh_ttl:
                    refresh.update(r.id for r, _ in found)
                results.append([_search_item(r, s) for r, s in found])
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op, now))
            elif isinstance(op, PutOp):
                results.append(None)
            else:
                msg = f"Unknown store operation {type(op).__name__}."
                raise InvalidInputError(msg)
        self._refresh_ttl(refresh, now)
        if puts:
            self._apply_puts(puts, now)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async version of :meth:`batch`, grouped with concurrent calls.

        The ops of every ``abatch`` (so every ``aput``, ``aget``, ``asearch`` ...)
        called while a previous group runs are queued and run as one :meth:`batch`
        in a worker thread: concurrent puts share one ledger transaction and one
        embedding batch. If the group fails, each call's ops run alone, so an
        invalid value fails only its own call.
        """
        return await self._queue.submit(list(ops))

    # -- TTL -----------------------------------------------------------------

    def sweep_ttl(self) -> AwaitableInt:
        """Delete expired items now.

        Returns:
            How many items were deleted: an ``int`` that may also be awaited, so
            ``await store.sweep_ttl()`` (``AsyncSqliteStore``'s form) works too; it
            then runs in the event loop's thread (use :meth:`asweep_ttl` to run it in
            a worker thread).
        """
        return AwaitableInt(self._sweep_ttl())

    def _sweep_ttl(self) -> int:
        now = time.time()
        self._last_sweep = now
        with self._kv.transaction():  # re-checked inside: a put may revive a key
            n, dropped = self._items.sweep(now)
        if n:
            self._vectors.drop(dropped)
            logger.info("store TTL sweep deleted %d expired items", n)
        return n

    async def asweep_ttl(self) -> int:
        """Async version of :meth:`sweep_ttl` (in a worker thread)."""
        return int(await asyncio.to_thread(self._sweep_ttl))

    def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> SweeperFuture:
        """Delete expired items every ``sweep_interval_minutes`` in a daemon thread.

        As on LangGraph's ``SqliteStore``: without a ``ttl`` config nothing starts;
        a second call while the sweeper runs starts nothing new. The result may
        also be awaited (``await store.start_ttl_sweeper()``, ``AsyncSqliteStore``'s
        form), which returns at once.

        Args:
            sweep_interval_minutes: Minutes between sweeps (default: the ttl config's
                ``sweep_interval_minutes``, else 5).

        Returns:
            A future that is done when the sweeper stops; cancelling it stops it.
        """
        with self._ttl_lock:
            if not self.ttl_config:
                done = SweeperFuture()
                done.set_result(None)
                return done
            if self._ttl_thread is not None and self._ttl_thread.is_alive():
                assert self._ttl_future is not None
                return self._ttl_future
            interval = float(
                sweep_interval_minutes or self.ttl_config.get("sweep_interval_minutes") or 5
            )
            self._ttl_stop.clear()
            future = SweeperFuture()
            future.add_done_callback(lambda f: self._ttl_stop.set() if f.cancelled() else None)

            def loop() -> None:
                while not self._ttl_stop.wait(interval * 60):
                    try:
                        self.sweep_ttl()
                    except Exception:
                        logger.exception("store TTL sweep failed")
                if not future.done():
                    future.set_result(None)

            self._ttl_thread = threading.Thread(target=loop, daemon=True, name="store-ttl-sweeper")
            self._ttl_future = future
            self._ttl_thread.start()
            return future

    def stop_ttl_sweeper(self, timeout: float | None = None) -> AwaitableFlag:
        """Stop the sweeper started by :meth:`start_ttl_sweeper`.

        Args:
            timeout: Seconds to wait for the thread (``None``: as long as it takes).

        Returns:
            Whether the sweeper is stopped (or was not running): truthy/falsy, and
            awaitable to a ``bool`` (``await store.stop_ttl_sweeper()``).
        """
        thread = self._ttl_thread
        if thread is None or not thread.is_alive():
            return AwaitableFlag(True)
        self._ttl_stop.set()
        thread.join(timeout)
        stopped = not thread.is_alive()
        if stopped:
            self._ttl_thread = None
        return AwaitableFlag(stopped)

    def _maybe_sweep(self, now: float) -> None:
        minutes = (self.ttl_config or {}).get("sweep_interval_minutes") or 5
        if now - self._last_sweep >= minutes * 60:
            self._sweep_ttl()

    def _refresh_ttl(self, ids: set[int], now: float) -> None:
        if ids:
            with self._kv.transaction():
                self._items.refresh_ttl(sorted(ids), now)

    # -- reads -----------------------------------------------------------------

    def _get(self, op: GetOp, now: float) -> StoredItem | None:
        return self._items.get(_ns_key(op.namespace), str(op.key), now)

    def _search(
        self, op: SearchOp, qvecs: Mapping[str, list[float] | None], now: float
    ) -> list[tuple[StoredItem, float | None]]:
        qvec = qvecs.get(op.query) if op.query else None
        return self._searcher.search(op, _ns_key(op.namespace_prefix), qvec, now)

    def _embed_queries(self, queries: set[str]) -> dict[str, list[float] | None]:
        out: dict[str, list[float] | None] = {}
        for q in queries:
            try:
                out[q] = [float(x) for x in self._embed([q], query=True)[0]]
            except Exception as e:  # the embedder is down: keyword ranking only
                self._warn_once(
                    f"embed:{type(e).__name__}",
                    "store query embedding failed (%s); ranking by keywords only",
                    e,
                )
                out[q] = None
        return out

    def _list_namespaces(self, op: ListNamespacesOp, now: float) -> list[tuple[str, ...]]:
        spaces = [_ns_tuple(ns) for ns in self._items.namespaces(now)]
        if op.match_conditions:
            spaces = [s for s in spaces if all(_does_match(c, s) for c in op.match_conditions)]
        if op.max_depth is not None:
            spaces = sorted({s[: op.max_depth] for s in spaces})
        else:
            spaces = sorted(spaces)
        return spaces[op.offset : op.offset + op.limit]

    # -- writes ----------------------------------------------------------------

    def _prepare_puts(self, ops: Sequence[Op]) -> dict[tuple[str, str], ItemWrite]:
        """Validate every put of a batch before anything is written (last one wins)."""
        out: dict[tuple[str, str], ItemWrite] = {}
        for op in ops:
            if not isinstance(op, PutOp):
                continue
            if not op.namespace:
                raise InvalidNamespaceError("Namespace cannot be empty.")
            if op.namespace[0] == "langgraph":
                msg = f'Root label for namespace cannot be "langgraph". Got: {op.namespace}'
                raise InvalidNamespaceError(msg)
            ns, key = _ns_key(op.namespace), str(op.key)
            if op.value is None:
                out[(ns, key)] = ItemWrite(ns, key, None)
                continue
            if not isinstance(op.value, Mapping):
                msg = f"Store values must be dicts, got {type(op.value).__name__} for key {key!r}."
                raise InvalidInputError(msg)
            try:
                value_json = json.dumps(dict(op.value), ensure_ascii=False, allow_nan=False)
            except (TypeError, ValueError) as e:
                msg = (
                    f"Value of key {key!r} is not JSON-serialisable ({e}); store only dicts "
                    "of strings, numbers, booleans, None, lists and dicts."
                )
                raise InvalidInputError(msg) from e
            texts = (
                []
                if op.index is False
                else item_texts(json.loads(value_json), op.index or self.fields)
            )
            if op.ttl is not None and op.ttl <= 0:
                msg = f"ttl must be a positive number of minutes, got {op.ttl!r}."
                raise InvalidInputError(msg)
            out[(ns, key)] = ItemWrite(
                ns,
                key,
                value_json,
                tuple(ItemText(path, _vec_id(ns, key, path), t, _hash(t)) for path, t in texts),
                op.ttl,
            )
        return out

    def _apply_puts(self, puts: Mapping[tuple[str, str], ItemWrite], now: float) -> None:
        with self._kv.transaction():
            dropped = self._items.write(list(puts.values()), now)
        # Durable from here; the vectors are derived and repaired by StoreVectors.sync.
        self._vectors.drop(dropped)
        try:
            self._vectors.sync(sorted({p.ns for p in puts.values() if p.value_json is not None}))
        except Exception as e:
            self._warn_once(
                f"write:{type(e).__name__}",
                "store vectors not updated (%s); they catch up on the next search",
                e,
            )
        self._maybe_sweep(now)

    def _embed(self, texts: list[str], *, query: bool = False) -> list[list[float]]:
        """Embed with the store's embedder; an async-only function runs in its own loop."""
        emb = self.embeddings
        if isinstance(emb, EmbeddingsLambda) and getattr(emb, "func", None) is None:
            coro_fn = emb.aembed_documents
            try:
                asyncio.get_running_loop()
            except RuntimeError:  # no loop in this thread (the worker of abatch)
                return asyncio.run(coro_fn(texts))
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                return pool.submit(asyncio.run, coro_fn(texts)).result()
        if query:
            return [emb.embed_query(t) for t in texts]
        return emb.embed_documents(texts)

    def _warn_once(self, key: str, msg: str, *args: Any) -> None:
        if key not in self._warned:
            self._warned.add(key)
            logger.warning(msg, *args)


def create_memory_store(
    memory: Memory,
    *,
    fields: Sequence[str] | None = None,
    ttl: TTLConfig | None = None,
) -> ChromaMemoryStore:
    """A :class:`ChromaMemoryStore` over ``memory`` embedding ``fields`` (default ``["$"]``)."""
    index: IndexConfig = {"fields": list(fields)} if fields else {}
    return ChromaMemoryStore(memory, index=index or None, ttl=ttl)


__all__ = [
    "ChromaMemoryStore",
    "create_memory_store",
    "item_texts",
    "matches_filter",
    "partition_of",
]
