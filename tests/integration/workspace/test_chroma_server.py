"""Against a real Chroma server started with `chroma run` on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from _chroma import ChromaServer, chroma_bin

from langmem_ext import Memory, Settings
from langmem_ext.workspace.vector_index import VectorIndex as ChromaIndex

pytestmark = pytest.mark.chroma_server


@pytest.fixture
def chroma_server(tmp_path: Path) -> Iterator[ChromaServer]:
    if chroma_bin() is None:
        pytest.skip("the `chroma` CLI is not installed")
    server = ChromaServer(tmp_path / "chroma-data")
    server.start()
    yield server
    server.stop()


def test_memory_on_a_chroma_server(tmp_path: Path, chroma_server: ChromaServer) -> None:
    s = Settings(workspace=tmp_path / "ws")
    s.index.chroma_url = chroma_server.url
    s.index.exact_search_max_entries = 0  # vector queries go to the server, not to memory
    with Memory(settings=s) as mem:
        p = mem.save("主人喜欢吃拉面")
        e = mem.confirm(p.id)
        mem.add("I am allergic to peanuts")
        assert mem.search("拉面", k=1, mode="vector")[0].id == e.id
        assert mem.workspace.vectors.count("main") == 2
        # Nothing vector-related was written locally: the server holds the vectors.
        assert not (s.workspace / ".index" / "chroma").exists()

        chroma_server.stop()
        # Server down: writes stay durable in Markdown; search degrades to keywords.
        eid = mem.add("Wir treffen uns jeden Freitag im Kletterzentrum")
        assert "Kletterzentrum" in (s.workspace / "MEMORY.md").read_text()
        report = mem.sync()
        assert report.vector_error and "chroma run" in report.vector_error
        assert mem.stats()["vectors_waiting"] == 1
        hits = mem.search("Kletterzentrum", k=1)
        assert hits and hits[0].id == eid  # keyword fallback, no crash

        chroma_server.start()
        mem.sync()
        assert mem.stats()["vectors_waiting"] == 0
        assert mem.search("climbing gym on Fridays", k=1, mode="vector")[0].id == eid


def test_postgres_memory_keeps_its_vectors_on_a_chroma_server(
    tmp_path: Path, pg_vector_url: str, chroma_server_url: str
) -> None:
    def settings(name: str) -> Settings:
        s = Settings(workspace=tmp_path / name, database_url=pg_vector_url)
        s.index.chroma_url = chroma_server_url
        s.index.collection_prefix = f"pg{tmp_path.name[-8:]}".replace("_", "")
        s.index.exact_search_max_entries = 0  # vector queries go to the server
        return s

    with Memory(settings=settings("a")) as a, Memory(settings=settings("b")) as b:
        assert type(a.workspace.vectors) is ChromaIndex
        tea = a.add("User drinks green tea every morning")
        a.add("我下个月去北京出差")
        assert a.workspace.vectors.count("main") == 2
        assert a.search("what does the user drink", k=1, mode="vector")[0].id == tea
        assert b.search("morning beverage habits", k=1, mode="vector")[0].id == tea  # a replica
        with a.workspace.ledger.transaction() as conn:  # pgvector holds nothing
            tables = conn.execute(
                "SELECT count(*) FROM pg_tables WHERE tablename LIKE %s AND tablename <> %s",
                ("vec\\_%", "vec_deletes"),
            ).fetchone()
        assert tables is not None and tables[0] == 0
