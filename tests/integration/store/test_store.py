"""ChromaMemoryStore: the conformance suite (with InMemoryStore as control) and its own rules."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import BaseStore, PutOp
from langgraph.store.memory import InMemoryStore
from store_conformance import StoreConformance

from langmem_ext import InvalidInputError, Memory
from langmem_ext.embeddings.factory import UniversalSentenceEmbeddings
from langmem_ext.store.chroma import (
    ChromaMemoryStore,
    create_memory_store,
    item_texts,
    partition_of,
)


class TestChromaMemoryStoreConformance(StoreConformance):
    preserves_created_at = True
    supports_ttl = True

    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[BaseStore]:
        mem = Memory(tmp_path / "ws")
        yield ChromaMemoryStore(mem, index={"fields": ["text"]})
        mem.close()


class TestInMemoryStoreControl(StoreConformance):
    """LangGraph's own store, to show the checks encode LangGraph semantics."""

    lists_only_live_namespaces = False

    @pytest.fixture
    def store(self) -> BaseStore:
        return InMemoryStore(
            index={"dims": 512, "embed": UniversalSentenceEmbeddings(), "fields": ["text"]}
        )


# -- our own rules -------------------------------------------------------------------------


@pytest.fixture
def store(memory: Memory) -> ChromaMemoryStore:
    return ChromaMemoryStore(memory)


def _vectors(memory: Memory, ns: tuple[str, ...]) -> int:
    return memory.workspace.vectors.count(partition_of(ns))


def test_puts_are_durable_across_reopen(tmp_path: Path) -> None:
    mem = Memory(tmp_path / "ws")
    s = ChromaMemoryStore(mem)
    s.put(("prefs", "alice"), "food", {"content": "Alice likes ramen"})
    created = s.get(("prefs", "alice"), "food").created_at  # type: ignore[union-attr]
    mem.close()

    mem2 = Memory(tmp_path / "ws")
    s2 = ChromaMemoryStore(mem2)
    item = s2.get(("prefs", "alice"), "food")
    assert item is not None and item.value == {"content": "Alice likes ramen"}
    assert item.created_at == created
    assert s2.search(("prefs",), query="what food does alice like")[0].key == "food"
    mem2.close()


def test_deleted_index_is_rebuilt_on_search(tmp_path: Path) -> None:
    mem = Memory(tmp_path / "ws")
    s = ChromaMemoryStore(mem)
    ns = ("docs", "u1")
    s.put(ns, "a", {"text": "The cat sleeps on the sofa"})
    s.put(ns, "b", {"text": "Stock markets fell sharply today"})
    assert _vectors(mem, ns) == 2
    mem.close()
    shutil.rmtree(tmp_path / "ws" / ".index")

    mem2 = Memory(tmp_path / "ws")
    s2 = ChromaMemoryStore(mem2)
    assert _vectors(mem2, ns) == 0
    res = s2.search(ns, query="where does the kitten nap")
    assert res[0].key == "a"
    assert _vectors(mem2, ns) == 2
    mem2.close()


def test_memory_reindex_does_not_lose_store_vectors(
    memory: Memory, store: ChromaMemoryStore
) -> None:
    memory.add("User likes ramen")
    store.put(("docs",), "a", {"text": "The cat sleeps on the sofa"})
    memory.reindex()
    assert store.search(("docs",), query="kitten nap")[0].key == "a"
    assert _vectors(memory, ("docs",)) == 1
    assert memory.search("ramen")[0].text == "User likes ramen"


def test_store_items_and_memories_do_not_mix(memory: Memory, store: ChromaMemoryStore) -> None:
    memory.add("User likes ramen", scope="main")
    store.put(("main",), "x", {"text": "User likes ramen too"})
    assert [h.text for h in memory.search("ramen", scope="main")] == ["User likes ramen"]
    assert [i.key for i in store.search((), query="ramen")] == ["x"]
    assert partition_of(("main",)) != "main"
    assert memory.scopes() == ["main"]


def test_created_at_kept_and_updated_at_moves(store: ChromaMemoryStore) -> None:
    store.put(("d",), "k", {"text": "one"})
    a = store.get(("d",), "k")
    store.put(("d",), "k", {"text": "two"})
    b = store.get(("d",), "k")
    assert a is not None and b is not None
    assert b.created_at == a.created_at and b.updated_at > a.updated_at


def test_hybrid_keyword_evidence_helps_rare_terms(store: ChromaMemoryStore) -> None:
    store.put(("h",), "code", {"text": "The wifi password hint is XK-42-ZEBRA"})
    store.put(("h",), "other", {"text": "Passwords should be long and unique"})
    store.put(("h",), "cjk", {"text": "主人喜欢吃拉面"})
    assert store.search(("h",), query="XK-42-ZEBRA")[0].key == "code"
    assert store.search(("h",), query="拉面")[0].key == "cjk"


def test_keyword_ranking_when_the_embedder_is_down(
    store: ChromaMemoryStore, memory: Memory, monkeypatch: pytest.MonkeyPatch, caplog: Any
) -> None:
    store.put(("h",), "a", {"text": "Alice likes ramen"})
    store.put(("h",), "b", {"text": "Bob likes tea"})

    def boom(text: str) -> list[float]:
        raise RuntimeError("embedder offline")

    monkeypatch.setattr(memory.embeddings, "embed_query", boom)
    res = store.search(("h",), query="tea")
    # Ranked by keywords; no query vector, so no cosine to report as the score.
    assert res[0].key == "b" and res[0].score is None
    assert "keywords only" in caplog.text


