"""The vector index's contract, through
:class:`~langmem_ext.workspace.protocols.VectorIndex` only."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from langmem_ext.workspace.engines import Engines
from langmem_ext.workspace.protocols import VectorIndex
from langmem_ext.workspace.sqlite.passage_rows import partition

from .conftest import MODEL, VECTOR_ENGINES, unit_vector, url_of

TEXTS = {
    "a": "black coffee in the morning",
    "b": "violin lessons on tuesday",
    "c": "flight to lisbon",
    "d": "我每天早上喝黑咖啡",
}


@pytest.fixture(params=VECTOR_ENGINES)
def engine_url(request: pytest.FixtureRequest) -> str | None:
    """The URL of the engine set under test (the vector index's sets)."""
    return url_of(request)


def _fill(vectors: VectorIndex, scope: str = "main") -> None:
    ids = list(TEXTS)
    vectors.upsert(
        scope,
        ids,
        np.stack([unit_vector(TEXTS[i]) for i in ids]),
        [{"category": "fact", "created_at": 1.0} for _ in ids],
    )


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_the_index_names_its_embedder(vectors: VectorIndex) -> None:
    assert vectors.model_name == MODEL


def test_upsert_then_count(vectors: VectorIndex) -> None:
    assert vectors.count("main") == 0
    _fill(vectors)
    assert vectors.count("main") == 4


def test_query_ranks_by_cosine_similarity(vectors: VectorIndex) -> None:
    _fill(vectors)
    q = unit_vector(TEXTS["c"]) + 0.3 * unit_vector(TEXTS["a"])
    hits = vectors.query("main", q.tolist(), 4)
    expected = sorted(TEXTS, key=lambda i: -_cosine(q, unit_vector(TEXTS[i])))
    assert [h.id for h in hits] == expected
    for h in hits:
        assert h.similarity == pytest.approx(_cosine(q, unit_vector(TEXTS[h.id])), abs=1e-4)


def test_query_returns_the_stored_vectors_when_asked(vectors: VectorIndex) -> None:
    _fill(vectors)
    hit = vectors.query("main", unit_vector(TEXTS["d"]).tolist(), 1)[0]
    assert hit.id == "d" and hit.similarity == pytest.approx(1.0, abs=1e-5)
    assert np.allclose(hit.embedding, unit_vector(TEXTS["d"]), atol=1e-6)
    bare = vectors.query("main", unit_vector(TEXTS["d"]).tolist(), 1, with_embeddings=False)
    assert bare[0].id == "d" and bare[0].embedding is None


def test_query_among_given_ids(vectors: VectorIndex) -> None:
    _fill(vectors)
    hits = vectors.query("main", unit_vector(TEXTS["a"]).tolist(), 4, ids=["b", "c"])
    assert {h.id for h in hits} == {"b", "c"}


def test_upsert_replaces_a_vector(vectors: VectorIndex) -> None:
    _fill(vectors)
    vectors.upsert("main", ["a"], np.stack([unit_vector("something else")]), [{"created_at": 1.0}])
    assert vectors.count("main") == 4
    stored = vectors.embeddings("main", ["a"])["a"]
    assert np.allclose(stored, unit_vector("something else"), atol=1e-6)


def test_delete_removes_and_ignores_unknown_ids(vectors: VectorIndex) -> None:
    _fill(vectors)
    vectors.delete("main", ["a", "zz"])
    assert vectors.count("main") == 3
    assert "a" not in {h.id for h in vectors.query("main", unit_vector(TEXTS["a"]).tolist(), 4)}
    vectors.delete("nowhere", ["a"])  # a partition that does not exist


def test_partitions_are_apart(vectors: VectorIndex) -> None:
    _fill(vectors, "main")
    vectors.upsert("u1", ["x"], np.stack([unit_vector(TEXTS["a"])]), [{"created_at": 1.0}])
    prose = partition("prose", "main")
    vectors.upsert(
        prose, ["MEMORY.md#^p-1"], np.stack([unit_vector(TEXTS["a"])]), [{"created_at": 1.0}]
    )
    assert [h.id for h in vectors.query("u1", unit_vector(TEXTS["a"]).tolist(), 5)] == ["x"]
    assert vectors.count(prose) == 1 and vectors.count("main") == 4
    assert vectors.query("u2", unit_vector(TEXTS["a"]).tolist(), 5) == []


def test_embeddings_of_ids_leave_missing_ones_out(vectors: VectorIndex) -> None:
    _fill(vectors)
    got = vectors.embeddings("main", ["b", "nope"])
    assert set(got) == {"b"}
    assert vectors.embeddings("nowhere", ["b"]) == {}


def test_drop_all_empties_partitions(vectors: VectorIndex) -> None:
    _fill(vectors, "main")
    _fill(vectors, "u1")
    vectors.drop_all(["main"])
    assert vectors.count("main") == 0 and vectors.count("u1") == 4


def test_vectors_survive_a_reopen(open_engines: Callable[..., Engines]) -> None:
    first = open_engines()
    _fill(first.vectors)
    first.close()
    again = open_engines()
    assert again.vectors.count("main") == 4
    assert again.vectors.query("main", unit_vector(TEXTS["b"]).tolist(), 1)[0].id == "b"


def test_discarding_the_index_drops_its_vectors(engines: Engines) -> None:
    _fill(engines.vectors)
    _fill(engines.vectors, "u1")
    engines.discard_index()
    assert engines.vectors.count("main") == 0 and engines.vectors.count("u1") == 0
    assert engines.vectors.query("main", unit_vector(TEXTS["a"]), 3) == []
    _fill(engines.vectors)  # the index works after it
    assert engines.vectors.count("main") == len(TEXTS)
