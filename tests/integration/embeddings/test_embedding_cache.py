"""The embedding cache: a protocol in embeddings.py, SQLite in the workspace, kept by reindex."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings

from langmem_ext import Memory, Settings
from langmem_ext.embeddings.factory import CachedEmbeddings, HashingEmbeddings
from langmem_ext.workspace.sqlite.embedding_cache import SqliteEmbeddingCache


class Counting(HashingEmbeddings):
    def __init__(self) -> None:
        self.embedded: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.embedded += texts
        return super().embed_documents(texts)


class DictCache:
    """Any object with get_many / put_many / close is a cache."""

    def __init__(self) -> None:
        self.data: dict[tuple[str, str], list[float]] = {}

    def get_many(self, model: str, hashes: Sequence[str]) -> dict[str, list[float]]:
        return {h: self.data[(model, h)] for h in hashes if (model, h) in self.data}

    def put_many(self, model: str, vectors: Mapping[str, Sequence[float]]) -> None:
        self.data.update({(model, h): list(v) for h, v in vectors.items()})

    def close(self) -> None:
        pass


@pytest.mark.parametrize("kind", ["sqlite", "dict"])
def test_cached_vectors_are_not_embedded_again(tmp_path: Path, kind: str) -> None:
    inner = Counting()
    cache: Any = SqliteEmbeddingCache(tmp_path / "e.db") if kind == "sqlite" else DictCache()
    emb = CachedEmbeddings(inner, cache)
    first = emb.embed_documents(["a b", "c d", "a b"])
    assert inner.embedded == ["a b", "c d"]
    again = CachedEmbeddings(inner, cache).embed_documents(["c d", "e f"])
    assert inner.embedded == ["a b", "c d", "e f"]
    assert again[0] == pytest.approx(first[1], abs=1e-7)
    emb.close()


def test_a_broken_cache_never_breaks_embedding(tmp_path: Path, caplog: Any) -> None:
    (tmp_path / "e.db").mkdir()  # not a database file
    emb = CachedEmbeddings(Counting(), SqliteEmbeddingCache(tmp_path / "e.db"))
    assert len(emb.embed_documents(["a b"])) == 1
    assert "embedding cache unreadable" in caplog.text


def test_the_workspace_cache_survives_a_reindex(tmp_path: Path) -> None:
    inner = Counting()
    s = Settings(workspace=tmp_path / "ws")
    mem = Memory(settings=s, embeddings=inner)
    assert isinstance(mem.embeddings, CachedEmbeddings)
    assert isinstance(mem.embeddings.cache, SqliteEmbeddingCache)
    mem.add("User likes ramen")
    mem.background.wait()  # the knowledge graph embeds its triples there
    seen = len(inner.embedded)
    mem.reindex()
    assert len(inner.embedded) == seen  # every vector came from the cache
    assert mem.search("ramen")[0].text == "User likes ramen"
    mem.close()


def test_embeddings_py_imports_no_storage() -> None:
    import ast

    import langmem_ext.embeddings.factory as module

    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert "sqlite3" not in imported
    assert not any(m.startswith("langmem_ext.workspace") for m in imported)
    assert issubclass(CachedEmbeddings, Embeddings)
