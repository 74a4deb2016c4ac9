"""The knowledge graph: triples with supporting memories, cascade, rebuild, surfaces."""

from __future__ import annotations

import shutil
import sqlite3
import time
from pathlib import Path

import pytest

from langmem_ext import Memory, Settings, Triple
from langmem_ext.cli.app import main
from langmem_ext.tools import MemoryGraphTool, create_memory_tools
from langmem_ext.workspace.sqlite.schema import LEDGER_VERSION, schema_version

TEA = ("Alice likes green tea.", "Alice likes green tea!")


def _snapshot(mem: Memory, scope: str = "main") -> set[tuple[str, str, frozenset[str]]]:
    keys = list(mem.knowledge.entities(scope))
    found = mem.knowledge.neighbourhood(scope, keys, include_closed=True)
    return {(t.id, t.text, frozenset(t.support)) for t in found}


def _rows(mem: Memory, table: str) -> int:
    return int(mem.workspace.ledger.query(f"SELECT count(*) FROM {table}")[0][0])


def test_extraction_runs_on_the_background_writer(fake_memory: Memory) -> None:
    mem = fake_memory
    eid = mem.add("Alice likes green tea")
    assert mem.background.pending("main") >= 0  # queued, not run on the write path
    assert mem.background.wait("main", timeout=10)
    [t] = mem.knowledge.neighbourhood("main", ["alice"])
    assert isinstance(t, Triple)
    assert (t.subject, t.predicate, t.object, t.negated) == ("Alice", "likes", "green tea", False)
    assert t.support == (eid,) and t.valid_to is None
    assert t.text == "Alice — likes → green tea"
    assert dict(mem.knowledge.entities("main")) == {"alice": 1, "green tea": 1}


