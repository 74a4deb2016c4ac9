"""ChromaMemoryStore as a drop-in for LangGraph's SqliteStore / PostgresStore.

Each test pins one thing a user switching stores relies on: cosine-scale scores,
their own embedder in ``index``, dotted filter keys, the TTL sweeper API, and async
puts that are grouped into one write (one transaction, one embedding call).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings

from langmem_ext import Memory
from langmem_ext.store.chroma import ChromaMemoryStore, _vec_id, partition_of


def _cos(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def _letters(texts: list[str]) -> list[list[float]]:
    """A tiny deterministic 6-d embedder: counts of a few letter groups (+1 smoothing)."""
    groups = ("aeiou", "rstl", "nmh", "bcdfg", "kpqvwxyz", " ")
    return [[1.0 + sum(t.lower().count(c) for c in g) for g in groups] for t in texts]


class CountingEmbeddings(Embeddings):
    """``_letters`` as a LangChain ``Embeddings`` that records each call's batch size."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(len(texts))
        return _letters(texts)

    def embed_query(self, text: str) -> list[float]:
        return _letters([text])[0]


@pytest.fixture
def store(memory: Memory) -> ChromaMemoryStore:
    return ChromaMemoryStore(memory, index={"fields": ["text"]})


# -- scores on LangGraph's scale ------------------------------------------------------------


def test_query_score_is_the_cosine_of_query_and_item(
    memory: Memory, store: ChromaMemoryStore
) -> None:
    docs = {
        "ramen": "Alice loves eating ramen noodles",
        "bike": "Alice rides a red bicycle to work",
        "code": "The wifi password hint is XK-42-ZEBRA",
    }
    for k, t in docs.items():
        store.put(("s",), k, {"text": t})
    for query in ("what food does alice like", "XK-42-ZEBRA", docs["bike"]):
        hits = store.search(("s",), query=query)
        q = memory.embeddings.embed_query(query)
        for h in hits:
            expected = _cos(q, memory.embeddings.embed_documents([docs[h.key]])[0])
            assert h.score == pytest.approx(expected, abs=1e-4)
            assert -1.0 <= h.score <= 1.0  # type: ignore[operator]
    # An exact match scores ~1.0 (the fused score gave 1.15), as in SqliteStore.
    exact = store.search(("s",), query=docs["bike"])[0]
    assert exact.key == "bike" and exact.score == pytest.approx(1.0, abs=1e-3)


def test_hybrid_ranking_still_decides_the_order(store: ChromaMemoryStore) -> None:
    # The rare code is found by its keywords; the order is the fused one even where
    # the cosines alone would order the hits differently.
    store.put(("h",), "code", {"text": "The wifi password hint is XK-42-ZEBRA"})
    store.put(("h",), "other", {"text": "Passwords should be long and unique"})
    hits = store.search(("h",), query="XK-42-ZEBRA")
    assert hits[0].key == "code"
    assert all(h.score is not None for h in hits)


# -- the user's own embedder ------------------------------------------------------------------


def test_index_accepts_an_embedding_function(memory: Memory) -> None:
    store = ChromaMemoryStore(memory, index={"dims": 6, "embed": _letters, "fields": ["text"]})
    store.put(("u",), "a", {"text": "banana bread"})
    store.put(("u",), "b", {"text": "xyz kvw"})
    hits = store.search(("u",), query="banana")
    assert {h.key for h in hits} == {"a", "b"}
    q = _letters(["banana"])[0]
    for h in hits:
        assert h.score == pytest.approx(_cos(q, _letters([h.value["text"]])[0]), abs=1e-5)
    assert store.index_config["dims"] == 6
    # The vectors in Chroma are the function's (6-d), not the memory's (512-d).
    part = store._partition("u")
    vecs = memory.workspace.vectors.embeddings(part, [_vec_id("u", "a", "text")])
    assert [len(v) for v in vecs.values()] == [6]
    assert memory.workspace.vectors.count(part) == 2
    assert memory.workspace.vectors.count(partition_of(("u",))) == 0


def test_index_accepts_an_embeddings_object_and_batches_it(memory: Memory) -> None:
    emb = CountingEmbeddings()
    store = ChromaMemoryStore(memory, index={"dims": 6, "embed": emb, "fields": ["text"]})
    store.put(("u",), "a", {"text": "banana bread"})
    assert store.search(("u",), query="banana bread")[0].score == pytest.approx(1.0, abs=1e-5)


