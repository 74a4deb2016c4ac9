"""A LangGraph ``BaseStore`` in the memory workspace: SQLite for the truth, Chroma for vectors.

Layout. Items live in the workspace ledger (``state.db``, tables ``store_items`` and
``store_texts``), so a ``put`` is durable when it returns, like a confirmed memory.
The texts chosen by the index config are embedded with the memory's embedder (or
the index config's own ``embed``) into Chroma — one collection per namespace and
embedder, named from a scope-safe key (``kv.<slug>.<hash>``, which no memory scope
can spell because scopes have no dots),
so a search in one namespace never touches another's vectors. Chroma is derived:
every search checks that a namespace's collection holds what the ledger says it
should, and re-embeds (through the embedding cache) when it does not — after a
crash between the commit and the Chroma write, a ``reindex`` or a deleted
``.index/``.

Search. With a ``query``, every item under the prefix that passes the ``filter`` is
a candidate; candidates are ranked by the package's weighted hybrid fusion
(``retrieval.vector_weight`` x cosine from Chroma + ``retrieval.bm25_weight`` x
BM25 over the same texts, + ``bm25_hit_bonus`` when both engines agree); the
``score`` reported is the plain cosine, LangGraph's scale. When the embedder or
Chroma is down, search degrades to keyword ranking and says so in the log.

Where this module reaches into the workspace (for the repository refactor): it
runs its own SQL on ``memory.workspace.ledger`` (``query`` / ``transaction`` on
``store_items`` and ``store_texts``: ``_get``, ``_candidates``, ``_texts_of``,
``_list_namespaces``, ``_apply_puts``, ``_refresh_ttl``, ``_sweep_ttl``,
``_sync_vectors``), calls ``memory.workspace.vectors`` (``count``, ``query``,
``embeddings``, ``upsert``, ``delete``, ``drop_all``) and holds
``memory.workspace.lock`` around Chroma writes, with ``refresh_if_stale`` /
``bump_generation``. The filter SQL is built in ``langmem_ext._store_filters``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import json
import logging
import math
import re
import threading
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
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

from langmem_ext._store_async import AwaitableFlag, AwaitableInt, OpQueue, SweeperFuture
from langmem_ext._store_filters import compile_filter, matches_filter
from langmem_ext.errors import InvalidInputError
from langmem_ext.memory.service import Memory
from langmem_ext.retrieval.candidate import Candidate
from langmem_ext.retrieval.fusion import fuse_weighted
from langmem_ext.text import index_tokens, query_tokens

logger = logging.getLogger(__name__)


_BM25_K1 = 1.2
_BM25_B = 0.75
_EXACT_VECTOR_LIMIT = 1000
"""A namespace with at most this many vectors is scored exhaustively."""

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


def _bm25(query: Sequence[str], docs: Sequence[Sequence[str]]) -> list[float]:
    """Okapi BM25 of each doc (a token list) for the query tokens, over this doc set."""
    n = len(docs)
    if not n or not query:
        return [0.0] * n
    qset = set(query)
    avgdl = sum(len(d) for d in docs) / n or 1.0
    tfs = [Counter(t for t in d if t in qset) for d in docs]
    df: Counter[str] = Counter()
    for tf in tfs:
        df.update(tf.keys())
    idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in qset}
    scores = []
    for d, tf in zip(docs, tfs, strict=True):
        norm = _BM25_K1 * (1 - _BM25_B + _BM25_B * len(d) / avgdl)
        scores.append(sum(idf[t] * f * (_BM25_K1 + 1) / (f + norm) for t, f in tf.items()))
    return scores


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


@dataclass
class _Row:
    id: int
    ns: str
    key: str
    value: dict[str, Any]
    created_at: float
    updated_at: float

    def item(self) -> Item:
        return Item(
            value=self.value,
            key=self.key,
            namespace=_ns_tuple(self.ns),
            created_at=_dt(self.created_at),
            updated_at=_dt(self.updated_at),
        )

    def search_item(self, score: float | None) -> SearchItem:
        return SearchItem(
            namespace=_ns_tuple(self.ns),
            key=self.key,
            value=self.value,
            created_at=_dt(self.created_at),
            updated_at=_dt(self.updated_at),
            score=score,
        )


@dataclass(frozen=True)
class _PreparedPut:
    ns: str
    key: str
    value_json: str | None
    texts: list[tuple[str, str]]
    ttl: float | None


_COLS = "id, ns, key, value, created_at, updated_at"


def _row(r: Sequence[Any]) -> _Row:
    return _Row(int(r[0]), str(r[1]), str(r[2]), json.loads(r[3]), float(r[4]), float(r[5]))


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
    * ``search(query=...)`` orders hits by the package's hybrid fusion (cosine +
      BM25, see the module docstring), but each hit's ``score`` is what LangGraph's
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
      Conditions run in SQL where they can (see ``langmem_ext._store_filters``).
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
    * Cost: a search reads the items under its prefix from SQLite (like
      ``InMemoryStore`` scans its dict) and queries one Chroma collection per
      namespace under the prefix, so keep prefixes narrow (e.g. one user's
      namespace) on large stores.

    Setup:
        .. code-block:: bash

            pip install langmem-ext

    Instantiate:
        .. code-block:: python

            from langmem_ext import Memory
            from langmem_ext.store import ChromaMemoryStore

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
        self._ws = memory.workspace
        self._last_sweep = 0.0
        self._warned: set[str] = set()
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
                results.append(None if row is None else row.item())
            elif isinstance(op, SearchOp):
                found = self._search(op, qvecs, now)
                if op.refresh_ttl:
                    refresh.update(r.id for r, _ in found)
                results.append([r.search_item(s) for r, s in found])
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
        dropped: dict[str, list[str]] = {}
        with self._ws.ledger.transaction() as conn:  # re-checked inside: a put may revive a key
            rows = conn.execute(
                "SELECT id, ns FROM store_items WHERE expires_at IS NOT NULL AND expires_at <= ?",
                (now,),
            ).fetchall()
            for item_id, ns in rows:
                dropped.setdefault(str(ns), []).extend(
                    str(r[0])
                    for r in conn.execute(
                        "SELECT vec_id FROM store_texts WHERE item_id = ?", (item_id,)
                    )
                )
                conn.execute("DELETE FROM store_texts WHERE item_id = ?", (item_id,))
                conn.execute("DELETE FROM store_items WHERE id = ?", (item_id,))
        if rows:
            self._drop_vectors(dropped)
            logger.info("store TTL sweep deleted %d expired items", len(rows))
        return len(rows)

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
        if not ids:
            return
        id_list = sorted(ids)
        with self._ws.ledger.transaction() as conn:
            for i in range(0, len(id_list), 500):
                chunk = id_list[i : i + 500]
                marks = ",".join("?" * len(chunk))
                conn.execute(
                    f"UPDATE store_items SET expires_at = ? + ttl_minutes * 60 "
                    f"WHERE ttl_minutes IS NOT NULL AND id IN ({marks})",
                    [now, *chunk],
                )

    # -- reads -----------------------------------------------------------------

    def _get(self, op: GetOp, now: float) -> _Row | None:
        rows = self._ws.ledger.query(
            f"SELECT {_COLS} FROM store_items WHERE ns = ? AND key = ? "
            "AND (expires_at IS NULL OR expires_at > ?)",
            (_ns_key(op.namespace), str(op.key), now),
        )
        return _row(rows[0]) if rows else None

    @staticmethod
    def _prefix_sql(prefix: Sequence[str]) -> tuple[str, list[Any]]:
        if not prefix:
            return "1", []
        ns = _ns_key(prefix)
        # ns itself, or any ns starting with "ns." ('/' sorts right after '.').
        return "(ns = ? OR (ns >= ? AND ns < ?))", [ns, ns + ".", ns + "/"]

    def _candidates(self, op: SearchOp, now: float) -> list[_Row]:
        """The live items under the prefix that pass the filter, newest first.

        The filter's conditions that SQL can decide exactly run in SQLite
        (``json_extract`` over ``store_items.value``); only the rest (subset matches
        of nested objects, list equality) is checked in Python. Without a query and
        without a Python remainder the page is cut by SQL (``LIMIT`` / ``OFFSET``).
        """
        where, params = self._prefix_sql(op.namespace_prefix)
        flt_sql, flt_params, rest = compile_filter(op.filter)
        sql = (
            f"SELECT {_COLS} FROM store_items WHERE {where} "
            f"AND (expires_at IS NULL OR expires_at > ?) AND {flt_sql} "
            "ORDER BY updated_at DESC, id DESC"
        )
        params += [now, *flt_params]
        if not rest and not op.query:
            sql += " LIMIT ? OFFSET ?"
            params += [max(op.limit, 0), max(op.offset, 0)]
        rows = [_row(r) for r in self._ws.ledger.query(sql, params)]
        if rest:
            rows = [r for r in rows if matches_filter(r.value, rest)]
            if not op.query:
                rows = rows[max(op.offset, 0) : max(op.offset, 0) + max(op.limit, 0)]
        return rows

    def _search(
        self, op: SearchOp, qvecs: Mapping[str, list[float] | None], now: float
    ) -> list[tuple[_Row, float | None]]:
        rows = self._candidates(op, now)
        if not op.query:
            return [(r, None) for r in rows]
        qvec = qvecs.get(op.query)
        texts = self._texts_of(rows)
        order, cosine = self._rank(op, rows, texts, qvec)
        window = order[op.offset : op.offset + op.limit]
        if cosine is not None and qvec is not None:
            self._fill_cosines(window, texts, qvec, cosine)
        return [(r, None if cosine is None else cosine.get(r.id)) for r in window]

    def _texts_of(self, rows: Sequence[_Row]) -> list[tuple[int, str, str, list[str]]]:
        """``(item_id, ns, vec_id, tokens)`` of the candidates' indexed texts."""
        out: list[tuple[int, str, str, list[str]]] = []
        ids = [r.id for r in rows]
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            marks = ",".join("?" * len(chunk))
            for item_id, ns, vec_id, tokens in self._ws.ledger.query(
                f"SELECT item_id, ns, vec_id, tokens FROM store_texts WHERE item_id IN ({marks})",
                chunk,
            ):
                out.append((int(item_id), str(ns), str(vec_id), str(tokens).split()))
        return out

    def _rank(
        self,
        op: SearchOp,
        rows: Sequence[_Row],
        texts: Sequence[tuple[int, str, str, list[str]]],
        qvec: list[float] | None,
    ) -> tuple[list[_Row], dict[int, float] | None]:
        """Candidates in hybrid order, and the cosines the vector engine returned.

        The order is the package's weighted fusion of the cosine and BM25 (see the
        module docstring); items neither engine returned follow, newest first.
        """
        if not rows:
            return [], None
        by_id = {r.id: r for r in rows}
        # Keyword engine: BM25 over the candidates' texts, max-pooled per item.
        bm25: dict[int, float] = {}
        for (item_id, *_), s in zip(
            texts, _bm25(query_tokens(op.query or ""), [t[3] for t in texts]), strict=True
        ):
            if s > 0:
                bm25[item_id] = max(s, bm25.get(item_id, 0.0))
        # Vector engine: Chroma per namespace, max-pooled per item.
        cosine: dict[int, float] | None = None
        if qvec is not None and texts:
            cosine = self._vector_scores(texts, qvec, op.offset + op.limit, bool(op.filter))
        vector_c = (
            None
            if cosine is None
            else [
                _candidate(by_id[i], vector_score=s)
                for i, s in sorted(cosine.items(), key=lambda p: -p[1])
            ]
        )
        keyword_c = [
            _candidate(by_id[i], bm25_score=s) for i, s in sorted(bm25.items(), key=lambda p: -p[1])
        ]
        fused = fuse_weighted(vector_c, keyword_c, self.memory.settings.retrieval)
        order = [by_id[int(c.id)] for c in fused]
        seen = {int(c.id) for c in fused}
        order.extend(r for r in rows if r.id not in seen)
        return order, cosine

    def _fill_cosines(
        self,
        window: Sequence[_Row],
        texts: Sequence[tuple[int, str, str, list[str]]],
        qvec: list[float],
        cosine: dict[int, float],
    ) -> None:
        """Add the cosine of returned items the vector engine did not return.

        Only in namespaces above the exhaustive limit can a keyword-only hit lack
        one; its vectors are read from Chroma so that every returned indexed item
        carries its cosine.
        """
        want = {r.id for r in window if r.id not in cosine}
        missing: dict[str, dict[str, int]] = {}
        for item_id, ns, vec_id, _ in texts:
            if item_id in want:
                missing.setdefault(ns, {})[vec_id] = item_id
        if not missing:
            return
        q = np.asarray(qvec, dtype=np.float32)
        qn = float(np.linalg.norm(q)) or 1.0
        try:
            for ns, item_of in missing.items():
                vecs = self._ws.vectors.embeddings(self._partition(ns), list(item_of))
                for vec_id, v in vecs.items():
                    vn = float(np.linalg.norm(v)) or 1.0
                    sim = float(np.dot(q, v)) / (qn * vn)
                    item_id = item_of[vec_id]
                    cosine[item_id] = max(sim, cosine.get(item_id, -1.0))
        except Exception as e:  # Chroma down: those items keep score None
            self._warn_once(
                f"cosine:{type(e).__name__}", "store vectors unreadable (%s); scores omitted", e
            )

    def _vector_scores(
        self,
        texts: Sequence[tuple[int, str, str, list[str]]],
        qvec: list[float],
        wanted: int,
        filtered: bool,
    ) -> dict[int, float] | None:
        item_of = {vec_id: item_id for item_id, _ns, vec_id, _ in texts}
        namespaces = sorted({ns for _i, ns, _v, _t in texts})
        try:
            self._sync_vectors(namespaces)
            scores: dict[int, float] = {}
            for ns in namespaces:
                part = self._partition(ns)
                count = self._ws.vectors.count(part)
                if count == 0:
                    continue
                pool = max(wanted * (20 if filtered else 4), 200)
                n = count if count <= _EXACT_VECTOR_LIMIT else min(count, pool)
                for hit in self._ws.vectors.query(part, qvec, n, with_embeddings=False):
                    item_id = item_of.get(hit.id)
                    if item_id is not None:
                        scores[item_id] = max(hit.similarity, scores.get(item_id, -1.0))
            return scores
        except Exception as e:  # embedder / Chroma down: keyword ranking only
            self._warn_once(
                f"vector:{type(e).__name__}",
                "store vector search unavailable (%s); ranking by keywords only",
                e,
            )
            return None

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
        rows = self._ws.ledger.query(
            "SELECT DISTINCT ns FROM store_items WHERE expires_at IS NULL OR expires_at > ?",
            (now,),
        )
        spaces = [_ns_tuple(str(r[0])) for r in rows]
        if op.match_conditions:
            spaces = [s for s in spaces if all(_does_match(c, s) for c in op.match_conditions)]
        if op.max_depth is not None:
            spaces = sorted({s[: op.max_depth] for s in spaces})
        else:
            spaces = sorted(spaces)
        return spaces[op.offset : op.offset + op.limit]

    # -- writes ----------------------------------------------------------------

    def _prepare_puts(self, ops: Sequence[Op]) -> dict[tuple[str, str], _PreparedPut]:
        """Validate every put of a batch before anything is written (last one wins)."""
        out: dict[tuple[str, str], _PreparedPut] = {}
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
                out[(ns, key)] = _PreparedPut(ns, key, None, [], None)
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
            if op.index is False:
                texts: list[tuple[str, str]] = []
            else:
                texts = item_texts(json.loads(value_json), op.index or self.fields)
            if op.ttl is not None and op.ttl <= 0:
                msg = f"ttl must be a positive number of minutes, got {op.ttl!r}."
                raise InvalidInputError(msg)
            out[(ns, key)] = _PreparedPut(ns, key, value_json, texts, op.ttl)
        return out

    def _apply_puts(self, puts: Mapping[tuple[str, str], _PreparedPut], now: float) -> None:
        dropped: dict[str, list[str]] = {}
        with self._ws.ledger.transaction() as conn:
            for p in puts.values():
                row = conn.execute(
                    "SELECT id FROM store_items WHERE ns = ? AND key = ?", (p.ns, p.key)
                ).fetchone()
                old: dict[str, tuple[str, str]] = {}
                if row is not None:
                    for path, vec_id, text_hash in conn.execute(
                        "SELECT path, vec_id, text_hash FROM store_texts WHERE item_id = ?",
                        (row[0],),
                    ):
                        old[str(path)] = (str(vec_id), str(text_hash))
                if p.value_json is None:
                    if row is not None:
                        conn.execute("DELETE FROM store_texts WHERE item_id = ?", (row[0],))
                        conn.execute("DELETE FROM store_items WHERE id = ?", (row[0],))
                        dropped.setdefault(p.ns, []).extend(v for v, _ in old.values())
                    continue
                expires = None if p.ttl is None else now + p.ttl * 60
                item_id = conn.execute(
                    "INSERT INTO store_items (ns, key, value, created_at, updated_at, "
                    "ttl_minutes, expires_at) VALUES (?,?,?,?,?,?,?) "
                    "ON CONFLICT (ns, key) DO UPDATE SET value = excluded.value, "
                    "created_at = CASE WHEN store_items.expires_at IS NOT NULL "
                    "AND store_items.expires_at <= excluded.updated_at "
                    "THEN excluded.created_at ELSE store_items.created_at END, "
                    "updated_at = excluded.updated_at, ttl_minutes = excluded.ttl_minutes, "
                    "expires_at = excluded.expires_at RETURNING id",
                    (p.ns, p.key, p.value_json, now, now, p.ttl, expires),
                ).fetchone()[0]
                new_paths = {path for path, _ in p.texts}
                gone = [path for path in old if path not in new_paths]
                for path in gone:
                    conn.execute(
                        "DELETE FROM store_texts WHERE item_id = ? AND path = ?", (item_id, path)
                    )
                    dropped.setdefault(p.ns, []).append(old[path][0])
                for path, text in p.texts:
                    h = _hash(text)
                    if path in old and old[path][1] == h:
                        continue  # same text: its vector stays valid
                    # vec_hash keeps naming the text whose vector Chroma holds, so the
                    # size check of _sync_vectors stays exact while this one waits.
                    conn.execute(
                        "INSERT INTO store_texts VALUES (?,?,?,?,?,?,?,NULL) "
                        "ON CONFLICT (item_id, path) DO UPDATE SET text = excluded.text, "
                        "tokens = excluded.tokens, text_hash = excluded.text_hash",
                        (
                            item_id,
                            path,
                            p.ns,
                            _vec_id(p.ns, p.key, path),
                            text,
                            " ".join(index_tokens(text)),
                            h,
                        ),
                    )
        # Durable from here; Chroma is derived and repaired by _sync_vectors.
        self._drop_vectors(dropped)
        try:
            self._sync_vectors(sorted({p.ns for p in puts.values() if p.value_json is not None}))
        except Exception as e:
            self._warn_once(
                f"write:{type(e).__name__}",
                "store vectors not updated (%s); they catch up on the next search",
                e,
            )
        self._maybe_sweep(now)

    def _drop_vectors(self, dropped: Mapping[str, Sequence[str]]) -> None:
        """Delete vectors of removed texts; a failure is repaired by the next size check."""
        if not any(dropped.values()):
            return
        try:
            with self._ws.lock.hold():
                self._ws.refresh_if_stale()
                for ns, vec_ids in dropped.items():
                    self._ws.vectors.delete(self._partition(ns), list(vec_ids))
        except Exception as e:
            self._warn_once(
                f"delete:{type(e).__name__}",
                "store vectors not deleted (%s); the next search rebuilds them",
                e,
            )

    def _sync_vectors(self, namespaces: Sequence[str]) -> None:
        """Make each namespace's Chroma collection hold exactly the ledger's texts.

        ``vec_hash`` names the text whose vector Chroma holds for a row (``NULL``:
        none). A collection whose size differs from the rows with a vector (lost
        ``.index/``, a reindex, a failed delete) is dropped and rebuilt; rows whose
        text changed or was never embedded are embedded and upserted.
        """
        if not namespaces:
            return
        ws = self._ws
        ws.refresh_if_stale()
        size = max(1, ws.batch_size)
        for ns in namespaces:
            part = self._partition(ns)
            with ws.lock.hold():  # upserts and their marks happen under the lock
                expected = int(
                    ws.ledger.query(
                        "SELECT count(*) FROM store_texts WHERE ns = ? AND vec_hash IS NOT NULL",
                        (ns,),
                    )[0][0]
                )
                if ws.vectors.count(part) != expected:
                    logger.info("store vectors of namespace %r out of step; rebuilding them", ns)
                    ws.vectors.drop_all([part])
                    with ws.ledger.transaction() as conn:
                        conn.execute("UPDATE store_texts SET vec_hash = NULL WHERE ns = ?", (ns,))
            todo = ws.ledger.query(
                "SELECT item_id, path, vec_id, text, text_hash FROM store_texts "
                "WHERE ns = ? AND (vec_hash IS NULL OR vec_hash != text_hash || ?)",
                (ns, self._vec_suffix),
            )
            for start in range(0, len(todo), size):
                chunk = todo[start : start + size]
                vectors = self._embed([str(r[3]) for r in chunk])
                with ws.lock.hold():
                    ws.vectors.upsert(
                        part, [str(r[2]) for r in chunk], vectors, [{"path": r[1]} for r in chunk]
                    )
                    # The mark is derived: if an OS crash loses it, the row is re-embedded
                    # (or the size check rebuilds the namespace), so it need not fsync.
                    with ws.ledger.transaction(durable=False) as conn:
                        conn.executemany(
                            "UPDATE store_texts SET vec_hash = ? "
                            "WHERE item_id = ? AND path = ? AND text_hash = ?",
                            [(str(r[4]) + self._vec_suffix, r[0], r[1], r[4]) for r in chunk],
                        )
                    ws.bump_generation()

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


def _candidate(
    row: _Row, *, vector_score: float | None = None, bm25_score: float | None = None
) -> Candidate:
    return Candidate(
        id=str(row.id),
        text="",
        category="fact",
        created_at=row.created_at,
        importance=1.0,
        vector_score=vector_score,
        bm25_score=bm25_score,
    )


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
