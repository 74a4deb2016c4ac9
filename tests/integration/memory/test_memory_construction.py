"""``Memory`` is built by construction: what it uses is given to it, nothing else
in the process changes what it finds.

Real embedder (USE), real embedded Chroma, real SQLite; each search runs in a fresh
process on its own copy of one prepared workspace.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
import weakref
from pathlib import Path

from langchain_core.messages import AIMessage, HumanMessage

from langmem_ext import Memory, Settings
from langmem_ext.chat_models.scripted import ScriptedChatModel, tool_call
from langmem_ext.graph import build_memory_graph
from langmem_ext.memory.background import TurnWriter
from langmem_ext.memory.recall.search import SearchEngine
from langmem_ext.memory.sessions.log import SessionLog
from tests._serve_helpers import checkout_env

DAY = 86400.0
QUESTION = "What did I ask about yesterday?"
_CONTAINERS = (
    dict,
    list,
    set,
    weakref.WeakKeyDictionary,
    weakref.WeakValueDictionary,
    weakref.WeakSet,
)

_SEARCH = """
import json, sys
from langmem_ext import Memory, Settings
from langmem_ext.chat_models.scripted import ScriptedChatModel
from langchain_core.messages import AIMessage

built = sys.argv[2]
memory = Memory(settings=Settings(workspace=sys.argv[1]))
if built == "graph":
    from langmem_ext.graph import build_memory_graph
    build_memory_graph(ScriptedChatModel(policy=lambda _m: AIMessage("ok")), memory)
elif built == "sessions":
    from langmem_ext.memory.sessions.manager import SessionManager
    SessionManager(memory)
memory.background.wait(timeout=60)
hits = memory.search(sys.argv[3], scope="main", k=8)
print(json.dumps([[h.source, h.text, round(h.score, 4)] for h in hits], ensure_ascii=False))
memory.close()
"""


def _prepare(root: Path) -> None:
    """A workspace with a memory and yesterday's conversation, its events embedded."""
    yesterday = time.time() - DAY
    with Memory(settings=Settings(workspace=root)) as memory:
        memory.add("The user's passport expires in March")
        log = memory.session_log
        log.append("main", "t1", "user", "Can you find train tickets to Hangzhou?", at=yesterday)
        log.append("main", "t1", "assistant", "The G7311 leaves at 8:00.", at=yesterday + 5)
        log.embed_pending()
        memory.background.wait(timeout=60)


def _search_in_fresh_process(root: Path, built: str) -> list[list[object]]:
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_SEARCH), str(root), built, QUESTION],
        capture_output=True, text=True, env=checkout_env(), timeout=300, check=True,
    )  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_search_finds_session_events_whatever_else_the_process_built(tmp_path: Path) -> None:
    prepared = tmp_path / "prepared"
    _prepare(prepared)
    results = {}
    for built in ("nothing", "graph", "sessions"):
        copy = tmp_path / built
        shutil.copytree(prepared, copy)
        results[built] = _search_in_fresh_process(copy, built)
    alone = results["nothing"]
    assert ["session", "User: Can you find train tickets to Hangzhou?"] in [h[:2] for h in alone]
    assert results["graph"] == alone
    assert results["sessions"] == alone


def test_two_memories_do_not_share_session_logs(tmp_path: Path) -> None:
    yesterday = time.time() - DAY
    s = Settings(workspace=tmp_path / "a")
    s.embeddings.provider = "fake"
    with (
        Memory(settings=s) as a,
        Memory(settings=s.model_copy(update={"workspace": tmp_path / "b"})) as b,
    ):
        assert a.session_log is not b.session_log
        assert a.session_log.memory is a and b.session_log.memory is b
        a.session_log.append("main", "t1", "user", "I asked about the dentist", at=yesterday)
        b.session_log.append("main", "t1", "user", "I asked about the plumber", at=yesterday)
        a_texts = [h.text for h in a.search(QUESTION, scope="main") if h.source == "session"]
        b_texts = [h.text for h in b.search(QUESTION, scope="main") if h.source == "session"]
        assert a_texts == ["User: I asked about the dentist"]
        assert b_texts == ["User: I asked about the plumber"]
    for cls in (Memory, SessionLog, SearchEngine):  # nothing kept by a class for all
        held = [k for k, v in vars(cls).items() if isinstance(v, _CONTAINERS)]
        assert held == [], f"{cls.__name__} keeps {held} for every instance"


def test_a_graph_leaves_the_memory_it_is_built_on_as_it_was(tmp_path: Path) -> None:
    s = Settings(workspace=tmp_path / "ws")
    s.embeddings.provider = "fake"
    s.knowledge.with_model = True
    extractor = ScriptedChatModel(policy=lambda _m: AIMessage("{}"))
    with Memory(settings=s) as memory:
        before = (memory.knowledge.model, memory.session_log, memory.extraction_model)
        build_memory_graph(
            ScriptedChatModel(policy=lambda _m: AIMessage("ok")), memory, extractor=extractor
        )
        assert (memory.knowledge.model, memory.session_log, memory.extraction_model) == before


def test_the_extraction_model_given_is_what_extract_uses_by_default(tmp_path: Path) -> None:
    s = Settings(workspace=tmp_path / "ws")
    s.embeddings.provider = "fake"
    s.lifecycle.extract_mode = "direct"
    plan = [{"op": "ADD", "text": "Alice has a cat named Mochi", "category": "fact"}]
    model = ScriptedChatModel(
        policy=lambda _m: AIMessage("", tool_calls=[tool_call("ExtractionPlan", actions=plan)])
    )
    turn = [HumanMessage("My cat is called Mochi"), AIMessage("Nice name!")]
    with Memory(settings=s, extraction_model=model) as memory:
        report = memory.extract(turn, scope="alice")
        assert not report.used_fallback  # the model's plan, not the patterns
        assert [e.text for e in memory.list(scope="alice")] == ["Alice has a cat named Mochi"]


def test_a_background_writer_given_is_drained_on_close_and_left_running(tmp_path: Path) -> None:
    s = Settings(workspace=tmp_path / "ws")
    s.embeddings.provider = "fake"
    writer = TurnWriter(name="shared-writer")
    ran: list[str] = []
    try:
        memory = Memory(settings=s, background=writer)
        assert memory.background is writer
        memory.add("Alice likes green tea")  # its triples are extracted on the writer
        writer.submit("main", lambda: ran.append("queued before close"), defer=0.5)
        memory.close()
        assert ran == ["queued before close"]  # drained by close
        writer.submit("main", lambda: ran.append(threading.current_thread().name))
        assert writer.wait(timeout=30)
        assert ran[-1] == "shared-writer"  # still the writer's own thread: not closed
    finally:
        writer.close()


def test_opening_a_memory_waits_for_no_writer_of_its_ledger(tmp_path: Path) -> None:
    s = Settings(workspace=tmp_path / "ws")
    s.embeddings.provider = "fake"
    with Memory(settings=s) as memory:
        memory.session_log.append("main", "t1", "user", "an event already indexed")
    ledger = tmp_path / "ws" / "state.db"
    assert ledger.is_file()
    holder = sqlite3.connect(ledger, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process mid-write
    try:
        with Memory(settings=s) as again:  # its session log has nothing to index: no write
            assert [e.text for e in again.session_log.recent("main")] == [
                "an event already indexed"
            ]
    finally:
        holder.execute("ROLLBACK")
        holder.close()
