"""Search reads vectors kept in the keyword index and overlaps BM25 with the vector side.

Behaviour tests (no timings): results are the same whether a vector comes from the
index or from Chroma, the degrade chain still holds with BM25 on a worker thread,
and concurrent, async and forked callers get the same answers.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest

from langmem_ext import Memory
from langmem_ext.memory.recall import search as search_module
from langmem_ext.memory.types import SearchHit

TEXTS = [
    "Alice likes green tea in the morning",
    "Bob drinks black coffee at the office",
    "主人喜欢吃拉面，尤其是豚骨拉面",
    "The dentist appointment is on Friday at 10",
    "Carol works as a nurse in Berlin",
    "Green tea and jasmine tea are Alice's favourites",
    "我的妹妹在上海当老师",
    "Remind me to call David on Monday",
]
QUERIES = [
    "green tea",
    "拉面",
    "who works in Berlin",
    "coffee at the office",
    "老师",
    "Monday call",
]


def _hits(memory: Memory, query: str, **kw: Any) -> list[tuple[str, float, dict[str, float]]]:
    return [(h.id, h.score, h.debug) for h in memory.search(query, **kw)]


def _kept(memory: Memory, ids: list[str]) -> dict[str, Any]:
    ws = memory.workspace
    found = ws.keyword.docs_with_vectors(ids, ws.vectors.model_name)
    return {i: v for i, (_d, v) in found.items()}


@pytest.fixture
def filled(fake_memory: Memory) -> Memory:
    fake_memory.add_many(TEXTS)
    fake_memory.background.wait()  # the knowledge graph's triples (the graph stage reads them)
    return fake_memory


def test_kept_vectors_equal_chroma_vectors(filled: Memory) -> None:
    ws = filled.workspace
    ids = [d.id for d in ws.keyword.scope_docs("main")]
    kept = _kept(filled, ids)
    stored = ws.vectors.embeddings("main", ids)
    assert set(kept) == set(stored) == set(ids)
    for i in ids:
        assert kept[i] is not None
        assert np.allclose(kept[i], stored[i], rtol=0, atol=1e-6)


def _candidate_vectors(memory: Memory) -> dict[str, Any]:
    cands = memory.engine._vector("green tea", "main", 20)
    assert cands and all(c.embedding is not None for c in cands)
    return {c.id: np.asarray(c.embedding) for c in cands}


def test_results_same_with_and_without_kept_vectors(filled: Memory) -> None:
    before = {q: _hits(filled, q, k=5) for q in QUERIES}
    vectors = _candidate_vectors(filled)
    kw = filled.workspace.keyword
    with kw._lock:
        kw._conn.execute("DELETE FROM kept_vectors")  # an index written before vectors were kept
    assert {q: _hits(filled, q, k=5) for q in QUERIES} == before  # Chroma serves them
    from_chroma = _candidate_vectors(filled)
    assert vectors.keys() == from_chroma.keys()
    assert all(np.allclose(vectors[i], from_chroma[i], atol=1e-6) for i in vectors)
    kw.set_meta(f"kept_vectors:{filled.workspace.vectors.model_name}", "")
    filled.workspace.flush_vectors()  # copies them back once
    assert all(v is not None for v in _kept(filled, [d.id for d in kw.scope_docs("main")]).values())
    assert {q: _hits(filled, q, k=5) for q in QUERIES} == before


def test_update_and_delete_keep_vectors_in_step(filled: Memory) -> None:
    ws = filled.workspace
    entry = filled.search("dentist", k=1)[0]
    filled.update(entry.id, "The dentist moved the appointment to Tuesday")
    kept = _kept(filled, [entry.id])[entry.id]
    assert np.allclose(kept, ws.vectors.embeddings("main", [entry.id])[entry.id], atol=1e-6)
    filled.delete(entry.id)
    assert ws.keyword._q("SELECT count(*) FROM kept_vectors WHERE id = ?", (entry.id,))[0][0] == 0
    assert entry.id not in [h.id for h in filled.search("dentist appointment", k=5)]


def test_a_copy_of_another_text_is_not_used(filled: Memory) -> None:
    """A writer that does not keep copies (an older version) re-embeds: Chroma serves it."""
    ws = filled.workspace
    entry = filled.search("dentist", k=1)[0]
    assert _kept(filled, [entry.id])[entry.id] is not None
    other = sqlite3.connect(ws.keyword.path)  # the older writer: another connection
    with other:
        other.execute("UPDATE docs SET vec_hash = 'other' WHERE id = ?", (entry.id,))
    other.close()
    assert _kept(filled, [entry.id])[entry.id] is None
    cands = {c.id: c for c in filled.engine._vector("dentist appointment", "main", 20)}
    chroma = ws.vectors.embeddings("main", [entry.id])[entry.id]
    assert np.allclose(np.asarray(cands[entry.id].embedding), chroma, atol=1e-6)


def test_hybrid_degrades_to_fts_then_substring(
    filled: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    fts = _hits(filled, "green tea", mode="fts")
    keyword = _hits(filled, "green tea", mode="keyword")

    def down(_text: str) -> list[float]:
        raise RuntimeError("embedder down")

    monkeypatch.setattr(filled.engine.embeddings, "embed_query", down)
    assert _hits(filled, "green tea") == fts

    def broken(*_a: Any, **_k: Any) -> Any:
        raise sqlite3.OperationalError("fts5: corrupt")

    monkeypatch.setattr(filled.workspace.keyword, "bm25", broken)
    assert _hits(filled, "green tea") == keyword


def test_fts_failure_in_hybrid_falls_back_to_substring(
    filled: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_a: Any, **_k: Any) -> Any:
        raise sqlite3.OperationalError("fts5: corrupt")

    monkeypatch.setattr(filled.workspace.keyword, "bm25", broken)
    hits = filled.search("green tea", k=3)
    assert hits and "green tea" in hits[0].text.lower()


def test_concurrent_searches_equal_sequential(filled: Memory) -> None:
    expected = {q: _hits(filled, q, k=4) for q in QUERIES}
    jobs = QUERIES * 6
    with ThreadPoolExecutor(8) as ex:
        got = list(ex.map(lambda q: (q, _hits(filled, q, k=4)), jobs))
    assert all(hits == expected[q] for q, hits in got)


def test_async_search_equals_sync(filled: Memory) -> None:
    async def run() -> list[list[SearchHit]]:
        return list(await asyncio.gather(*(filled.asearch(q, k=3) for q in QUERIES)))

    got = asyncio.run(run())
    assert [[h.id for h in hits] for hits in got] == [
        [h.id for h in filled.search(q, k=3)] for q in QUERIES
    ]


def test_scopes_stay_isolated_with_kept_vectors(fake_memory: Memory) -> None:
    fake_memory.add("alice likes green tea", scope="alice")
    fake_memory.add("bob likes green tea", scope="bob")
    for scope in ("alice", "bob"):
        hits = fake_memory.search("green tea", scope=scope, k=5)
        assert [h.text for h in hits] == [f"{scope} likes green tea"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_keyword_pool_works_in_a_forked_child() -> None:
    assert search_module._keyword_pool().submit(lambda: 1).result() == 1
    pid = os.fork()
    if pid == 0:  # child: the parent's pool threads do not exist here
        ok = search_module._keyword_pool().submit(lambda: 2).result(timeout=10) == 2
        os._exit(0 if ok else 1)
    _pid, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
