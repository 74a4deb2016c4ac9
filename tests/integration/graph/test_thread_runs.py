"""Runs of one conversation thread never overlap, and no turn is lost or doubled.

In one process the memory graph's entry points queue on a lock per thread (other
threads run in parallel); across processes (here: two graphs on two checkpointer
objects of one ``checkpoints.db``) a run commits only on top of the checkpoint it
started from, and starts again on the new state when another writer came first.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from langmem_ext import Memory, ThreadConflictError
from langmem_ext.chat_models.scripted import ScriptedChatModel
from langmem_ext.graph import build_memory_graph, sqlite_checkpointer
from langmem_ext.graph.runs import RUN_ATTEMPTS, SerializedGraph
from langmem_ext.memory.sessions.threads import ThreadStore

Policy = Callable[[list[BaseMessage]], AIMessage]


def _last_human(messages: list[BaseMessage]) -> str:
    return str(next(m for m in reversed(messages) if isinstance(m, HumanMessage)).content)


def echo(calls: list[str] | None = None) -> Policy:
    """Answer ``re: <the user's message>``, recording each call."""

    def policy(messages: list[BaseMessage]) -> AIMessage:
        text = _last_human(messages)
        if calls is not None:
            calls.append(text)
        return AIMessage(f"re: {text}")

    return policy


def config(thread: str = "t1") -> dict[str, Any]:
    return {"configurable": {"thread_id": thread, "user_id": "alice"}}


def turns(messages: list[BaseMessage]) -> list[tuple[str, str]]:
    """The thread's (user, answer) pairs, checking each user message is answered."""
    out = []
    for i, m in enumerate(messages):
        if isinstance(m, HumanMessage):
            reply = messages[i + 1]
            assert isinstance(reply, AIMessage), messages
            out.append((str(m.content), str(reply.content)))
    return out


def say(text: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(text)]}


@pytest.fixture
def ws(fake_memory: Memory) -> Iterator[Path]:
    yield fake_memory.root


def test_the_graph_is_a_compiled_state_graph_that_keeps_its_class_on_copy(
    fake_memory: Memory,
) -> None:
    from langgraph.graph.state import CompiledStateGraph

    graph = build_memory_graph(ScriptedChatModel(policy=echo()), fake_memory)
    assert isinstance(graph, SerializedGraph) and isinstance(graph, CompiledStateGraph)
    copied = graph.with_config(configurable={"user_id": "bob"})
    assert isinstance(copied, SerializedGraph) and copied.commit_lock is graph.commit_lock
    out = copied.invoke(say("hello there"), {"configurable": {"thread_id": "c"}})
    assert turns(out["messages"]) == [("hello there", "re: hello there")]


def test_concurrent_invokes_on_one_thread_keep_every_turn_once(fake_memory: Memory) -> None:
    calls: list[str] = []
    graph = build_memory_graph(ScriptedChatModel(policy=echo(calls)), fake_memory)
    n = 20
    start = threading.Barrier(n)
    errors: list[BaseException] = []

    def run(i: int) -> None:
        start.wait()
        try:
            graph.invoke(say(f"message {i}"), config())
        except BaseException as e:  # reported below
            errors.append(e)

    workers = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(120)
    assert not errors, errors
    said = turns(graph.get_state(config()).values["messages"])
    assert sorted(said) == sorted((f"message {i}", f"re: message {i}") for i in range(n))
    assert sorted(calls) == sorted(f"message {i}" for i in range(n))  # no run started twice


async def test_concurrent_ainvokes_on_one_thread_keep_every_turn_once(ws: Path,
                                                                      fake_memory: Memory) -> None:  # fmt: skip
    async with AsyncSqliteSaver.from_conn_string(str(ws / "checkpoints.db")) as saver:
        graph = build_memory_graph(
            ScriptedChatModel(policy=echo()), fake_memory, checkpointer=saver
        )
        n = 12
        await asyncio.gather(*(graph.ainvoke(say(f"async {i}"), config()) for i in range(n)))
        state = await graph.aget_state(config())
    said = turns(state.values["messages"])
    assert sorted(said) == sorted((f"async {i}", f"re: async {i}") for i in range(n))