def test_the_first_search_rebuilds_only_a_view_this_process_has_not_built(
    fake_memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A second full build racing the first searches made their results depend on
    # its timing; the view the writes grew is already whole.
    mem = fake_memory
    mem.add_many(["Alice likes green tea", "Bob lives in Paris"])
    assert mem.background.wait("main", timeout=10)
    graph = mem.knowledge
    builds: list[str] = []
    real = graph.refresh_view
    monkeypatch.setattr(graph, "refresh_view", lambda s: builds.append(s) or real(s))
    mem.search("what does Alice like?")
    assert mem.background.wait("main", timeout=10)
    assert builds == []
    # another process (a Memory opened on the same workspace) builds it on first look
    other = Memory.from_settings(mem.settings)
    try:
        assert other.knowledge.view("main") is None
        assert other.background.wait("main", timeout=10)
        view = other.knowledge.view("main")
        assert view is not None and "alice" in view.degrees
    finally:
        other.close()


def test_negation_and_the_user(fake_memory: Memory) -> None:
    mem = fake_memory
    mem.add_many(["I like coffee", "Bob doesn't like durian"])
    [me] = mem.triples("me")
    assert me.subject_key == "user" and me.object == "coffee"
    [bob] = mem.triples("BOB")
    assert bob.negated and bob.text == "Bob — not likes → durian"
    assert mem.triples("nobody") == []


def test_one_triple_two_memories_cascade(fake_memory: Memory) -> None:
    mem = fake_memory
    first, second = mem.add_many(list(TEA))
    [t] = mem.triples("Alice")
    assert set(t.support) == {first, second}
    mem.delete(first)
    [t] = mem.triples("Alice")  # the delete's support withdrawal is immediate
    assert t.support == (second,)
    mem.delete(second)
    assert mem.triples("Alice") == []
    mem.background.wait()
    assert _rows(mem, "triples") == 0 and _rows(mem, "triple_support") == 0
    assert mem.knowledge.entities("main") == {}


def test_supersede_closes_the_triple(fake_memory: Memory) -> None:
    mem = fake_memory
    eid = mem.add("Alice likes green tea", created_at=time.time() - 100)
    mem.background.wait()
    before = time.time() - 10
    new = mem.update(eid, "Alice likes black coffee")
    assert [t.object for t in mem.triples("Alice")] == ["black coffee"]
    [old] = mem.triples("Alice", as_of=before)
    assert old.object == "green tea" and old.support == (eid,)
    closed = {t.object: t for t in mem.triples("Alice", include_closed=True)}
    assert closed["green tea"].valid_to is not None
    assert closed["black coffee"].valid_to is None and closed["black coffee"].support == (new.id,)


def test_hand_edit_deleting_a_bullet_withdraws_support(fake_memory: Memory) -> None:
    mem = fake_memory
    first, second = mem.add_many(list(TEA))
    mem.background.wait()
    path = mem.root / mem.get_entry(first).path
    text = path.read_text(encoding="utf-8")
    path.write_text(
        "".join(line for line in text.splitlines(True) if first not in line), encoding="utf-8"
    )
    mem.sync()
    [t] = mem.triples("alice")
    assert t.support == (second,)


def test_hand_edit_changing_a_bullet_is_extracted_again(fake_memory: Memory) -> None:
    mem = fake_memory
    eid = mem.add("Alice likes green tea")
    mem.background.wait()
    mem.update(eid, "Alice likes jasmine tea", supersede=False)
    assert [t.object for t in mem.triples("alice")] == ["jasmine tea"]


def test_two_hops_and_the_hub_cap(fake_memory: Memory) -> None:
    mem = fake_memory
    mem.settings.knowledge.max_per_entity = 5
    mem.add_many(["Alice likes Bob", "Bob likes jazz"] + [f"Hub likes item{i}" for i in range(30)])
    assert [t.text for t in mem.triples("alice")] == ["Alice — likes → Bob"]
    two = {t.text for t in mem.triples("alice", hops=2)}
    assert two == {"Alice — likes → Bob", "Bob — likes → jazz"}
    assert mem.knowledge.entities("main")["hub"] == 30
    assert len(mem.knowledge.neighbourhood("main", ["hub"])) == 5
    assert len(mem.knowledge.neighbourhood("main", ["hub"], hops=2, limit=3)) == 3


def test_rebuild_after_losing_index_and_triples_restores_them(tmp_path: Path) -> None:
    s = Settings(workspace=tmp_path / "ws")
    s.embeddings.provider = "fake"
    mem = Memory(settings=s)
    ids = mem.add_many([*TEA, "I like coffee", "Bob doesn't like durian"])
    mem.update(ids[2], "I like black coffee")
    mem.background.wait()
    before = _snapshot(mem)
    assert len(before) == 4
    mem.close()
    shutil.rmtree(tmp_path / "ws" / ".index")
    with sqlite3.connect(tmp_path / "ws" / "state.db") as conn:
        for table in ("triples", "triple_support", "triple_marks"):
            conn.execute(f"DELETE FROM {table}")
    mem = Memory(settings=s)
    try:
        mem.reindex()
        assert _snapshot(mem) == before
        assert mem.knowledge.rebuild() == 5
        assert _snapshot(mem) == before
    finally:
        mem.close()


def test_scopes_are_isolated(fake_memory: Memory) -> None:
    mem = fake_memory
    a = mem.add("Alice likes green tea", scope="user_a")
    mem.add("Alice likes durian", scope="user_b")
    [t] = mem.triples("alice", scope="user_a")
    assert t.support == (a,) and t.object == "green tea" and t.scope == "user_a"
    assert "durian" not in mem.knowledge.entities("user_a")
    assert mem.triples("durian", scope="user_a") == []
    assert mem.triples("alice") == []


def test_extract_setting_off_schedules_nothing(tmp_path: Path) -> None:
    s = Settings(workspace=tmp_path / "ws")
    s.embeddings.provider = "fake"
    s.knowledge.extract = False
    with Memory(settings=s) as mem:
        mem.add("Alice likes green tea")
        assert mem.background.pending() == 0
        assert mem.triples("alice") == []


def test_memory_graph_tool(fake_memory: Memory) -> None:
    mem = fake_memory
    eid = mem.add("Alice likes green tea", scope="user_alice")
    tool = MemoryGraphTool(memory=mem)
    config = {"configurable": {"user_id": "alice"}}
    text = tool.invoke({"entity": "Alice"}, config)
    assert "Alice — likes → green tea" in text and eid in text
    assert "No facts" in tool.invoke({"entity": "Alice"})  # scope main: nothing
    msg = tool.invoke(
        {"name": "memory_graph", "args": {"entity": "alice", "hops": 3}, "id": "c1",
         "type": "tool_call"},
        config,
    )  # fmt: skip
    assert msg.status == "error"
    assert "memory_graph" in [t.name for t in create_memory_tools(mem)]


async def test_async_twin(fake_memory: Memory) -> None:
    fake_memory.add("Alice likes green tea")
    assert [t.object for t in await fake_memory.atriples("alice")] == ["green tea"]


def test_cli_graph_prints_a_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("LANGMEM_EMBEDDINGS__PROVIDER", "fake")
    ws = str(tmp_path / "ws")
    for text in ("Alice likes Bob", "Bob likes jazz"):
        assert main(["--workspace", ws, "add", text]) == 0
    capsys.readouterr()
    assert main(["--workspace", ws, "graph", "Alice", "--hops", "2"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "Alice" and "likes" in lines[1] and "Bob [m-" in lines[2]
    assert "jazz [m-" in out and lines.index(next(ln for ln in lines if "jazz" in ln)) > 2
    assert main(["--workspace", ws, "--json", "graph", "bob", "--rebuild"]) == 0
    data = __import__("json").loads(capsys.readouterr().out)
    assert {d["text"] for d in data} == {"Alice — likes → Bob", "Bob — likes → jazz"}
    assert main(["--workspace", ws, "graph", "bob", "--as-of", "yesterday"]) == 2


def test_a_version_4_workspace_is_migrated_and_caught_up(tmp_path: Path) -> None:
    s = Settings(workspace=tmp_path / "ws")
    s.embeddings.provider = "fake"
    s.knowledge.extract = False  # written by a version without triples
    with Memory(settings=s) as mem:
        eid = mem.add("Alice likes green tea")
    db = tmp_path / "ws" / "state.db"
    with sqlite3.connect(db) as conn:
        for table in ("triples", "triple_support", "triple_marks"):
            conn.execute(f"DROP TABLE {table}")
        conn.execute("ALTER TABLE pending DROP COLUMN supersedes")  # migration 7's
        conn.execute("ALTER TABLE pending DROP COLUMN thread_id")  # migration 9's
        conn.execute("PRAGMA user_version = 4")
    s.knowledge.extract = True
    with Memory(settings=s) as mem:
        with sqlite3.connect(db) as conn:
            assert schema_version(conn) == LEDGER_VERSION
        [t] = mem.triples("alice")  # the first look catches the scope up
        assert t.support == (eid,)


def test_the_graph_extractor_model_extracts_triples_of_new_memories(fake_memory: Memory) -> None:
    from langchain_core.messages import AIMessage

    from langmem_ext.chat_models.scripted import ScriptedChatModel, tool_call
    from langmem_ext.graph import build_memory_graph

    plan = [{"index": 0, "triples": [{"subject": "Dana", "predicate": "mentors", "object": "Eli"}]}]
    model = ScriptedChatModel(
        policy=lambda _m: AIMessage("", tool_calls=[tool_call("TriplePlan", items=plan)])
    )
    answer = ScriptedChatModel(policy=lambda _m: AIMessage("ok"))
    build_memory_graph(answer, fake_memory, extractor=model)
    assert fake_memory.knowledge.model is None  # off by default: no model call per write
    fake_memory.settings.knowledge.with_model = True
    build_memory_graph(answer, fake_memory, extractor=model)
    assert fake_memory.knowledge.model is model
    fake_memory.add("Dana has been guiding Eli through his first year")  # no pattern for it
    fake_memory.background.wait()
    assert [t.text for t in fake_memory.triples("Dana")] == ["Dana — mentors → Eli"]
