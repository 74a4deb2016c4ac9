"""A bulk load through ``Memory.add_many`` on PostgreSQL: a batch written in a bounded
number of round trips (not a few per row), every memory found after it, and the
planner's statistics fresh, on a real server (the pgvector index's own bulk path is
tested in ``test_engines_pg.py``)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from langmem_ext import Memory
from langmem_ext.core.config import EmbeddingSettings, KnowledgeSettings, Settings
from langmem_ext.workspace.postgres.vector_index import BULK_MIN_ROWS

WORDS = [
    "harbour", "lantern", "violin", "orchard", "granite", "tulip", "falcon", "saddle",
    "meadow", "cobalt", "pepper", "glacier", "walnut", "compass", "ember", "willow",
    "canyon", "marble", "thistle", "copper", "biscuit", "raven", "lagoon", "quartz",
]  # fmt: skip


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
    import psycopg

    fake = EmbeddingSettings(provider="fake", cache=False)  # no graph extraction: its
    off = KnowledgeSettings(extract=False)  # background writes are not the load's
    ws = tmp_path / "ws"
    memory = Memory(ws, settings=Settings(workspace=ws, database_url=pg_vector_url,
                                          embeddings=fake, knowledge=off))  # fmt: skip
    rng = np.random.default_rng(11)

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
                "SELECT relname, reltuples FROM pg_class WHERE relname IN ('entries', 'doc_rows')"
            ).fetchall()
        )
    assert sizes == {"entries": n, "doc_rows": n}
    for k in rng.choice(n - 50, size=25, replace=False):  # each is found by its own words
        hits = memory.search(texts[50 + int(k)], scope="main", k=5)
        assert ids[int(k)] in [h.id for h in hits]
    memory.close()
