"""The pgvector index, the advisory workspace lock and the PostgreSQL checkpointer on a
real server, each against what the embedded engine does."""

from __future__ import annotations

import multiprocessing
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from langmem_ext.core.errors import InvalidInputError, WorkspaceLockTimeout
from langmem_ext.workspace.postgres._base import PgConnections
from langmem_ext.workspace.postgres.lock import PgWorkspaceLock
from langmem_ext.workspace.postgres.vector_index import (
    BULK_MIN_ROWS,
    PgVectorIndex,
    ensure_extension,
    register_vector,
)
from langmem_ext.workspace.vector_index import VectorIndex


@pytest.fixture
def vectors(pg_vector_url: str) -> Iterator[PgVectorIndex]:
    ensure_extension(pg_vector_url)
    db = PgConnections(pg_vector_url, configure=register_vector)
    yield PgVectorIndex(db, "test-embedder")
    db.close()


def _unit(rng: np.random.Generator, n: int, dim: int = 16) -> np.ndarray:
    m = rng.standard_normal((n, dim)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_nearest_neighbours_match_exact_cosine_and_chroma(
    vectors: PgVectorIndex, tmp_path: Path
) -> None:
    rng = np.random.default_rng(7)
    m = _unit(rng, 300)
    ids = [f"m-{i:03d}" for i in range(300)]
    vectors.upsert("main", ids, m, [{"i": i} for i in range(300)])
    vectors.upsert("bob", ["b-1"], m[:1], [{}])  # another scope never shows up
    chroma = VectorIndex(tmp_path / "chroma", None, "test-embedder")
    chroma.upsert("main", ids, m, [{"i": i} for i in range(300)])
    q = _unit(rng, 1)[0]
    exact = np.argsort(-(m @ q))[:10]
    hits = vectors.query("main", q.tolist(), 10)
    assert [h.id for h in hits] == [ids[i] for i in exact]
    assert [h.similarity for h in hits] == pytest.approx([float(m[i] @ q) for i in exact], abs=1e-5)
    assert np.allclose(hits[0].embedding, m[exact[0]], atol=1e-6)
    assert [h.id for h in chroma.query("main", q.tolist(), 10)] == [h.id for h in hits]
    chroma.close()
    only = vectors.query("main", q.tolist(), 5, with_embeddings=False, ids=ids[:3])
    assert {h.id for h in only} == set(ids[:3]) and only[0].embedding is None
    assert vectors.count("main") == 300 and vectors.count("bob") == 1
    assert vectors.query("carol", q.tolist(), 5) == []


def test_upsert_replace_delete_and_drop(vectors: PgVectorIndex) -> None:
    rng = np.random.default_rng(1)
    assert vectors.count("main") == 0 and vectors.embeddings("main", ["x"]) == {}
    vectors.delete("main", ["x"])  # nothing stored yet: no table, no error
    m = _unit(rng, 3)
    vectors.upsert("main", ["a", "b", "c"], m, [{}, {}, {}])
    vectors.upsert("main", ["a"], m[2:3], [{"v": 2}])  # replaced, not duplicated
    got = vectors.embeddings("main", ["a", "b", "zz"])
    assert set(got) == {"a", "b"} and np.allclose(got["a"], m[2], atol=1e-6)
    assert vectors.query("main", m[2].tolist(), 1)[0].id in {"a", "c"}
    vectors.delete("main", ["b", "zz"])
    assert vectors.count("main") == 2
    with pytest.raises(InvalidInputError, match="dimension"):
        vectors.upsert("main", ["d"], _unit(rng, 1, dim=8), [{}])
    vectors.drop_all(["main"])
    assert vectors.count("main") == 0


def _hold_in_child(url: str, name: str, started: Any, release: Any) -> None:
    db = PgConnections(url, max_size=2)
    lock = PgWorkspaceLock(db, name, timeout=5)
    with lock.hold():
        started.set()
        release.wait(30)
    db.close()


def test_the_lock_excludes_another_process_and_times_out_with_the_typed_error(
    pg_url: str,
) -> None:
    ctx = multiprocessing.get_context("spawn")
    started, release = ctx.Event(), ctx.Event()
    child = ctx.Process(target=_hold_in_child, args=(pg_url, "main", started, release))
    child.start()
    db = PgConnections(pg_url, max_size=4)
    try:
        assert started.wait(60)
        lock = PgWorkspaceLock(db, "main", timeout=0.3)
        with pytest.raises(WorkspaceLockTimeout, match="process"), lock.hold():
            pass
        with lock.try_hold() as held:
            assert held is False
        with PgWorkspaceLock(db, "other-scope", timeout=0.3).hold():
            pass  # another scope is free
        release.set()
        child.join(30)
        with lock.hold(), lock.hold():  # free again, and re-entrant
            pass
    finally:
        release.set()
        child.join(30)
        db.close()


def _wait_for_whole_in_child(url: str) -> None:
    db = PgConnections(url, max_size=2)
    with PgWorkspaceLock(db, "main", timeout=120).hold():
        pass  # never reached: killed while it waits


def test_a_killed_process_waiting_for_the_lock_does_not_stall_the_others(pg_url: str) -> None:
    """A whole-workspace wait of a process killed meanwhile would keep every later
    scope hold queued behind it until its own timeout; the server ends it instead."""
    db = PgConnections(pg_url, max_size=4)
    ctx = multiprocessing.get_context("spawn")
    child = ctx.Process(target=_wait_for_whole_in_child, args=(pg_url,))
    try:
        with PgWorkspaceLock(db, "main", timeout=5).hold_scope("s1"):
            child.start()
            deadline = time.monotonic() + 60
            while not _waiting(pg_url):
                assert time.monotonic() < deadline, "the child never waited for the lock"
                time.sleep(0.05)
            child.kill()
            child.join(30)
            other = PgConnections(pg_url, max_size=2)
            try:
                began = time.monotonic()
                with PgWorkspaceLock(other, "main", timeout=15).hold_scope("s2"):
                    took = time.monotonic() - began
            finally:
                other.close()
        assert took < 10, took
    finally:
        if child.is_alive():
            child.kill()
        db.close()


def _waiting(url: str) -> bool:
    """Whether some session waits for an advisory lock."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
            "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
        ).fetchone()
    return bool(row and row[0])


def test_the_lock_serialises_threads_and_is_released_after_an_error(pg_url: str) -> None:
    db = PgConnections(pg_url, max_size=4)
    lock = PgWorkspaceLock(db, "main", timeout=10)
    inside: list[int] = []
    overlaps: list[int] = []

    def work(i: int) -> None:
        with lock.hold():
            inside.append(i)
            if len(inside) > 1:
                overlaps.append(i)
            time.sleep(0.01)
            inside.remove(i)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert overlaps == []
    with pytest.raises(RuntimeError), lock.hold():
        raise RuntimeError
    other = PgWorkspaceLock(db, "main", timeout=0.5)  # a second holder object: the key is free
    with other.try_hold() as held:
        assert held
    db.close()


def test_checkpoints_survive_a_new_saver_on_the_same_url(pg_url: str) -> None:
    from langgraph.graph import END, START, MessagesState, StateGraph

    from langmem_ext.workspace.postgres.checkpoints import postgres_saver

    def reply(state: MessagesState) -> dict[str, Any]:
        return {"messages": [("ai", f"seen {len(state['messages'])}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("reply", reply)
    builder.add_edge(START, "reply")
    builder.add_edge("reply", END)
    config: Any = {"configurable": {"thread_id": "t-1"}}
    with postgres_saver(pg_url) as saver:
        builder.compile(checkpointer=saver).invoke({"messages": [("user", "hi")]}, config)
    with postgres_saver(pg_url) as saver:
        out = builder.compile(checkpointer=saver).invoke({"messages": [("user", "again")]}, config)
    assert [m.content for m in out["messages"]] == ["hi", "seen 1", "again", "seen 3"]


async def test_the_async_checkpointer_reads_what_the_sync_one_wrote(pg_url: str) -> None:
    from langgraph.graph import END, START, MessagesState, StateGraph

    from langmem_ext.workspace.postgres.checkpoints import async_postgres_saver, postgres_saver

    def reply(state: MessagesState) -> dict[str, Any]:
        return {"messages": [("ai", "ok")]}

    builder = StateGraph(MessagesState)
    builder.add_node("reply", reply)
    builder.add_edge(START, "reply")
    builder.add_edge("reply", END)
    config: Any = {"configurable": {"thread_id": "t-2"}}
    with postgres_saver(pg_url) as saver:
        builder.compile(checkpointer=saver).invoke({"messages": [("user", "hi")]}, config)
    async with async_postgres_saver(pg_url) as saver:
        state = await builder.compile(checkpointer=saver).aget_state(config)
    assert [m.content for m in state.values["messages"]] == ["hi", "ok"]


def test_a_url_of_another_scheme_is_refused_without_its_password() -> None:
    with pytest.raises(InvalidInputError, match="PostgreSQL URL") as caught:
        PgConnections("mysql://ann:s3cret@db/x")
    assert "s3cret" not in str(caught.value)
    from langmem_ext.workspace.postgres._base import check_url

    for url in ("POSTGRES://a@h/db", "postgresql+psycopg://a@h/db", " postgres://a@h/db"):
        assert check_url(url) == "postgresql://a@h/db"


def test_an_unreachable_server_is_not_reported_as_a_missing_extension(tmp_path: Path) -> None:
    from langmem_ext.core.errors import LangmemError

    with pytest.raises(LangmemError, match="cannot be reached") as caught:
        ensure_extension(f"postgresql://ann:s3cret@/db?host={tmp_path}/none")
    assert "s3cret" not in str(caught.value) and "pgvector" not in str(caught.value)


def test_an_unreachable_database_is_a_typed_error_without_the_password(tmp_path: Path) -> None:
    from langmem_ext.core.errors import LangmemError

    url = f"postgresql://ann:s3cret@/db?host={tmp_path}/no-server"
    started = time.monotonic()
    with pytest.raises(LangmemError, match="cannot be reached") as caught:
        PgConnections(url, connect_timeout=1)
    assert "s3cret" not in str(caught.value) and "ann@" in str(caught.value)
    assert time.monotonic() - started < 10


def _has_index(index: PgVectorIndex) -> bool:
    with index._db.connection() as conn:
        row = conn.execute("SELECT to_regclass(%s)", (f"{index.table}_hnsw",)).fetchone()
    return row[0] is not None


def test_a_large_load_builds_the_index_once_at_its_end_and_answers_exactly(
    vectors: PgVectorIndex,
) -> None:
    rng = np.random.default_rng(3)
    n = BULK_MIN_ROWS + 500
    m = _unit(rng, n)
    ids = [f"m-{i:05d}" for i in range(n)]
    with vectors.bulk(n):
        for start in range(0, n, 1000):  # the batches of a sync
            part = slice(start, start + 1000)
            vectors.upsert("main", ids[part], m[part], [{"i": i} for i in range(n)][part])
        assert not _has_index(vectors)  # loading into a bare table
        q = m[7]
        assert vectors.query("main", q.tolist(), 1)[0].id == ids[7]  # queries still answer
    assert _has_index(vectors) and vectors.count("main") == n
    for k in (0, 999, 1000, n - 1):  # rows of every batch are found through the index
        hits = vectors.query("main", m[k].tolist(), 10)
        exact = np.argsort(-(m @ m[k]))[:10]
        assert hits[0].id == ids[k] and [h.id for h in hits][:5] == [ids[i] for i in exact][:5]
    with vectors.bulk(10):  # small next to the table: the index stays and grows
        vectors.upsert("main", ["new"], m[:1], [{}])
        assert _has_index(vectors)
    with vectors.bulk(BULK_MIN_ROWS):  # large, but smaller than the table: it stays too
        assert _has_index(vectors)


def test_a_batch_twice_with_one_id_keeps_its_last_vector(vectors: PgVectorIndex) -> None:
    m = _unit(np.random.default_rng(5), 3)
    vectors.upsert("main", ["a", "b", "a"], m, [{"v": 0}, {"v": 1}, {"v": 2}])
    got = vectors.embeddings("main", ["a", "b"])
    assert np.allclose(got["a"], m[2], atol=1e-6) and np.allclose(got["b"], m[1], atol=1e-6)


def test_an_index_dropped_by_a_load_that_stopped_is_built_on_the_next_open(
    pg_vector_url: str, vectors: PgVectorIndex
) -> None:
    m = _unit(np.random.default_rng(9), 50)
    vectors.upsert("main", [f"m-{i}" for i in range(50)], m, [{}] * 50)
    with vectors._db.connection() as conn:
        conn.execute(f"DROP INDEX {vectors.table}_hnsw")
    db = PgConnections(pg_vector_url, configure=register_vector)
    try:
        again = PgVectorIndex(db, "test-embedder")
        assert again.count("main") == 50
        assert _has_index(again)
    finally:
        db.close()


def test_a_table_first_made_inside_a_write_that_rolls_back_is_still_there_after(
    vectors: PgVectorIndex,
) -> None:
    """The first vectors of an embedder can come inside a write's transaction; when
    that write fails, its rows go, but the table stays (the index remembered its
    dimension: every later write and search would fail on a missing table)."""
    m = _unit(np.random.default_rng(11), 2)

    class Failed(Exception):
        pass

    with pytest.raises(Failed), vectors._db.transaction():
        vectors.upsert("main", ["a"], m[:1], [{}])
        raise Failed
    assert vectors.count("main") == 0  # the write's rows went with it
    vectors.upsert("main", ["b"], m[1:], [{}])
    assert [h.id for h in vectors.query("main", m[1].tolist(), 2)] == ["b"]
    assert _has_index(vectors)
