"""Decay, episode deletion, catch-up on open and recall access, on a real workspace.

``maintain`` runs with an injected ``now`` (local noon, days ahead); memories are
written at the real time, so "day N" is N calendar days after they were written.
"""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import date, datetime, timedelta
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from langmem_ext import Memory, Settings
from langmem_ext.chat_models.scripted import ScriptedChatModel
from langmem_ext.graph import build_memory_graph, flush_turn_writes
from langmem_ext.memory.lifecycle.operations import DECAY_AT_KEY, DECAY_DAY_KEY, delete_entries
from langmem_ext.middleware import MemoryMiddleware
from langmem_ext.tools import MemorySearchTool

DAY = 86400.0

pytestmark = pytest.mark.usefixtures("fixed_clock")  # noon N days on: no DST change between


def noon(days: int) -> datetime:
    """Local noon ``days`` calendar days from today."""
    return datetime.combine(date.today() + timedelta(days=days), datetime.min.time()).replace(
        hour=12
    )


def importance(memory: Memory, entry_id: str) -> float:
    st = memory.workspace.ledger.entries.get(entry_id)
    assert st is not None
    return st.importance


def index_importance(memory: Memory, entry_id: str) -> float:
    return memory.workspace.keyword.docs([entry_id])[entry_id].importance


def live(memory: Memory, entry_id: str) -> bool:
    return memory.workspace.ledger.entries.get(entry_id) is not None


def fake_settings(root: Path) -> Settings:
    s = Settings(workspace=root)
    s.embeddings.provider = "fake"
    return s


def test_daily_decay_matches_seed_001_table_exactly(fake_memory: Memory) -> None:
    fact = fake_memory.add("主人喜欢吃拉面", scope="main")
    episode = fake_memory.add(
        "聊了面试和游戏", scope="main", category="episode", target="daily", created_at=noon(0)
    )
    core = fake_memory.add("主人叫小明", scope="main", category="core")
    system = fake_memory.add("You are a helpful assistant", scope="main", category="system")
    facts, episodes = [], []
    for day in range(1, 14):
        fake_memory.maintain(now=noon(day))
        facts.append(round(importance(fake_memory, fact), 6))
        episodes.append(
            round(importance(fake_memory, episode), 6) if live(fake_memory, episode) else None
        )
        assert importance(fake_memory, core) == importance(fake_memory, system) == 1.0
    assert facts == [1.0] * 4 + [round(0.85**n, 6) for n in range(1, 10)]
    assert episodes[:6] == [1.0, 1.0, 0.6, 0.36, 0.216, 0.1296]  # day 6: still there
    assert episodes[6:] == [None] * 7  # deleted on day 7
    assert index_importance(fake_memory, fact) == pytest.approx(0.85**9)
    # day 14: 0.85**10 < 0.2 -> decay review; without a model the fact is kept at 0.5
    report = fake_memory.maintain(now=noon(14))
    assert [(c.action, round(c.importance_after or 0, 4)) for c in report.changes] == [
        ("decayed", round(0.85**10, 4)),
        ("reset", 0.5),
    ]
    assert importance(fake_memory, fact) == index_importance(fake_memory, fact) == 0.5
    assert [h["op"] for h in fake_memory.history(fact, scope="main")][-2:] == [
        "decay",
        "review-keep",
    ]


def test_episode_is_deleted_on_day_7_not_6_with_history_and_markdown(fake_memory: Memory) -> None:
    ep = fake_memory.add(
        "聊了面试", scope="main", category="episode", target="daily", created_at=noon(0)
    )
    path = fake_memory.root / fake_memory.get_entry(ep, scope="main").path
    fake_memory.maintain(now=noon(6))
    assert live(fake_memory, ep) and ep in path.read_text()
    report = fake_memory.maintain(now=noon(7))
    assert [(c.action, c.id, c.text) for c in report.changes if c.action == "deleted"] == [
        ("deleted", ep, "聊了面试")
    ]
    assert not live(fake_memory, ep) and ep not in path.read_text()
    assert fake_memory.search("面试", scope="main") == []
    assert [h["op"] for h in fake_memory.history(ep, scope="main")] == ["add", "delete"]


