"""The Markdown documents as versioned rows, and the whole PostgreSQL engine set
opened from one URL: documents, ledger and keyword index commit together."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from langmem_ext.core.errors import InvalidInputError, InvalidPathError
from langmem_ext.workspace.docs import Doc
from langmem_ext.workspace.postgres.engines import PostgresEngines, open_postgres_engines
from langmem_ext.workspace.records import EntryState, HistoryRow


@pytest.fixture
def engines(pg_vector_url: str) -> Iterator[PostgresEngines]:
    opened = open_postgres_engines(pg_vector_url, model_name="test-embedder", lock_timeout=2)
    yield opened
    opened.close()


def test_documents_keep_every_version_and_refuse_other_scopes_files(
    engines: PostgresEngines,
) -> None:
    docs = engines.documents
    assert docs.read("main", "MEMORY.md") == "" and docs.list("main") == []
    docs.write("main", "MEMORY.md", "# Memory\n\n- likes tea\n")
    docs.write("main", "memory/2026-01-31.md", "- met Bob\n")
    docs.write("main", "memory/2026-01-02.md", "- 去了北京\n")
    docs.write("main", "MEMORY.md", "# Memory\n\n- likes green tea\n")
    docs.write("u1", "memory/scopes/u1/LONG_TERM.md", "- u1's fact\n")
    assert docs.read("main", "MEMORY.md") == "# Memory\n\n- likes green tea\n"
    assert docs.list("main") == ["MEMORY.md", "memory/2026-01-02.md", "memory/2026-01-31.md"]
    assert docs.scopes() == ["main", "u1"]
    assert [v for v, _t, _at in docs.versions("main", "MEMORY.md")] == [1, 2]
    assert docs.delete("main", "memory/2026-01-02.md") is True
    assert docs.delete("main", "memory/2026-01-02.md") is False
    assert docs.read("main", "memory/2026-01-02.md") == ""
    assert docs.list("main") == ["MEMORY.md", "memory/2026-01-31.md"]
    assert docs.versions("main", "memory/2026-01-02.md")[-1][1] is None  # the tombstone
    for scope, rel in [
        ("main", "../MEMORY.md"), ("main", "/MEMORY.md"), ("main", "notes.txt"),
        ("main", "memory/scopes/u1/LONG_TERM.md"), ("u1", "MEMORY.md"), ("main", ""),
        ("main", "memory\\x.md"),
    ]:  # fmt: skip
        with pytest.raises(InvalidPathError):
            docs.write(scope, rel, "x")
    assert docs.read("u1", "memory/scopes/u1/LONG_TERM.md") == "- u1's fact\n"


def test_both_document_stores_list_the_same_tree(engines: PostgresEngines, tmp_path: Path) -> None:
    """``tree()``: memory files, profiles and transcripts of every scope, by path, on
    either engine; what is no file of the tree (or was deleted) is left out."""
    from langmem_ext.workspace.documents import FileDocuments
    from langmem_ext.workspace.layout import Layout

    files = FileDocuments(Layout(tmp_path))
    written = [
        ("main", "MEMORY.md"), ("main", "PROFILE.md"), ("main", "memory/2026-01-02.md"),
        ("main", "memory/transcripts/2026-01-02.md"), ("u1", "memory/scopes/u1/PROFILE.md"),
        ("u1", "memory/scopes/u1/transcripts/2026-01-03.md"), ("main", "memory/2026-01-05.md"),
    ]  # fmt: skip
    for store in (files, engines.documents):
        for scope, rel in written:
            store.write(scope, rel, f"- {rel}\n")
        store.delete("main", "memory/2026-01-05.md")
    (tmp_path / "memory" / "notes.md").write_text("- not a memory file\n", "utf-8")
    (tmp_path / "memory" / "2026-01-09.md").symlink_to(tmp_path / "MEMORY.md")
    expected = sorted(written[:-1], key=lambda f: f[1])
    assert files.tree() == expected
    assert engines.documents.tree() == expected


def _state(entry_id: str) -> EntryState:
    return EntryState(entry_id, "main", "MEMORY.md", "fact", "h", 1.0, 10.0, 10.0, None, 0,
                      "user", False, None)  # fmt: skip


def test_document_ledger_and_index_writes_commit_together(engines: PostgresEngines) -> None:
    """The file-then-ledger-then-index order of the embedded engines is one commit here."""
    keyword = engines.open_keyword()
    doc = Doc("m-1", "main", "MEMORY.md", 3, "fact", "likes green tea", "h", 10.0, 10.0, 1.0)

    def write_all() -> None:
        engines.documents.write("main", "MEMORY.md", "# Memory\n\n- likes green tea\n")
        engines.ledger.entries.add([_state("m-1")], [HistoryRow("m-1", "main", "add", None,
                                                                "likes green tea", 10.0)])  # fmt: skip
        keyword.apply(upserts=[doc])

    with pytest.raises(RuntimeError), engines.lock.hold(), engines.ledger.transaction():
        write_all()
        raise RuntimeError("killed between the writes")
    assert engines.documents.read("main", "MEMORY.md") == ""
    assert engines.ledger.entries.get("m-1") is None and keyword.docs(["m-1"]) == {}
    with engines.lock.hold(), engines.ledger.transaction():
        write_all()
    assert "green tea" in engines.documents.read("main", "MEMORY.md")
    assert engines.ledger.entries.exists("m-1")
    assert [d.id for d, _ in keyword.bm25("main", "green tea", 5)] == ["m-1"]


def test_the_engine_set_shares_one_database_and_discards_only_derived_data(
    engines: PostgresEngines, pg_vector_url: str
) -> None:
    keyword = engines.open_keyword()
    assert engines.open_keyword() is keyword and engines.name == "postgresql"
    assert engines.leases.acquire("decay", "main", "replica-a", 30)
    keyword.apply(upserts=[Doc("m-1", "main", "MEMORY.md", 1, "fact", "tea", "h", 1, 1, 1)])
    engines.vectors.upsert("main", ["m-1"], np.eye(1, 8, dtype=np.float32), [{}])
    engines.ledger.entries.upsert(_state("m-1"))
    engines.documents.write("main", "MEMORY.md", "- tea\n")
    again = open_postgres_engines(pg_vector_url, model_name="test-embedder")
    try:  # a second replica sees the same rows
        assert again.ledger.entries.exists("m-1") and again.vectors.count("main") == 1
        assert again.open_keyword().count("main") == 1
        with again.lock.try_hold() as held, engines.lock.try_hold() as also:
            assert held and not also
        assert again.leases.holder("decay", "main") == "replica-a"
    finally:
        again.close()
    engines.discard_index()
    assert engines.open_keyword().count() == 0 and engines.vectors.count("main") == 0
    assert engines.ledger.entries.exists("m-1")
    assert engines.documents.read("main", "MEMORY.md") == "- tea\n"
    saver = engines.checkpoints.saver()  # its pool closes with the engines
    assert saver.get_tuple({"configurable": {"thread_id": "none"}}) is None


def test_a_url_that_is_not_postgresql_is_refused_before_anything_opens() -> None:
    with pytest.raises(InvalidInputError, match="PostgreSQL URL"):
        open_postgres_engines("mysql://db/x", model_name="m")


def test_the_embedding_cache_is_shared_by_replicas(pg_url: str, tmp_path: Path) -> None:
    from langmem_ext.workspace.postgres._base import PgConnections
    from langmem_ext.workspace.postgres.embedding_cache import PgEmbeddingCache
    from langmem_ext.workspace.sqlite.embedding_cache import SqliteEmbeddingCache

    one, two = PgConnections(pg_url), PgConnections(pg_url)
    try:
        for writer, reader in (
            (PgEmbeddingCache(one), PgEmbeddingCache(two)),
            (SqliteEmbeddingCache(tmp_path / "e.db"), SqliteEmbeddingCache(tmp_path / "e.db")),
        ):
            assert reader.get_many("m", ["h1"]) == {}
            writer.put_many("m", {"h1": [0.5, 0.25], "h2": [1.0, 0.0]})
            writer.put_many("m", {"h1": [0.75, 0.125]})  # replaced
            assert reader.get_many("m", ["h1", "h2", "h3"]) == {
                "h1": [0.75, 0.125],
                "h2": [1.0, 0.0],
            }
            assert reader.get_many("other", ["h1"]) == {}
            writer.close()
            reader.close()
    finally:
        one.close()
        two.close()


def test_closing_the_ledger_and_vectors_closes_every_pool(pg_vector_url: str) -> None:
    """The engine factory's bundle closes the vectors and the ledger only."""
    from psycopg_pool import PoolClosed

    opened = open_postgres_engines(pg_vector_url, model_name="m")
    saver = opened.checkpoints.saver()
    opened.vectors.close()
    opened.ledger.close()
    with pytest.raises(PoolClosed):
        saver.get_tuple({"configurable": {"thread_id": "t"}})
    with pytest.raises(PoolClosed):
        opened.ledger.entries.exists("m-1")
