"""Query embeddings made ahead of a search (the graph's prefetch, compound messages).

A search must embed each of its texts exactly once, whether the vectors were
prefetched or not, and answer the same either way; a failing embedder degrades the
same way too.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

import pytest

from langmem_ext import Memory
from langmem_ext.memory import search as search_module

TEXTS = [
    "Alice likes green tea in the morning",
    "我的妹妹在上海当老师",
    "Carol works as a nurse in Berlin",
    "主人喜欢吃拉面，尤其是豚骨拉面",
    "The dentist appointment is on Friday at 10",
]
COMPOUND = "我妹妹在哪里工作？另外，Alice喜欢喝什么茶？"


class _Spy:
    def __init__(self, memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: Counter[str] = Counter()
        self._lock = threading.Lock()
        emb = memory.engine.embeddings
        inner = emb.embed_query

        def embed_query(text: str) -> list[float]:
            with self._lock:
                self.calls[text] += 1
            return inner(text)

        monkeypatch.setattr(emb, "embed_query", embed_query)


@pytest.fixture
def filled(fake_memory: Memory) -> Memory:
    fake_memory.add_many(TEXTS)
    return fake_memory


def _ids(memory: Memory, query: str) -> list[tuple[str, float]]:
    return [(h.id, h.score) for h in memory.search(query, k=4)]


def test_query_texts_are_what_a_search_embeds(filled: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    engine = filled.engine
    assert engine.query_texts(COMPOUND) == [COMPOUND, "我妹妹在哪里工作？", "Alice喜欢喝什么茶？"]
    repaired = "今天天气不错。等等，我真正想问的是：我妹妹在哪里工作？"
    assert engine.query_texts(repaired) == ["我妹妹在哪里工作？"]
    assert engine.query_texts("   ") == []
    spy = _Spy(filled, monkeypatch)
    filled.search(COMPOUND, k=4)
    assert spy.calls == Counter(engine.query_texts(COMPOUND))  # each once


@pytest.mark.parametrize("query", [COMPOUND, "Where does Carol work?", "拉面"])
def test_a_prefetched_search_embeds_nothing_twice_and_answers_the_same(
    filled: Memory, monkeypatch: pytest.MonkeyPatch, query: str
) -> None:
    plain = _ids(filled, query)
    spy = _Spy(filled, monkeypatch)
    filled.engine.prefetch(query)
    assert _ids(filled, query) == plain
    assert spy.calls == Counter(filled.engine.query_texts(query))
    assert filled.engine._prefetched == {}  # used, not kept


def test_a_failing_prefetch_degrades_like_a_failing_search(
    filled: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    def down(text: str) -> list[float]:
        raise RuntimeError("embedder down")

    monkeypatch.setattr(filled.engine.embeddings, "embed_query", down)
    filled.engine.prefetch("green tea")
    hits = filled.search("green tea", k=2)  # keyword search, no crash
    assert hits and "green tea" in hits[0].text


def test_unused_prefetches_are_bounded(filled: Memory) -> None:
    for i in range(search_module._PREFETCH_KEEP + 10):
        filled.engine.prefetch(f"question number {i}?")
    assert len(filled.engine._prefetched) <= search_module._PREFETCH_KEEP


def test_keyword_modes_prefetch_nothing(filled: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    spy = _Spy(filled, monkeypatch)
    filled.settings.retrieval.mode = "fts"
    try:
        filled.engine.prefetch("green tea")
        filled.search(COMPOUND, k=3)
    finally:
        filled.settings.retrieval.mode = "hybrid"
    assert not spy.calls and filled.engine._prefetched == {}


def test_concurrent_searches_with_prefetch_agree(filled: Memory) -> None:
    from concurrent.futures import ThreadPoolExecutor

    queries = [COMPOUND, "Where does Carol work?", "拉面", "dentist Friday"] * 5
    expected = {q: _ids(filled, q) for q in set(queries)}

    def run(q: str) -> Any:
        filled.engine.prefetch(q)
        return q, _ids(filled, q)

    with ThreadPoolExecutor(4) as pool:
        for q, got in pool.map(run, queries):
            assert got == expected[q]
