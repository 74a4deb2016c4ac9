"""``langmem-ext migrate`` into a real PostgreSQL, ``export`` back to files: the same
memory on both sides (ledger rows, Markdown, checkpoints, search)."""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph

from langmem_ext import Memory, Settings
from langmem_ext.cli.app import main
from langmem_ext.store.chroma import ChromaMemoryStore
from langmem_ext.workspace.records import EventFilter


class Counter(TypedDict):
    steps: Annotated[list[str], operator.add]


def _graph(saver: Any) -> Any:
    """A one-node graph whose state grows by one step per run (a thread's history)."""

    def step(state: Counter) -> dict[str, list[str]]:
        return {"steps": [f"step {len(state['steps'])}"]}

    return (
        StateGraph(Counter)
        .add_node("step", step)
        .add_edge(START, "step")
        .add_edge("step", END)
        .compile(checkpointer=saver)
    )


def _settings(root: Path, url: str | None = None) -> Settings:
    s = Settings(workspace=root, database_url=url)
    s.embeddings.provider = "fake"
    return s


def _fill(mem: Memory) -> None:
    """Memories with history and importance, pending, profile, triples, session
    events, a graph thread, store items."""
    tea = mem.add("I like green tea", importance=0.7)
    mem.add("My sister lives in Oslo", category="core")
    mem.add("我对花生过敏", importance=0.9)
    mem.add("Went hiking on Mount Tai", target="daily", category="episode")
    mem.update(tea, "I like black tea")
    mem.add("I own a red bicycle", scope="user_bob")
    mem.save("I want to learn the cello")
    mem.upsert_facts({"name": "Ann", "allergies": ["peanuts"]})
    mem.session_log.append(None, "t1", "user", "We talked about the cello and Oslo")
    mem.session_log.append(None, "t1", "assistant", "Noted: cello lessons")
    store = ChromaMemoryStore(mem)
    store.put(("docs", "ann"), "d1", {"text": "Ann's bike is blue"})
    store.put(("docs", "ann"), "d2", {"text": "Ann drinks oolong"})
    graph = _graph(mem.workspace.engines.checkpoints.saver())
    for _ in range(2):
        graph.invoke({"steps": []}, {"configurable": {"thread_id": "g1"}})
    mem.background.wait()


def _ledger(mem: Memory) -> dict[str, Any]:
    """What the ledger holds, read through the repositories of either engine."""
    led = mem.workspace.ledger
    out: dict[str, Any] = {}
    for scope in ("main", "user_bob"):
        states = led.entries.of_scope(scope)
        out[scope] = {
            "entries": states,  # ids, versions, importance, validity, ...
            "closed": led.entries.closed_of_scope(scope),
            "history": [led.entries.history(s.id, scope) for s in states],
            "pending": led.pending.of_scope(scope, "pending"),
            "profile": led.profile.latest(scope),
            "triples": sorted(led.triples.current(scope), key=lambda t: t.id),
            "events": led.events.recent(EventFilter(scope, since=0.0)),
        }
    out["store"] = led.store.page("", None, 4e9, 10)
    return out


def _checkpoints(saver: Any) -> list[tuple[Any, ...]]:
    return [
        (
            t.config["configurable"]["thread_id"],
            t.checkpoint["id"],
            t.checkpoint["channel_values"],
            t.checkpoint["channel_versions"],
            None if t.parent_config is None else t.parent_config["configurable"]["checkpoint_id"],
            t.metadata,
            t.pending_writes,
        )
        for t in saver.list(None)
    ]


def _store_hits(mem: Memory) -> list[str]:
    return [i.key for i in ChromaMemoryStore(mem).search(("docs", "ann"), query="blue bike")]


def _tree(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): p.read_text("utf-8") for p in sorted(folder.rglob("*.md"))
    }


QUERIES = ("tea", "Oslo sister", "花生", "cello")