def test_maintain_twice_on_one_day_equals_once(fake_memory: Memory) -> None:
    ids = fake_memory.add_many(["Likes ramen", "Lives in Lyon", "Works as a nurse"], scope="main")
    fake_memory.add("Talked about trains", scope="main", category="episode", target="daily")
    fake_memory.save("Owns a cat", scope="main")
    first = fake_memory.maintain(now=noon(9))
    # the expired save's note (its text, kept unconfirmed) decays with the three facts
    assert first.count("decayed") == 4 and first.count("deleted") == 1
    assert first.count("expired") == 1
    files = {p: p.read_bytes() for p in fake_memory.root.rglob("*.md")}
    states = {i: fake_memory.workspace.ledger.entries.get(i) for i in ids}
    second = fake_memory.maintain(now=noon(9))
    assert second.changes == [] and second.decay_already_done == ["main"]
    assert {p: p.read_bytes() for p in fake_memory.root.rglob("*.md")} == files
    assert {i: fake_memory.workspace.ledger.entries.get(i) for i in ids} == states
    # a late run catches up exactly as daily runs would
    third = fake_memory.maintain(now=noon(11))
    assert {round(c.importance_after or 0, 6) for c in third.changes} == {round(0.85**7, 6)}


def test_core_and_system_are_never_decayed_or_deleted_by_jobs(fake_memory: Memory) -> None:
    core = fake_memory.add("I am allergic to peanuts", scope="main", category="core")
    system = fake_memory.add("Answer in Chinese", scope="main", category="system")
    fact = fake_memory.add("Likes jazz", scope="main")
    report = fake_memory.maintain(now=noon(400))
    # (the allergy's proposal for the profile expired unconfirmed: a pending item)
    assert {c.id for c in report.changes if c.action != "expired"} == {fact}
    deleted, skipped = delete_entries(fake_memory, [core, system, fact, "m-unknown"], scope="main")
    assert deleted == [fact] and skipped == [core, system, "m-unknown"]
    assert live(fake_memory, core) and live(fake_memory, system)
    assert importance(fake_memory, core) == importance(fake_memory, system) == 1.0


def test_scope_option_and_isolation(fake_memory: Memory) -> None:
    a = fake_memory.add("Likes ramen", scope="alice")
    b = fake_memory.add("Likes sushi", scope="bob")
    report = fake_memory.maintain(scope="alice", now=noon(6))
    assert report.scopes == ["alice"] and [c.id for c in report.changes] == [a]
    assert importance(fake_memory, b) == 1.0
    assert fake_memory.workspace.ledger.meta.get(DECAY_DAY_KEY.format(scope="bob")) is None


def _age(memory: Memory, entry_id: str, days: float) -> None:
    """Make an entry look written ``days`` ago (ledger state only)."""
    ledger = memory.workspace.ledger
    st = ledger.entries.get(entry_id)
    assert st is not None
    old = time.time() - days * DAY
    ledger.entries.upsert(replace(st, created_at=old, updated_at=old))


def test_decay_catches_up_on_open_when_the_last_run_is_over_24_hours_old(tmp_path: Path) -> None:
    s = fake_settings(tmp_path / "ws")
    with Memory(settings=s) as m:
        fact = m.add("Likes ramen", scope="main")
        fresh = m.add("Lives in Lyon", scope="main")
        _age(m, fact, 10)
        m.workspace.ledger.meta.set(DECAY_AT_KEY, repr(time.time() - 2 * DAY))
    with Memory(settings=s) as m:
        assert m._catch_up is not None  # it runs beside the open
        m._catch_up.join()
        # idle since 10 days ago: decayed on days 5..10, i.e. 6 times
        assert importance(m, fact) == pytest.approx(0.85**6)
        assert index_importance(m, fact) == pytest.approx(0.85**6)
        assert importance(m, fresh) == 1.0
    with Memory(settings=s) as m:  # ran less than 24 h ago: nothing more
        assert m._catch_up is None
        assert importance(m, fact) == pytest.approx(0.85**6)


def test_no_decay_on_open_when_recent_or_switched_off(tmp_path: Path) -> None:
    s = fake_settings(tmp_path / "ws")
    with Memory(settings=s) as m:
        fact = m.add("Likes ramen", scope="main")
        _age(m, fact, 10)
        m.workspace.ledger.meta.set(DECAY_AT_KEY, repr(time.time() - 3600))
    with Memory(settings=s) as m:
        assert m._catch_up is None and importance(m, fact) == 1.0
        m.workspace.ledger.meta.set(DECAY_AT_KEY, repr(time.time() - 2 * DAY))
    off = s.model_copy(deep=True)
    off.lifecycle.decay_on_open = False
    with Memory(settings=off) as m:
        assert m._catch_up is None and importance(m, fact) == 1.0