def test_sync_and_async_runs_of_one_thread_queue_on_one_lock(fake_memory: Memory) -> None:
    gate, entered = threading.Event(), threading.Event()

    def policy(messages: list[BaseMessage]) -> AIMessage:
        text = _last_human(messages)
        if text == "sync first":
            entered.set()
            assert gate.wait(60)
        return AIMessage(f"re: {text}")

    graph = build_memory_graph(  # a checkpointer with sync and async methods
        ScriptedChatModel(policy=policy), fake_memory, checkpointer=InMemorySaver()
    )
    first = threading.Thread(target=graph.invoke, args=(say("sync first"), config()))
    first.start()
    assert entered.wait(60)

    async def second() -> None:
        task = asyncio.ensure_future(graph.ainvoke(say("async second"), config()))
        await asyncio.sleep(0)
        gate.set()
        await task

    asyncio.run(second())
    first.join(60)
    said = turns(graph.get_state(config()).values["messages"])
    assert said == [("sync first", "re: sync first"), ("async second", "re: async second")]


def test_other_threads_run_while_one_thread_waits_for_its_model(fake_memory: Memory) -> None:
    gate, entered = threading.Event(), threading.Event()

    def policy(messages: list[BaseMessage]) -> AIMessage:
        text = _last_human(messages)
        if text == "slow":
            entered.set()
            assert gate.wait(60)
        return AIMessage(f"re: {text}")

    graph = build_memory_graph(ScriptedChatModel(policy=policy), fake_memory)
    slow = threading.Thread(target=graph.invoke, args=(say("slow"), config("A")))
    slow.start()
    assert entered.wait(60)
    # thread A's run is inside its model call; thread B's whole turn goes through
    out = graph.invoke(say("fast"), config("B"))
    assert turns(out["messages"]) == [("fast", "re: fast")]
    assert slow.is_alive()  # A still waits on its gate: nothing global held B back
    gate.set()
    slow.join(60)
    assert turns(graph.get_state(config("A")).values["messages"]) == [("slow", "re: slow")]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_two_graphs_on_one_checkpoint_file_start_again_on_the_new_state(
    ws: Path, fake_memory: Memory, mode: str
) -> None:
    """Two "processes": separate checkpointer objects (no shared in-process lock)."""
    gate, entered = threading.Event(), threading.Event()
    a_calls: list[str] = []

    def slow_first(messages: list[BaseMessage]) -> AIMessage:
        a_calls.append(_last_human(messages))
        if len(a_calls) == 1:  # the first attempt waits while the other graph commits
            entered.set()
            assert gate.wait(60)
        return AIMessage(f"A: {_last_human(messages)}")

    def b(messages: list[BaseMessage]) -> AIMessage:
        return AIMessage(f"B: {_last_human(messages)}")

    if mode == "sync":
        graph_a = build_memory_graph(
            ScriptedChatModel(policy=slow_first), fake_memory,
            checkpointer=sqlite_checkpointer(ws / "checkpoints.db"),
        )  # fmt: skip
        graph_b = build_memory_graph(
            ScriptedChatModel(policy=b), fake_memory,
            checkpointer=sqlite_checkpointer(ws / "checkpoints.db"),
        )  # fmt: skip
        graph_b.invoke(say("before"), config())
        result: dict[str, Any] = {}
        a = threading.Thread(target=lambda: result.update(graph_a.invoke(say("from A"), config())))
        a.start()
        assert entered.wait(60)
        graph_b.invoke(say("from B"), config())  # commits while A's first attempt answers
        gate.set()
        a.join(60)
        final = graph_b.get_state(config()).values["messages"]
    else:

        async def main() -> tuple[dict[str, Any], list[BaseMessage]]:
            path = str(ws / "checkpoints.db")
            async with (
                AsyncSqliteSaver.from_conn_string(path) as saver_a,
                AsyncSqliteSaver.from_conn_string(path) as saver_b,
            ):
                graph_a = build_memory_graph(
                    ScriptedChatModel(policy=slow_first), fake_memory, checkpointer=saver_a
                )
                graph_b = build_memory_graph(
                    ScriptedChatModel(policy=b), fake_memory, checkpointer=saver_b
                )
                await graph_b.ainvoke(say("before"), config())
                run_a = asyncio.ensure_future(graph_a.ainvoke(say("from A"), config()))
                assert await asyncio.to_thread(entered.wait, 60)
                await graph_b.ainvoke(say("from B"), config())
                gate.set()
                out = await run_a
                return out, (await graph_b.aget_state(config())).values["messages"]

        result, final = asyncio.run(main())
    assert a_calls == ["from A", "from A"]  # the first attempt's commit was refused
    expected = [("before", "B: before"), ("from B", "B: from B"), ("from A", "A: from A")]
    assert turns(final) == expected
    assert turns(result["messages"]) == expected  # invoke returns the retry's state