def test_an_embedded_workspace_moves_into_postgresql_and_back_out(
    tmp_path: Path,
    pg_vector_url: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ws = tmp_path / "ws"
    with Memory(settings=_settings(ws)) as mem:
        _fill(mem)
        before = _ledger(mem)
        searched = {q: [h.id for h in mem.search(q, k=3)] for q in QUERIES}
        before_checkpoints = _checkpoints(mem.workspace.engines.checkpoints.saver())
        store_hits = _store_hits(mem)
    assert store_hits[0] == "d1"
    assert before["main"]["history"] and before["main"]["triples"] and before["store"]
    assert before["main"]["events"] and before["main"]["pending"] and before["main"]["profile"]
    assert len(before_checkpoints) >= 4

    common = ["--workspace", str(ws), "--embedder", "fake"]
    assert main([*common, "migrate", "--to", pg_vector_url]) == 0
    out, err = capsys.readouterr()
    assert "entries: 6" in err and "threads: 1" in err and "files.profile: 1" in err
    assert "copied into the database" in out

    # a second run is refused and changes nothing; --force replaces with the same
    assert main([*common, "migrate", "--to", pg_vector_url]) == 2
    assert "already holds" in capsys.readouterr().err

    pg = _settings(tmp_path / "pg-local", pg_vector_url)
    with Memory(settings=pg) as mem:
        assert _ledger(mem) == before
        assert {q: [h.id for h in mem.search(q, k=3)] for q in QUERIES} == searched
        saver = mem.workspace.engines.checkpoints.saver()
        assert _checkpoints(saver) == before_checkpoints
        final = _graph(saver).invoke({"steps": []}, {"configurable": {"thread_id": "g1"}})
        assert final["steps"] == ["step 0", "step 1", "step 2"]  # the thread continues
        assert _store_hits(mem) == store_hits

    assert main([*common, "migrate", "--to", pg_vector_url, "--force"]) == 0
    capsys.readouterr()
    with Memory(settings=pg) as mem:
        assert _ledger(mem) == before

    # export from PostgreSQL and from the embedded workspace: the same files
    monkeypatch.setenv("LANGMEM_DATABASE_URL", pg_vector_url)
    out_pg = tmp_path / "from-pg"
    assert main(["--workspace", str(tmp_path / "pg-local"), "export", str(out_pg)]) == 0
    assert "files into" in capsys.readouterr().out
    monkeypatch.delenv("LANGMEM_DATABASE_URL")
    out_embedded = tmp_path / "from-embedded"
    assert main([*common, "export", str(out_embedded)]) == 0
    exported = _tree(out_pg)
    assert exported == _tree(out_embedded)
    assert {"MEMORY.md", "PROFILE.md", "memory/scopes/user_bob/LONG_TERM.md"} <= set(exported)
    assert any(rel.startswith("memory/transcripts/") for rel in exported)
    assert any("- " in text and "black tea" in text for text in exported.values())

    # hand edits of the exported files come back into PostgreSQL through the sync
    memory_md = out_pg / "MEMORY.md"
    memory_md.write_text(memory_md.read_text("utf-8").replace("black tea", "jasmine tea"), "utf-8")
    profile = out_pg / "PROFILE.md"
    profile.write_text(profile.read_text("utf-8").replace("Ann", "Anna"), "utf-8")
    monkeypatch.setenv("LANGMEM_DATABASE_URL", pg_vector_url)
    pg_common = ["--workspace", str(tmp_path / "pg-local"), "--embedder", "fake"]
    assert main([*pg_common, "import", str(out_pg)]) == 0
    assert "2 changed" in capsys.readouterr().out
    with Memory(settings=pg) as mem:
        [tea] = [e for e in mem.list() if "tea" in e.text]
        assert tea.text == "I like jasmine tea"
        last = mem.history(tea.id)[-1]
        assert (last["old_text"], last["new_text"]) == ("I like black tea", "I like jasmine tea")
        assert mem.profile().name == "Anna"
        assert not (tmp_path / "pg-local" / "MEMORY.md").exists()  # nothing on local disk
