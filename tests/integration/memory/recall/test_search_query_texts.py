"""What a search embeds: ``SearchEngine.query_texts``, each text exactly once."""

from __future__ import annotations

import threading
from collections import Counter

import pytest

from langmem_ext import Memory

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


def test_query_texts_are_what_a_search_embeds(
    filled: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = filled.engine
    assert engine.query_texts(COMPOUND) == [COMPOUND, "我妹妹在哪里工作？", "Alice喜欢喝什么茶？"]
    repaired = "今天天气不错。等等，我真正想问的是：我妹妹在哪里工作？"
    assert engine.query_texts(repaired) == ["我妹妹在哪里工作？"]
    assert engine.query_texts("   ") == []
    spy = _Spy(filled, monkeypatch)
    filled.search(COMPOUND, k=4)
    assert spy.calls == Counter(engine.query_texts(COMPOUND))  # each once