def test_a_thread_that_keeps_moving_fails_after_the_attempts_with_nothing_committed(
    ws: Path, fake_memory: Memory
) -> None:
    other = ThreadStore(sqlite_checkpointer(ws / "checkpoints.db"))
    attempts: list[str] = []

    def policy(messages: list[BaseMessage]) -> AIMessage:
        attempts.append(_last_human(messages))
        thread = other.read("t1")  # another writer adds a checkpoint during every attempt
        other.write(thread, {"summary": f"written during attempt {len(attempts)}"}, scope="x")
        return AIMessage("never committed")

    graph = build_memory_graph(ScriptedChatModel(policy=policy), fake_memory)
    with pytest.raises(ThreadConflictError, match="Send the message again"):
        graph.invoke(say("doomed"), config())
    assert len(attempts) == RUN_ATTEMPTS
    state = graph.get_state(config()).values
    assert state["summary"] == f"written during attempt {RUN_ATTEMPTS}"
    assert not state.get("messages")  # none of the run's turn was written
    # the thread is usable again as soon as the other writer stops
    graph = build_memory_graph(ScriptedChatModel(policy=echo()), fake_memory)
    assert turns(graph.invoke(say("again"), config())["messages"]) == [("again", "re: again")]


def test_an_open_stream_of_a_thread_refuses_a_second_run_in_its_os_thread(
    fake_memory: Memory,
) -> None:
    graph = build_memory_graph(ScriptedChatModel(policy=echo()), fake_memory)
    chunks = graph.stream(say("first"), config())
    next(chunks)  # the run holds the thread now
    with pytest.raises(ThreadConflictError, match="still open in this OS thread"):
        graph.invoke(say("second"), config())
    assert graph.invoke(say("other thread"), config("t2"))["messages"]  # others are free
    for _ in chunks:
        pass
    assert turns(graph.invoke(say("second"), config())["messages"]) == [
        ("first", "re: first"),
        ("second", "re: second"),
    ]


def test_a_stream_closed_early_frees_the_thread(fake_memory: Memory) -> None:
    graph = build_memory_graph(ScriptedChatModel(policy=echo()), fake_memory)
    chunks = graph.stream(say("abandoned"), config())
    next(chunks)
    chunks.close()
    out = graph.invoke(say("next"), config())
    assert [m.content for m in out["messages"][-2:]] == ["next", "re: next"]


def test_the_server_answers_409_when_the_thread_keeps_moving(fake_memory: Memory) -> None:
    import httpx

    from langmem_ext.server.app import create_app, serve_in_thread

    ws = fake_memory.root
    other = ThreadStore(sqlite_checkpointer(ws / "checkpoints.db"))
    attempts: list[str] = []

    def policy(messages: list[BaseMessage]) -> AIMessage:
        text = _last_human(messages)
        attempts.append(text)
        if text == "doomed":  # another process writes the thread during every attempt
            thread = other.read("user_alice/t1")
            other.write(thread, {"summary": f"attempt {len(attempts)}"}, scope="user_alice")
        return AIMessage(f"re: {text}")

    app = create_app(fake_memory, ScriptedChatModel(policy=policy))
    body = {"input": {"messages": ["doomed"]}, "config": config()}
    with serve_in_thread(app) as url:
        r = httpx.post(f"{url}/agent/invoke", json=body, timeout=120)
        assert r.status_code == 409, r.text
        assert "Send the message again" in r.json()["detail"]
        assert attempts == ["doomed"] * RUN_ATTEMPTS
        body["input"] = {"messages": ["fine"]}
        r = httpx.post(f"{url}/agent/invoke", json=body, timeout=120)
        assert r.status_code == 200, r.text
    said = [m.content for m in other.read("user_alice/t1").messages]
    assert said == ["fine", "re: fine"]  # nothing of the refused request was kept
