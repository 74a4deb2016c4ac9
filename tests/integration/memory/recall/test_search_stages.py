"""A search is one run of the stage list: a reranker stage, and no re-sort after it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from langchain_core.callbacks import Callbacks
from langchain_core.documents import BaseDocumentCompressor, Document

from langmem_ext import Memory, Settings
from langmem_ext.cli.app import main
from langmem_ext.retrievers import MemoryRetriever

TEAS = [
    "I drink green tea every morning",
    "My favourite tea is jasmine green tea",
    "Green tea with lemon helps my throat",
    "I bought a new green tea pot in Kyoto",
]
QUERY = "green tea"


class Reverse(BaseDocumentCompressor):
    """A reranker that puts the documents in the opposite order."""

    def compress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> Sequence[Document]:
        return list(reversed(documents))


class BestTwoByLength(BaseDocumentCompressor):
    """A reranker that keeps the two shortest texts, scored like a cross-encoder."""

    def compress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> Sequence[Document]:
        ranked = sorted(documents, key=lambda d: len(d.page_content))[:2]
        return [
            Document(d.page_content, metadata={**d.metadata, "relevance_score": 1 / (1 + i)})
            for i, d in enumerate(ranked)
        ]


def _settings(root: Path) -> Settings:
    s = Settings(workspace=root)
    s.embeddings.provider = "fake"
    return s


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "ws"
    with Memory(settings=_settings(root)) as mem:
        mem.add_many(TEAS, scope="main")
    yield root


def _plain_order(root: Path) -> list[str]:
    with Memory(settings=_settings(root)) as mem:
        assert "reranker" not in mem.engine.stages.names  # off by default
        hits = mem.search(QUERY, scope="main", k=4)
    assert len(hits) >= 3
    return [h.id for h in hits]


def test_a_reranker_reorders_memory_search_and_its_order_is_returned(ws: Path) -> None:
    plain = _plain_order(ws)
    with Memory(settings=_settings(ws), reranker=Reverse()) as mem:
        assert mem.engine.stages.names[-1] == "reranker"
        hits = mem.search(QUERY, scope="main", k=4)
    assert [h.id for h in hits] == plain[::-1]  # nothing re-sorts after the last stage
    assert [h.debug["reranker"] for h in hits] == [float(i) for i in range(1, len(hits) + 1)]
    assert hits[0].score <= hits[-1].score


def test_a_reranker_drops_what_it_leaves_out_and_keeps_its_scores(ws: Path) -> None:
    with Memory(settings=_settings(ws), reranker=BestTwoByLength()) as mem:
        hits = mem.search(QUERY, scope="main", k=4)
        steps = [s.key for s in hits[0].reasons(QUERY)]
    shortest = sorted(TEAS, key=len)[:2]
    assert [h.text for h in hits] == shortest
    assert [h.debug["reranker"] for h in hits] == [1.0, 0.5]
    assert steps[-2:] == ["reranker", "final"]


def test_the_retriever_returns_the_reranked_order(ws: Path) -> None:
    plain = _plain_order(ws)
    with Memory(settings=_settings(ws), reranker=Reverse()) as mem:
        docs = MemoryRetriever(memory=mem, k=4, scope="main").invoke(QUERY)
    assert [d.id for d in docs] == plain[::-1]


def test_search_debug_prints_the_stages_in_order(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LANGMEM_EMBEDDINGS__PROVIDER", "fake")
    assert main(["--workspace", str(ws), "search", QUERY, "--debug"]) == 0
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert first.startswith("stages: keyword > vector > ")
    assert (
        first.index("fusion") < first.index("mmr") < first.index("coverage") < first.index("order")
    )