def test_close_waits_for_the_decay_on_open(tmp_path: Path) -> None:
    s = fake_settings(tmp_path / "ws")
    with Memory(settings=s) as m:
        fact = m.add("Likes ramen", scope="main")
        _age(m, fact, 10)
        m.workspace.ledger.meta.set(DECAY_AT_KEY, repr(time.time() - 2 * DAY))
    m = Memory(settings=s)
    m.close()  # at once: the thread finishes before the connections close
    with Memory(settings=s) as m:
        assert importance(m, fact) == pytest.approx(0.85**6)


def test_opening_an_empty_workspace_writes_no_decay_state(tmp_path: Path) -> None:
    with Memory(settings=fake_settings(tmp_path / "ws")) as m:
        assert m.workspace.ledger.meta.get(DECAY_AT_KEY) is None
        assert not (tmp_path / "ws" / ".lock").exists()


def test_a_recall_reaching_the_model_resets_idle_time(fake_memory: Memory) -> None:
    fact = fake_memory.add("主人喜欢吃拉面", scope="main")
    other = fake_memory.add("主人住在上海", scope="main")
    fake_memory.record_access([fact], scope="main", at=noon(4).timestamp())
    fake_memory.maintain(now=noon(6))
    assert importance(fake_memory, fact) == 1.0  # idle since day 4 only
    assert importance(fake_memory, other) == pytest.approx(0.85**2)
    st = fake_memory.workspace.ledger.entries.get(fact)
    assert st is not None and st.access_count == 1
    assert fake_memory.record_access([fact, other], scope="elsewhere") == 0


def test_graph_preflight_recall_updates_last_access(fake_memory: Memory) -> None:
    fact = fake_memory.add("主人喜欢吃拉面", scope="user_alice")
    model = ScriptedChatModel(policy=lambda messages: AIMessage("好的。"))
    graph = build_memory_graph(model, fake_memory, checkpointer=InMemorySaver())
    before = time.time()
    graph.invoke(
        {"messages": [HumanMessage("我喜欢吃什么？拉面吗？")]},
        {"configurable": {"thread_id": "t1", "user_id": "alice"}},
    )
    flush_turn_writes(fake_memory)
    st = fake_memory.workspace.ledger.entries.get(fact)
    assert st is not None and st.last_access is not None and st.last_access >= before


def test_middleware_and_search_tool_recalls_update_last_access(fake_memory: Memory) -> None:
    fact = fake_memory.add("User likes ramen noodles", scope="main")
    middleware = MemoryMiddleware(fake_memory, gate=False)
    assert "ramen" in middleware.recall("What noodles do I like?", scope="main")
    st = fake_memory.workspace.ledger.entries.get(fact)
    assert st is not None and st.access_count == 1 and st.last_access is not None
    MemorySearchTool(memory=fake_memory).invoke({"query": "ramen noodles"})
    st = fake_memory.workspace.ledger.entries.get(fact)
    assert st is not None and st.access_count == 2


async def test_async_maintain_and_middleware_recall(fake_memory: Memory) -> None:
    fact = fake_memory.add("User likes ramen noodles", scope="main")
    middleware = MemoryMiddleware(fake_memory, gate=False)
    fake_memory.record_access([fact], scope="main", at=noon(20).timestamp())
    assert "ramen" in await middleware.arecall("What noodles do I like?", scope="main")
    st = fake_memory.workspace.ledger.entries.get(fact)
    assert st is not None and st.access_count == 2
    assert st.last_access == noon(20).timestamp()  # an access never goes back in time
    report = await fake_memory.amaintain(now=noon(24))
    assert report.count("decayed") == 0 and importance(fake_memory, fact) == 1.0


def test_maintain_purges_the_hot_log_past_its_ttl(fake_memory: Memory) -> None:
    log = fake_memory.session_log  # the memory's own log: its maintain purges it
    log.append("main", "t1", "user", "帮我查一下去杭州的高铁", at=time.time())
    assert fake_memory.maintain(now=noon(10)).events_purged == 0
    report = fake_memory.maintain(now=noon(31))
    assert report.events_purged == 1 and log.recent("main") == []
