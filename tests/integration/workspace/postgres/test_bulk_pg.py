"""A bulk load on PostgreSQL: vectors and keyword rows written a batch per statement
(not a row), and the HNSW index built once after a load that is large next to the
table, on a real server."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from langmem_ext import Memory
from langmem_ext.core.config import EmbeddingSettings, KnowledgeSettings, Settings
from langmem_ext.workspace.postgres._base import PgConnections
from langmem_ext.workspace.postgres.vector_index import (
    BULK_MIN_ROWS,
    PgVectorIndex,
    ensure_extension,
    register_vector,
)

WORDS = [
    "harbour",
    "lantern",
    "violin",
    "orchard",
    "granite",
    "tulip",
    "falcon",
    "saddle",
    "meadow",
    "cobalt",
    "pepper",
    "glacier",
    "walnut",
    "compass",
    "ember",
    "willow",
    "canyon",
    "marble",
    "thistle",
    "copper",
    "biscuit",
    "raven",
    "lagoon",
    "quartz",
    "meadowlark",
    "juniper",
    "anchor",
    "pebble",
    "summit",
    "velvet",
]


@pytest.fixture
def vectors(pg_vector_url: str) -> Iterator[PgVectorIndex]:
    ensure_extension(pg_vector_url)
    db = PgConnections(pg_vector_url, configure=register_vector)
    yield PgVectorIndex(db, "test-embedder")
    db.close()


def _unit(rng: np.random.Generator, n: int, dim: int = 16) -> np.ndarray:
    m = rng.standard_normal((n, dim)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


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


def _count_statements(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Count the round trips psycopg makes, by statement (an ``executemany`` is one:
    psycopg sends its rows in one pipeline)."""
    import psycopg

    seen: Counter[str] = Counter()
    execute, executemany, copy = (
        psycopg.Cursor.execute,
        psycopg.Cursor.executemany,
        (psycopg.Cursor.copy),
    )

    def spy_execute(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        seen["statements"] += 1
        seen[str(query)[:90]] += 1
        return execute(self, query, *args, **kwargs)

    def spy_executemany(self: Any, query: Any, params_seq: Any, **kwargs: Any) -> Any:
        rows = list(params_seq)
        seen["statements"] += 1
        seen[str(query)[:90]] += 1
        return executemany(self, query, rows, **kwargs)

    def spy_copy(self: Any, *args: Any, **kwargs: Any) -> Any:
        seen["statements"] += 1
        return copy(self, *args, **kwargs)

    monkeypatch.setattr(psycopg.Cursor, "execute", spy_execute)
    monkeypatch.setattr(psycopg.Cursor, "executemany", spy_executemany)
    monkeypatch.setattr(psycopg.Cursor, "copy", spy_copy)
    return seen


def test_add_many_writes_a_batch_in_a_bounded_number_of_statements_and_finds_each(
    pg_vector_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "ws"
    settings = Settings(
        workspace=root,
        embeddings=EmbeddingSettings(provider="fake", cache=False),
        knowledge=KnowledgeSettings(extract=False),
        database_url=pg_vector_url,
    )
    memory = Memory(root, settings=settings)
    rng = np.random.default_rng(11)
    import psycopg

    n = BULK_MIN_ROWS + 500
    texts = list(
        dict.fromkeys(
            f"The {a} and the {b} near the {c} ({i})"
            for i, (a, b, c) in enumerate(rng.choice(WORDS, size=(n, 3)))
        )
    )
    memory.add_many(texts[:50], scope="main")  # the tables exist; the scope is not empty
    seen = _count_statements(monkeypatch)
    ids = memory.add_many(texts[50:], scope="main", created_at=[1.7e9 + i for i in range(n - 50)])
    monkeypatch.undo()
    # a write of a statement per row makes several round trips per memory (a ledger
    # look-up, a doc row, a vector, ...: > 4 * 2,450); a batch path a bounded number
    # per batch of the outbox (1,024 memories: 3 batches here)
    assert seen["statements"] <= 40 * 3, "\n".join(f"{c} {k}" for k, c in seen.most_common(12))
    assert len(ids) == n - 50
    pg = memory.workspace
    assert pg.vectors.count("main") == n and pg.keyword.count("main") == n
    with psycopg.connect(pg_vector_url) as conn:  # the planner knows the tables' sizes
        sizes = dict(
            conn.execute(
                "SELECT relname, reltuples FROM pg_class WHERE relname IN ('entries', 'docs')"
            ).fetchall()
        )
    assert sizes == {"entries": n, "docs": n}
    for k in rng.choice(n - 50, size=25, replace=False):  # each is found by its own words
        hits = memory.search(texts[50 + int(k)], scope="main", k=5)
        assert ids[int(k)] in [h.id for h in hits]
    memory.close()
