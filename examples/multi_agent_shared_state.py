"""A supervisor and two sub-agents sharing entities, each with its own slot.

The session value in a LangGraph graph: the supervisor reads the user's
message, records the entities it mentions (``order_id``, ``destination``) and the
flow step, and hands over to the ``orders`` or the ``shipping`` agent. Both agents
read the shared entities and keep private notes in their own slot; the ``session``
key's reducer merges every update, so neither agent overwrites the other's slot.

The value lives in the graph state, so the thread's checkpoint (a ``SqliteSaver``
in a temporary folder) saves it: the second turn runs in a freshly built graph on a
new connection, resumed from the checkpoint alone.

Offline: the models are scripted (``langmem_ext.chat_models.scripted``). Run it with
``python examples/multi_agent_shared_state.py``.
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Annotated, Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph

from langmem_ext.chat_models.scripted import ScriptedChatModel
from langmem_ext.graph import (
    SessionState,
    agent_slot,
    reduce_session,
    set_entities,
    set_flow,
    sqlite_checkpointer,
    update_slot,
)
from langmem_ext.graph.shared_state import combine, entities, flow


class State(MessagesState):
    """Messages plus the structured session value (``MemoryState`` has it too)."""

    session: Annotated[SessionState, reduce_session]


def _last_user(messages: list[BaseMessage]) -> str:
    return next(str(m.content) for m in reversed(messages) if isinstance(m, HumanMessage))


def supervisor_policy(messages: list[BaseMessage]) -> AIMessage:
    """The router's "structured output": which agent, which entities."""
    text = _last_user(messages)
    found: dict[str, Any] = {}
    if m := re.search(r"\b[A-Z]-\d{4}\b", text):
        found["order_id"] = m.group(0)
    if m := re.search(r"\bto ([A-Z][a-z]+)", text):
        found["destination"] = m.group(1)
    agent = "shipping" if "send" in text.lower() else "orders"
    return AIMessage(json.dumps({"agent": agent, "step": f"{agent}_request", "entities": found}))


def orders_policy(messages: list[BaseMessage]) -> AIMessage:
    return AIMessage(str(messages[-1].content))  # the node writes the answer's facts


supervisor_model = ScriptedChatModel(policy=supervisor_policy)
orders_model = ScriptedChatModel(policy=orders_policy)
shipping_model = ScriptedChatModel(policy=orders_policy)


def supervisor(state: State) -> dict[str, Any]:
    plan = json.loads(str(supervisor_model.invoke(state["messages"]).content))
    return combine(set_entities(plan["entities"]), set_flow(plan["step"], agent=plan["agent"]))


def orders_agent(state: State) -> dict[str, Any]:
    order_id = entities(state)["order_id"]
    lookups = agent_slot(state, "orders").get("lookups", 0) + 1
    facts = f"Order {order_id} has shipped; it is going to Porto."
    reply = orders_model.invoke([HumanMessage(facts)])
    return {
        **combine(
            set_entities(destination="Porto"),  # shared: the shipping agent will read it
            update_slot("orders", status="shipped", lookups=lookups),
        ),
        "messages": [AIMessage(str(reply.content), name="orders")],
    }


def shipping_agent(state: State) -> dict[str, Any]:
    shared = entities(state)  # order_id was found by the supervisor in an earlier turn
    fee = "EUR 5" if shared.get("destination") != "Porto" else "none"
    facts = f"Order {shared['order_id']} will go to {shared['destination']}; change fee {fee}."
    reply = shipping_model.invoke([HumanMessage(facts)])
    changes = agent_slot(state, "shipping").get("changes", 0) + 1
    return {
        **combine(update_slot("shipping", fee=fee, changes=changes), set_flow("done")),
        "messages": [AIMessage(str(reply.content), name="shipping")],
    }


def route(state: State) -> str:
    return str(flow(state)["agent"])


def build(db: Path) -> CompiledStateGraph[Any, Any, Any, Any]:
    graph = StateGraph(State)
    graph.add_node("supervisor", supervisor)
    graph.add_node("orders", orders_agent)
    graph.add_node("shipping", shipping_agent)
    graph.add_edge(START, "supervisor")
    graph.add_conditional_edges("supervisor", route, ["orders", "shipping"])
    graph.add_edge("orders", END)
    graph.add_edge("shipping", END)
    return graph.compile(checkpointer=sqlite_checkpointer(db))


def show(label: str, result: dict[str, Any]) -> None:
    reply = result["messages"][-1]
    session = result["session"]
    print(f"{label} -> {reply.name}: {reply.content}")
    print(f"  entities: {session['entities']}")
    print(f"  flow: step={session['flow']['step']!r} agent={session['flow']['agent']!r}")
    for agent in ("orders", "shipping"):
        print(f"  slot {agent}: {agent_slot(result, agent)}")


def main() -> None:
    config: RunnableConfig = {"configurable": {"thread_id": "customer-42"}}
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "checkpoints.db"
        first = build(db)
        show("turn 1", first.invoke({"messages": [HumanMessage("Where is order B-2024?")]}, config))
        del first  # the second turn starts from the checkpoint alone

        second = build(db)
        saved = second.get_state(config).values["session"]
        print(f"resumed from the checkpoint: order_id={saved['entities']['order_id']}")
        turn = {"messages": [HumanMessage("Please send it to Lisbon instead.")]}
        show("turn 2", second.invoke(turn, config))
    print("done")


if __name__ == "__main__":
    main()