def test_index_accepts_an_async_embedding_function(memory: Memory) -> None:
    async def aembed(texts: list[str]) -> list[list[float]]:
        return _letters(texts)

    store = ChromaMemoryStore(memory, index={"dims": 6, "embed": aembed, "fields": ["text"]})

    async def run() -> list[Any]:
        await store.aput(("u",), "a", {"text": "banana bread"})
        return await store.asearch(("u",), query="banana bread")

    hits = asyncio.run(run())
    assert hits[0].key == "a" and hits[0].score == pytest.approx(1.0, abs=1e-5)
    store.put(("u",), "b", {"text": "kiwi"})  # the sync API works with it too
    assert {h.key for h in store.search(("u",), query="kiwi")} == {"a", "b"}


def test_index_accepts_a_provider_model_string(memory: Memory) -> None:
    from langchain_ollama import OllamaEmbeddings

    store = ChromaMemoryStore(
        memory, index={"dims": 768, "embed": "ollama:nomic-embed-text", "fields": ["text"]}
    )
    assert isinstance(store.embeddings, OllamaEmbeddings)
    assert store.embeddings.model == "nomic-embed-text"


def test_sqlite_store_text_fields_key_is_accepted(memory: Memory) -> None:
    store = ChromaMemoryStore(memory, index={"dims": 6, "embed": _letters, "text_fields": ["body"]})  # type: ignore[typeddict-unknown-key]
    assert store.fields == ["body"]


def test_memory_embedder_in_index_keeps_the_default_collections(memory: Memory) -> None:
    store = ChromaMemoryStore(memory, index={"embed": memory.embeddings, "fields": ["text"]})
    store.put(("d",), "a", {"text": "hello"})
    assert memory.workspace.vectors.count(partition_of(("d",))) == 1


def test_a_new_embedder_reembeds_old_items(tmp_path: Path) -> None:
    mem = Memory(tmp_path / "ws")
    ChromaMemoryStore(mem, index={"fields": ["text"]}).put(("r",), "a", {"text": "banana bread"})
    s2 = ChromaMemoryStore(mem, index={"dims": 6, "embed": _letters, "fields": ["text"]})
    hit = s2.search(("r",), query="banana bread")[0]
    assert hit.key == "a" and hit.score == pytest.approx(1.0, abs=1e-5)
    mem.close()


# -- nested filters -----------------------------------------------------------------------------

ROWS: dict[str, dict[str, Any]] = {
    "a": {"text": "alpha", "meta": {"lang": "en", "stars": 5, "ok": True, "on": "2026-01-05"}},
    "b": {"text": "beta", "meta": {"lang": "fr", "stars": 2, "ok": False, "on": "2026-03-01"}},
    "c": {"text": "gamma", "meta": {"lang": "en", "stars": 3.5, "ok": None}},
    "d": {"text": "delta", "meta": "flat", "n": "5"},
    "e": {"text": "epsilon"},
}


@pytest.mark.parametrize("query", [None, "alpha"])
def test_dotted_filter_keys_reach_nested_fields(
    store: ChromaMemoryStore, query: str | None
) -> None:
    for k, v in ROWS.items():
        store.put(("f",), k, v)

    def keys(flt: dict[str, Any]) -> set[str]:
        return {i.key for i in store.search(("f",), filter=flt, query=query, limit=50)}

    assert keys({"meta.lang": "en"}) == {"a", "c"}
    assert keys({"meta.lang": {"$ne": "en"}}) == {"b", "d", "e"}
    assert keys({"meta.stars": {"$gte": 3}}) == {"a", "c"}
    assert keys({"meta.stars": {"$gt": 2, "$lt": 5}}) == {"c"}
    assert keys({"meta.stars": 5}) == {"a"}
    assert keys({"meta.ok": True}) == {"a"}
    assert keys({"meta.ok": False}) == {"b"}
    assert keys({"meta.ok": None}) == {"c", "d", "e"}
    assert keys({"meta.on": {"$gte": "2026-02-01"}}) == {"b"}  # ISO dates compare as text
    assert keys({"meta.lang": "en", "meta.stars": {"$lte": 4}}) == {"c"}
    assert keys({"meta": {"lang": "fr"}}) == {"b"}  # a nested dict still matches a subset
    assert keys({"n": {"$gt": 1}}) == set()  # "5" is a string, not a number
    assert keys({"meta.lang.x": "en"}) == set()


def test_unknown_filter_operator_is_refused(store: ChromaMemoryStore) -> None:
    store.put(("f",), "a", {"text": "alpha", "n": 1})
    with pytest.raises(ValueError, match=r"\$in"):
        store.search(("f",), filter={"n": {"$in": [1]}})


