"""Session events with vectors: embedded off the reply path, found in any language.

Real embedder (USE), real embedded Chroma, real SQLite.
"""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import pytest
from langchain_core.embeddings import Embeddings

from langmem_ext import Memory, Settings
from langmem_ext.embeddings.factory import create_embeddings
from langmem_ext.memory.sessions.log import SessionLog

DAY = 86400.0


class Watched(Embeddings):
    """The real embedder, noting which thread embedded each document (and failing on
    request, as an embedder that is down)."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self.model = "universal-sentence-encoder-multilingual"
        self.threads: dict[str, str] = {}
        self.down = False
        self.gate: threading.Event | None = None

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if self.down:
            raise RuntimeError("embedder down")
        if self.gate is not None:
            assert self.gate.wait(60)
        for t in texts:
            self.threads[t] = threading.current_thread().name
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)


@pytest.fixture
def watched(settings: Settings) -> Watched:
    return Watched(create_embeddings(settings.embeddings))


@pytest.fixture
def mem(settings: Settings, watched: Watched) -> Memory:
    settings.embeddings.cache = False
    m = Memory(settings=settings, embeddings=watched)
    yield m
    m.close()


def _hangzhou(log: SessionLog, at: float) -> None:
    log.append("main", "t1", "user", "帮我查一下去杭州的高铁", at=at)
    log.append("main", "t1", "assistant", "好的，明早8点有一班 G7311。", at=at + 5)


def test_events_are_embedded_by_the_background_writer(mem: Memory, watched: Watched) -> None:
    log = SessionLog(mem).attach()
    _hangzhou(log, time.time() - 3 * DAY)
    assert mem.background.wait(timeout=60)
    assert watched.threads["帮我查一下去杭州的高铁"] == mem.background.name
    assert watched.threads["好的，明早8点有一班 G7311。"] == mem.background.name
    kw = mem.workspace.keyword
    assert kw.passage_count("event", "main") == 2
    assert mem.workspace.vectors.count("event.main") == 2  # Chroma holds them too
    assert log.embed_pending() == 0  # nothing left


def test_a_scope_s_recall_does_not_wait_for_the_embedding(mem: Memory, watched: Watched) -> None:
    log = SessionLog(mem).attach()
    watched.gate = threading.Event()  # the embedder blocks until released
    _hangzhou(log, time.time() - 3 * DAY)
    # what the next turn's recall waits for: the scope's jobs, not the embedding
    assert mem.background.wait("main", timeout=10)
    assert mem.background.pending() == 1
    hits = mem.search("上次我问了什么关于杭州的？", scope="main")
    assert hits[0].text == "User: 帮我查一下去杭州的高铁"  # by its keywords meanwhile
    watched.gate.set()
    assert mem.background.wait(timeout=60)
    assert mem.workspace.keyword.passage_count("event", "main") == 2


@pytest.mark.parametrize(
    "question",
    ["What did I ask about Hangzhou before?", "上次我问的杭州高铁", "上次我问了什么关于杭州的？"],
)
def test_a_recall_question_finds_the_event_in_either_language(mem: Memory, question: str) -> None:
    log = SessionLog(mem).attach()
    _hangzhou(log, time.time() - 3 * DAY)
    mem.background.wait(timeout=60)
    hits = mem.search(question, scope="main")
    assert hits and hits[0].source == "session"
    assert hits[0].text == "User: 帮我查一下去杭州的高铁"
    assert hits[0].debug["vector"] > 0.3


def test_a_chinese_question_finds_an_english_event(mem: Memory) -> None:
    log = SessionLog(mem).attach()
    now = time.time()
    log.append(
        "main", "t1", "user", "Can you book a table for two at the sushi place?", at=now - DAY
    )
    log.append("main", "t1", "user", "Remind me to renew my passport next month", at=now - DAY)
    mem.add("User likes green tea", scope="main")
    mem.background.wait(timeout=60)
    hits = mem.search("上次我说的护照的事", scope="main")
    assert hits[0].source == "session"
    assert hits[0].text == "User: Remind me to renew my passport next month"


def test_the_vector_side_keeps_the_role_window_and_scope(mem: Memory) -> None:
    log = SessionLog(mem).attach()
    now = time.time()
    log.append("main", "t1", "user", "What's the weather in Hangzhou tomorrow?", at=now - 40 * DAY)
    log.append("main", "t1", "assistant", "杭州明天小雨，记得带伞。", at=now - DAY)
    log.append("other", "t9", "user", "杭州明天会下雨吗？", at=now - DAY)
    mem.background.wait(timeout=60)
    said = mem.search("What did I ask about the weather in Hangzhou before?", scope="main")
    assert not [h for h in said if h.source == "session"]  # mine is past the TTL; yours no
    told = mem.search("What did you tell me about the rain in Hangzhou last time?", scope="main")
    assert [h.text for h in told if h.source == "session"] == [
        "Assistant: 杭州明天小雨，记得带伞。"
    ]
    theirs = mem.search("What did I ask about the rain in Hangzhou before?", scope="other")
    assert [h.text for h in theirs if h.source == "session"] == ["User: 杭州明天会下雨吗？"]


def test_a_failed_embedding_is_retried_and_a_lost_index_is_embedded_again(
    mem: Memory, watched: Watched
) -> None:
    log = SessionLog(mem).attach()
    watched.down = True
    _hangzhou(log, time.time() - 3 * DAY)
    mem.background.wait(timeout=60)
    kw = mem.workspace.keyword
    assert kw.passage_count("event", "main") == 0  # nothing kept, nothing lost
    question = "上次我问了什么关于杭州的？"
    [found] = [h for h in mem.search(question, scope="main") if h.source == "session"]
    # found by its keywords, scored as a log without vectors scores it
    assert found.score == log.search(question, "main", 5, None)[0].score
    watched.down = False
    assert log.embed_pending() == 2
    mem.close()
    shutil.rmtree(mem.root / ".index")  # the derived index is gone
    again = SessionLog(Memory(settings=mem.settings, embeddings=watched)).attach()
    try:
        first = again.memory.search("What did I ask about Hangzhou before?", scope="main")
        assert not [h for h in first if h.source == "session"]  # no vector yet: none
        again.memory.background.wait(timeout=60)  # the search queued the catch-up
        assert again.memory.workspace.keyword.passage_count("event", "main") == 2
        hits = again.memory.search("What did I ask about Hangzhou before?", scope="main")
        assert hits[0].text == "User: 帮我查一下去杭州的高铁"
    finally:
        again.memory.close()


def test_purge_drops_the_vectors_with_the_events(mem: Memory, tmp_path: Path) -> None:
    now = time.time()
    log = SessionLog(mem, clock=lambda: now)
    log.append("main", "t1", "user", "old question about Hangzhou", at=now - 31 * DAY)
    log.append("main", "t1", "user", "new question about Suzhou", at=now - DAY)
    log.embed_pending()
    kw = mem.workspace.keyword
    assert kw.passage_count("event", "main") == 1  # the old one is past the TTL already
    assert log.purge(now=now + 30 * DAY) == 1  # the append purged the old one
    assert kw.passage_count("event", "main") == 0
    mem.workspace.flush_vectors()
    assert mem.workspace.vectors.count("event.main") == 0