def test_bad_values_write_nothing(store: ChromaMemoryStore) -> None:
    with pytest.raises(InvalidInputError, match="JSON"):
        store.batch(
            [
                PutOp(("v",), "ok", {"text": "fine"}),
                PutOp(("v",), "bad", {"text": object()}),
            ]
        )
    assert store.get(("v",), "ok") is None
    with pytest.raises(InvalidInputError, match="operator"):
        store.put(("v",), "ok", {"n": 1})
        store.search(("v",), filter={"n": {"$regex": "x"}})


def test_ttl_refresh_and_sweep(store: ChromaMemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [1_000_000.0]
    monkeypatch.setattr("langmem_ext.store.chroma.time.time", lambda: clock[0])
    store.put(("t",), "a", {"text": "refreshed by reads"}, ttl=10)
    store.put(("t",), "b", {"text": "never read"}, ttl=10)
    clock[0] += 8 * 60
    assert store.get(("t",), "a") is not None  # refresh: expires at +18 min now
    assert store.get(("t",), "b", refresh_ttl=False) is not None
    clock[0] += 5 * 60
    assert store.get(("t",), "a") is not None
    assert store.get(("t",), "b") is None
    assert [i.key for i in store.search(("t",))] == ["a"]
    assert store.list_namespaces() == [("t",)]
    clock[0] += 11 * 60
    assert store.list_namespaces() == []
    assert store.sweep_ttl() == 2
    assert store.memory.workspace.ledger.query("SELECT count(*) FROM store_items")[0][0] == 0


def test_ttl_config_default_and_expired_item_restarts(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = [2_000_000.0]
    monkeypatch.setattr("langmem_ext.store.chroma.time.time", lambda: clock[0])
    s = create_memory_store(
        memory, fields=["text"], ttl={"default_ttl": 1, "refresh_on_read": False}
    )
    s.put(("t",), "k", {"text": "v1"})
    first = s.get(("t",), "k")
    clock[0] += 30
    assert s.get(("t",), "k") is not None
    clock[0] += 31  # 61 s after the put: expired (reads did not refresh)
    assert s.get(("t",), "k") is None
    s.put(("t",), "k", {"text": "v2"})
    again = s.get(("t",), "k")
    assert first is not None and again is not None and again.created_at > first.created_at


def test_index_config_validation(memory: Memory) -> None:
    s = ChromaMemoryStore(memory, index={"embed": memory.embeddings, "dims": 512})
    assert s.index_config == {"fields": ["$"], "dims": 512}


def test_item_texts_paths() -> None:
    value = {"content": {"title": "T", "body": "B"}, "tags": ["x", "y"], "n": 3, "flag": True}
    assert item_texts(value, ["$"]) == [("$", "T\nB\nx\ny\n3")]
    assert item_texts(value, ["content.title", "tags[*]"]) == [
        ("content.title", "T"),
        ("tags[*].0", "x"),
        ("tags[*].1", "y"),
    ]
    assert item_texts(value, ["missing"]) == []


def test_partition_names_are_safe_and_distinct() -> None:
    import re

    names = {partition_of(ns) for ns in [("a", "b"), ("a-b",), ("A", "b"), ("日本",), ("x" * 80,)]}
    assert len(names) == 5
    for n in names:
        assert re.fullmatch(r"kv\.[a-z0-9.\-]+", n) and ".." not in n and len(n) < 80


async def test_async_batch_and_sweep(store: ChromaMemoryStore) -> None:
    await store.aput(("a",), "k", {"text": "async value"})
    assert (await store.aget(("a",), "k")).value == {"text": "async value"}  # type: ignore[union-attr]
    assert await store.asweep_ttl() == 0


def test_put_survives_a_chroma_failure_and_search_repairs(
    store: ChromaMemoryStore, memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from langmem_ext.core.errors import IndexUnavailableError

    def down(*args: Any, **kwargs: Any) -> None:
        raise IndexUnavailableError("chroma down")

    with monkeypatch.context() as m:
        m.setattr(memory.workspace.vectors, "upsert", down)
        store.put(("r",), "a", {"text": "The cat sleeps on the sofa"})
        store.put(("r",), "b", {"text": "Stock markets fell sharply today"})
    assert store.get(("r",), "a") is not None
    assert _vectors(memory, ("r",)) == 0
    assert store.search(("r",), query="where does the kitten nap")[0].key == "a"
    assert _vectors(memory, ("r",)) == 2


def test_large_namespaces_use_nearest_neighbours(
    store: ChromaMemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("langmem_ext.store.search._EXACT_VECTOR_LIMIT", 2)
    store.batch(
        [
            PutOp(("big",), f"k{i}", {"text": t})
            for i, t in enumerate(
                [
                    "The cat sleeps on the sofa",
                    "Stock markets fell",
                    "Rain is expected",
                    "Bread recipe",
                ]
            )
        ]
    )
    res = store.search(("big",), query="kitten napping on a couch", limit=4)
    assert res[0].key == "k0" and len(res) == 4