def test_filtered_pages_without_query_are_exact(store: ChromaMemoryStore) -> None:
    for i in range(30):
        store.put(("p",), f"k{i:02d}", {"text": f"item {i}", "m": {"i": i, "even": i % 2 == 0}})
    pages = [
        store.search(("p",), filter={"m.even": True, "m.i": {"$gte": 4}}, limit=5, offset=o)
        for o in (0, 5, 10, 15)
    ]
    assert [len(p) for p in pages] == [5, 5, 3, 0]
    keys = [i.key for p in pages for i in p]
    assert keys == [f"k{i:02d}" for i in range(28, 3, -2)]  # newest first


# -- TTL sweeper API ------------------------------------------------------------------------------


@pytest.fixture
def ttl_store(memory: Memory) -> Iterator[ChromaMemoryStore]:
    s = ChromaMemoryStore(memory, ttl={"default_ttl": 1.0, "sweep_interval_minutes": 1})
    yield s
    s.stop_ttl_sweeper()


def _expire_all(memory: Memory) -> None:
    with memory.workspace.ledger.transaction() as conn:
        conn.execute("UPDATE store_items SET expires_at = ?", (time.time() - 1,))


def test_sweep_ttl_is_sync_and_awaitable(memory: Memory, ttl_store: ChromaMemoryStore) -> None:
    ttl_store.put(("t",), "a", {"text": "x"})
    ttl_store.put(("t",), "b", {"text": "y"})
    _expire_all(memory)
    assert ttl_store.sweep_ttl() == 2
    ttl_store.put(("t",), "c", {"text": "z"})
    _expire_all(memory)

    async def run() -> int:
        return await ttl_store.sweep_ttl()

    assert asyncio.run(run()) == 1


