"""The write path: one "store these entries" step per engine, each entered once.

A memory written with its embedding goes to the Markdown file, the ledger, the vector
index and the doc table in that order and never waits in the vector outbox; when the
embedder or the vector index fails, the write still stands and the outbox catches up.
"""

from __future__ import annotations

import logging
import time

import pytest

from langmem_ext import Memory
from langmem_ext.core.errors import IndexUnavailableError
from langmem_ext.workspace.records import EntryState, HistoryRow


def test_add_writes_the_vector_with_the_doc_and_leaves_the_outbox_empty(
    fake_memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = fake_memory.workspace
    flushed: list[int] = []
    original = ws.flush_vectors

    def counting_flush(**kwargs: object) -> int:
        n = original(**kwargs)  # type: ignore[arg-type]
        flushed.append(n)
        return n

    monkeypatch.setattr(ws, "flush_vectors", counting_flush)
    first = fake_memory.add("User is allergic to peanuts", scope="alice")
    second = fake_memory.confirm(
        fake_memory.save("User lives in Lyon", scope="alice").id, scope="alice"
    )
    assert flushed == [0, 0]  # the outbox had nothing left: the write stored the vectors
    assert ws.keyword.vector_todo() == []
    hits = fake_memory.search("peanuts allergy", scope="alice")
    assert hits[0].id == first
    assert fake_memory.search("Lyon", scope="alice")[0].id == second.id


def test_generation_moves_once_per_write(fake_memory: Memory) -> None:
    ws = fake_memory.workspace
    fake_memory.add("User likes tea", scope="main")
    before = int(ws.keyword.get_meta("generation") or 0)
    fake_memory.add("User likes jazz", scope="main")
    assert int(ws.keyword.get_meta("generation") or 0) == before + 1


def test_a_failing_embedder_leaves_the_memory_written_and_queued(
    fake_memory: Memory, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    ws = fake_memory.workspace

    def broken(texts: list[str]) -> list[list[float]]:
        raise RuntimeError("model server down")

    monkeypatch.setattr(ws.embeddings, "embed_documents", broken)
    with caplog.at_level(logging.WARNING):
        entry_id = fake_memory.add("User owns a red bike", scope="main")
    assert "vector index not updated" in caplog.text
    assert "red bike" in fake_memory.long_term_text(scope="main")
    assert [d.id for d in ws.keyword.vector_todo()] == [entry_id]
    monkeypatch.undo()
    assert ws.flush_vectors() == 1
    assert fake_memory.search("red bike", scope="main")[0].id == entry_id


def test_a_vector_index_down_at_write_time_catches_up_on_the_next_flush(
    fake_memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = fake_memory.workspace
    calls: list[str] = []

    def down(scope: str, *args: object, **kwargs: object) -> None:
        calls.append(scope)
        raise IndexUnavailableError("chroma is down")

    with monkeypatch.context() as m:
        m.setattr(ws.vectors, "upsert", down)
        entry_id = fake_memory.add("User plays the cello", scope="main", category="fact")
    assert calls  # the write tried, then left the entry to the outbox (logged)
    assert fake_memory.get_entry(entry_id, scope="main").text == "User plays the cello"
    assert ws.flush_vectors() == 1
    assert ws.keyword.vector_todo() == []


def test_ledger_add_stores_states_and_history_in_one_call(fake_memory: Memory) -> None:
    ledger = fake_memory.workspace.ledger
    now = time.time()
    states = [
        EntryState(
            id=f"m-{i:010x}",
            scope="main",
            path="MEMORY.md",
            category="fact",
            text_hash=f"h{i}",
            importance=0.5,
            created_at=now,
            updated_at=now,
            last_access=None,
            access_count=0,
            source="user",
            verified=True,
            deleted_at=None,
        )
        for i in range(3)
    ]
    history = [
        HistoryRow(st.id, "main", "add", None, f"text {i}", now) for i, st in enumerate(states)
    ]
    ledger.entries.add(states, history)
    assert set(ledger.entries.many([st.id for st in states])) == {st.id for st in states}
    assert [h.new_text for h in ledger.entries.history(states[2].id, "main")] == ["text 2"]


def test_add_many_across_daily_files_gives_each_file_its_own_rows(fake_memory: Memory) -> None:
    day = 24 * 3600.0
    t0 = 1_700_000_000.0
    texts = ["User ran 5 km", "User swam 1 km", "User ran 10 km"]
    ids = fake_memory.add_many(
        texts, scope="main", target="daily", category="episode", created_at=[t0, t0 + day, t0]
    )
    ws = fake_memory.workspace
    assert ws.keyword.vector_todo() == []
    docs = ws.keyword.docs(ids)
    kept = {d.id: d.text for d in docs.values()}
    assert kept == dict(zip(ids, texts, strict=True))
    assert fake_memory.search("swam", scope="main")[0].id == ids[1]


def test_a_bulk_import_goes_through_the_outbox_in_batches(
    fake_memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = fake_memory.workspace
    monkeypatch.setattr(ws, "batch_size", 2)  # one outbox batch: 8 texts
    seen: list[tuple[int, int]] = []
    small = fake_memory.add_many(
        [f"User visited city {i}" for i in range(8)], progress=lambda d, t: seen.append((d, t))
    )
    assert seen == [(0, 8), (8, 8)]
    seen.clear()
    bulk = fake_memory.add_many(
        [f"User read book {i}" for i in range(10)], progress=lambda d, t: seen.append((d, t))
    )
    assert seen == [(0, 10), (8, 10), (10, 10)]  # the outbox's batches
    assert ws.keyword.vector_todo() == []
    assert fake_memory.search("book 9")[0].id == bulk[9]
    assert fake_memory.search("city 3")[0].id == small[3]
