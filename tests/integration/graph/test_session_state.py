"""Structured session state: the reducer's merges, multi-agent graphs, checkpoints."""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Annotated, Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph

from langmem_ext import Memory
from langmem_ext.chat_models.scripted import ScriptedChatModel
from langmem_ext.graph import build_memory_graph, sqlite_checkpointer
from langmem_ext.graph.shared_state import (
    SessionState,
    agent_slot,
    clear_slot,
    combine,
    entities,
    flow,
    reduce_session,
    set_entities,
    set_flow,
    set_meta,
    update_slot,
)


def apply(state: dict[str, Any], *updates: dict[str, Any]) -> dict[str, Any]:
    for u in updates:
        state = {**state, "session": reduce_session(state.get("session"), u["session"])}
    return state


def test_entities_merge_and_none_removes_one() -> None:
    s = apply({}, set_entities(order_id="A-1", destination="Porto"))
    s = apply(s, set_entities({"destination": "Lisbon", "ticket no.": 7}))
    assert entities(s) == {"order_id": "A-1", "destination": "Lisbon", "ticket no.": 7}
    s = apply(s, set_entities(ticket=None, order_id=None))
    assert entities(s) == {"destination": "Lisbon", "ticket no.": 7}


def test_slots_are_isolated_per_agent_and_merge_key_by_key() -> None:
    s = apply({}, update_slot("triage", symptom="headache"), update_slot("billing", paid=False))
    s = apply(s, update_slot("triage", days=3))
    assert agent_slot(s, "triage") == {"symptom": "headache", "days": 3}
    assert agent_slot(s, "billing") == {"paid": False}
    s = apply(s, update_slot("triage", symptom=None), clear_slot("billing"))
    assert agent_slot(s, "triage") == {"days": 3}
    assert agent_slot(s, "billing") == {} and "billing" not in s["session"]["slots"]
    assert agent_slot({}, "nobody") == {}


def test_flow_step_and_agent() -> None:
    s = apply({}, set_flow("triage", agent="triage"))
    s = apply(s, set_flow("collect_address", turn_count=2))
    assert flow(s) == {"step": "collect_address", "agent": "triage", "turn_count": 2}
    s = apply(s, set_flow(None, agent="billing"))
    assert flow(s) == {"agent": "billing", "turn_count": 2}  # a None step clears it


def test_reducer_copies_and_stamps_updated_at() -> None:
    left: SessionState = {"entities": {"a": 1}, "slots": {"x": {"k": 1}}}
    right: SessionState = {"entities": {"b": 2}, "slots": {"x": {"j": 2}}, "intent": "refund"}
    out = reduce_session(left, right)
    assert left == {"entities": {"a": 1}, "slots": {"x": {"k": 1}}}
    assert right["slots"] == {"x": {"j": 2}}
    assert out["slots"]["x"] == {"k": 1, "j": 2} and out["intent"] == "refund"
    assert out["meta"]["updated_at"].endswith("+00:00")
    assert reduce_session(out, {}) == out  # an empty update changes nothing
    assert reduce_session(None, None) == {}


def test_combine_keeps_removals_for_the_reducer() -> None:
    update = combine(
        set_entities(a=1, b=2),
        set_entities(b=None),
        update_slot("x", k=1),
        set_meta(user_id="u1"),
        {"notes": ["n"]},
    )
    assert update["session"]["entities"] == {"a": 1, "b": None}
    s = apply({"session": {"entities": {"b": 0}}}, update)
    assert entities(s) == {"a": 1}
    assert s["session"]["meta"]["user_id"] == "u1" and update["notes"] == ["n"]


class State(MessagesState):
    session: Annotated[SessionState, reduce_session]
    seen: Annotated[list[str], operator.add]


def _agent(name: str, **entity: Any) -> Any:
    def node(state: State) -> dict[str, Any]:
        count = agent_slot(state, name).get("runs", 0) + 1
        return {
            **combine(set_entities(**entity), update_slot(name, runs=count)),
            "seen": [f"{name} saw {sorted(entities(state))}"],
        }

    return node


def _fan_out_graph(db: Path) -> Any:
    g = StateGraph(State)
    g.add_node("supervisor", lambda s: set_flow("collect", agent="supervisor"))
    g.add_node("orders", _agent("orders", order_id="A-1"))
    g.add_node("shipping", _agent("shipping", destination="Porto"))
    g.add_edge(START, "supervisor")
    g.add_edge("supervisor", "orders")  # both agents run in the same step
    g.add_edge("supervisor", "shipping")
    g.add_edge("orders", END)
    g.add_edge("shipping", END)
    return g.compile(checkpointer=sqlite_checkpointer(db))


def test_two_agents_write_in_one_step_and_the_checkpoint_keeps_it(tmp_path: Path) -> None:
    db = tmp_path / "cp.db"
    config: Any = {"configurable": {"thread_id": "t"}}
    out = _fan_out_graph(db).invoke({"messages": [HumanMessage("hi")]}, config)
    assert entities(out) == {"order_id": "A-1", "destination": "Porto"}
    assert agent_slot(out, "orders") == {"runs": 1} and agent_slot(out, "shipping") == {"runs": 1}

    again = _fan_out_graph(db)  # a new SqliteSaver connection: only the file remains
    saved = again.get_state(config).values
    assert entities(saved) == entities(out) and flow(saved)["agent"] == "supervisor"
    out2 = again.invoke({"messages": [HumanMessage("again")]}, config)
    assert agent_slot(out2, "orders") == {"runs": 2} and agent_slot(out2, "shipping") == {"runs": 2}
    assert "orders saw ['destination', 'order_id']" in out2["seen"]  # shared from turn 1
    other: Any = {"configurable": {"thread_id": "other"}}
    assert "session" not in again.get_state(other).values


def _reply(messages: list[BaseMessage]) -> AIMessage:
    return AIMessage("ok")


def test_the_memory_graph_carries_the_session_through_its_checkpoint(
    fake_memory: Memory, tmp_path: Path
) -> None:
    db = tmp_path / "memory-cp.db"
    config: Any = {"configurable": {"thread_id": "t1", "user_id": "alice"}}
    model = ScriptedChatModel(policy=_reply)
    graph = build_memory_graph(model, fake_memory, checkpointer=sqlite_checkpointer(db))
    graph.invoke({"messages": [HumanMessage("hello there, how are you?")]}, config)
    graph.update_state(config, combine(set_entities(order_id="A-7"), update_slot("a", x=1)))
    graph.update_state(config, update_slot("b", y=2))

    resumed = build_memory_graph(model, fake_memory, checkpointer=sqlite_checkpointer(db))
    resumed.invoke({"messages": [HumanMessage("what is the weather like today?")]}, config)
    values = resumed.get_state(config).values
    assert entities(values) == {"order_id": "A-7"}
    assert agent_slot(values, "a") == {"x": 1} and agent_slot(values, "b") == {"y": 2}