def test_sweeper_thread_starts_sweeps_and_stops(
    memory: Memory, ttl_store: ChromaMemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    swept = []
    real = ttl_store.sweep_ttl

    def spy() -> Any:
        n = real()
        swept.append(int(n))
        return n

    monkeypatch.setattr(ttl_store, "sweep_ttl", spy)
    ttl_store.put(("t",), "a", {"text": "x"})
    _expire_all(memory)
    fut = ttl_store.start_ttl_sweeper(sweep_interval_minutes=0.0005)  # type: ignore[arg-type]
    assert ttl_store.start_ttl_sweeper() is not fut or not fut.done()  # a second start is harmless
    deadline = time.monotonic() + 20
    while 1 not in swept and time.monotonic() < deadline:
        time.sleep(0.01)
    assert 1 in swept
    assert ttl_store.stop_ttl_sweeper(timeout=10)
    assert fut.done()
    assert ttl_store.stop_ttl_sweeper()  # stopping a stopped sweeper is fine


def test_sweeper_api_is_awaitable(ttl_store: ChromaMemoryStore) -> None:
    async def run() -> bool:
        await ttl_store.start_ttl_sweeper()
        return bool(await ttl_store.stop_ttl_sweeper(timeout=10))

    assert asyncio.run(run())


def test_sweeper_without_ttl_config_does_nothing(store: ChromaMemoryStore) -> None:
    fut = store.start_ttl_sweeper()
    assert fut.done()
    assert store.stop_ttl_sweeper()


# -- batched async writes -----------------------------------------------------------------------


def test_concurrent_aputs_share_one_embedding_call_and_transaction(memory: Memory) -> None:
    emb = CountingEmbeddings()
    store = ChromaMemoryStore(memory, index={"dims": 6, "embed": emb, "fields": ["text"]})
    commits: list[str] = []
    memory.workspace.ledger._conn.set_trace_callback(
        lambda sql: commits.append(sql) if sql.strip().upper() == "COMMIT" else None
    )

    async def run() -> None:
        await asyncio.gather(
            *(store.aput(("b",), f"k{i}", {"text": f"t{i} ab"}) for i in range(200))
        )

    asyncio.run(run())
    memory.workspace.ledger._conn.set_trace_callback(None)
    assert len(store.search(("b",), limit=500)) == 200
    assert sum(emb.calls) == 200
    # One drain takes the first put, the next takes the other 199 (some embedders
    # cap a call at the workspace batch size, 256 by default).
    assert len(emb.calls) <= 3
    assert len(commits) <= 10


def test_batched_aputs_keep_each_callers_error_to_itself(store: ChromaMemoryStore) -> None:
    async def run() -> list[Any]:
        return await asyncio.gather(
            store.aput(("e",), "good", {"text": "fine"}),
            store.aput(("e",), "bad", {"text": object()}),  # not JSON
            store.aget(("e",), "good"),
            store.aput(("e",), "good2", {"text": "fine too"}),
            return_exceptions=True,
        )

    out = asyncio.run(run())
    assert out[0] is None and out[3] is None
    assert isinstance(out[1], ValueError)
    assert store.get(("e",), "good") is not None and store.get(("e",), "good2") is not None
    assert store.get(("e",), "bad") is None


def test_last_aput_to_a_key_wins_within_a_batch(store: ChromaMemoryStore) -> None:
    async def run() -> None:
        await asyncio.gather(*(store.aput(("w",), "k", {"text": f"v{i}"}) for i in range(50)))
        await store.adelete(("w",), "gone")

    asyncio.run(run())
    item = store.get(("w",), "k")
    assert item is not None and item.value == {"text": "v49"}


def test_async_store_works_across_event_loops(store: ChromaMemoryStore) -> None:
    for i in range(3):
        asyncio.run(store.aput(("l",), f"k{i}", {"text": f"loop {i}"}))
    assert len(store.search(("l",))) == 3


def test_filters_with_infinite_nan_and_huge_numbers(store: ChromaMemoryStore) -> None:
    for k, price in {"a": 10, "b": 20.5, "c": -3}.items():
        store.put(("n",), k, {"text": k, "price": price})

    def keys(flt: dict[str, Any]) -> set[str]:
        return {i.key for i in store.search(("n",), filter=flt)}

    assert keys({"price": {"$lt": float("inf")}}) == {"a", "b", "c"}
    assert keys({"price": {"$gt": float("-inf")}}) == {"a", "b", "c"}
    assert keys({"price": {"$lt": 10**100}}) == {"a", "b", "c"}
    assert keys({"price": {"$gt": -(10**100)}}) == {"a", "b", "c"}
    assert keys({"price": 10**30}) == set()
    assert keys({"price": {"$eq": float("nan")}}) == set()
    assert keys({"price": {"$ne": float("nan")}}) == {"a", "b", "c"}
    assert keys({"price": {"$gt": float("nan")}}) == set()


def test_sql_filters_agree_with_the_python_semantics() -> None:
    import itertools
    import json
    import sqlite3

    from langmem_ext.workspace.item_filter import matches_filter
    from langmem_ext.workspace.sqlite.json_filter import compile_filter

    leaves: list[Any] = [
        None,
        True,
        False,
        0,
        1,
        1.0,
        2.5,
        -1,
        2**70,
        "a",
        "b",
        "1",
        "",
        "2026-01-01",
        [1],
        {"x": 1},
    ]
    values: list[dict[str, Any]] = (
        [{}] + [{"f": v} for v in leaves] + [{"m": {"f": v}} for v in leaves]
    )
    args: list[Any] = [
        None,
        True,
        False,
        0,
        1,
        2.5,
        -1,
        2**70,
        "a",
        "1",
        "2026",
        float("inf"),
        float("nan"),
    ]
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, value TEXT)")
    db.executemany(
        "INSERT INTO t VALUES (?, ?)", [(i, json.dumps(v)) for i, v in enumerate(values)]
    )
    for key, op, arg in itertools.product(
        ["f", "m.f"], ["=", "$eq", "$ne", "$gt", "$gte", "$lt", "$lte"], args
    ):
        flt = {key: arg if op == "=" else {op: arg}}
        sql, params, rest = compile_filter(flt)
        ids = {r[0] for r in db.execute(f"SELECT id FROM t WHERE {sql}", params)}
        got = {i for i in ids if matches_filter(values[i], rest)}
        want = {i for i, v in enumerate(values) if matches_filter(v, flt)}
        assert got == want, (flt, sorted(got ^ want))


def test_a_lost_vector_mark_is_repaired(memory: Memory, store: ChromaMemoryStore) -> None:
    # The vec_hash mark is written without fsync: an OS crash may lose it. The next
    # search must then repair the namespace instead of serving stale vectors.
    store.put(("m",), "a", {"text": "Alice loves ramen"})
    store.put(("m",), "b", {"text": "Bob rides a bike"})
    with memory.workspace.ledger.transaction() as conn:
        conn.execute("UPDATE store_texts SET vec_hash = NULL WHERE ns = 'm'")
    hit = store.search(("m",), query="Bob rides a bike")[0]
    assert hit.key == "b" and hit.score == pytest.approx(1.0, abs=1e-3)
    assert memory.workspace.vectors.count(partition_of(("m",))) == 2
    rows = memory.workspace.ledger.query("SELECT count(*) FROM store_texts WHERE vec_hash IS NULL")
    assert rows[0][0] == 0
