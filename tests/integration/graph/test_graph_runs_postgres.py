"""Runs of one conversation thread on two replicas of one PostgreSQL database wait for
each other: the second starts only once the first is committed, so no run is done
twice (its model calls, its tool calls) because another replica's turn came first."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from _agent_helpers import cfg
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from langmem_ext import Memory
from langmem_ext.chat_models.scripted import ScriptedChatModel
from langmem_ext.graph import build_memory_graph

SAID = ("Which parcels are due today?", "Which parcels are due tomorrow?")


@pytest.fixture
def replicas(pg_replicas: tuple[Memory, Memory]) -> tuple[Memory, Memory]:
    return pg_replicas


def _slow_model(calls: list[list[str]]) -> ScriptedChatModel:
    """A model that takes its time: each call records the user's messages it saw."""

    def reply(messages: list[BaseMessage]) -> AIMessage:
        seen = [str(m.content) for m in messages if isinstance(m, HumanMessage)]
        calls.append([s for s in seen if s in SAID])
        time.sleep(1.0)
        return AIMessage("Nothing is due.")

    return ScriptedChatModel(policy=reply)


def _turns(graphs: list[Any]) -> None:
    """One turn on thread t1 through each graph, at the same moment."""
    start = threading.Barrier(len(graphs))
    errors: list[BaseException] = []

    def say(graph: Any, text: str) -> None:
        start.wait()
        try:
            graph.invoke({"messages": [HumanMessage(text)]}, cfg("t1"))
        except BaseException as e:
            errors.append(e)

    both = [threading.Thread(target=say, args=(g, t)) for g, t in zip(graphs, SAID, strict=True)]
    for t in both:
        t.start()
    for t in both:
        t.join()
    assert not errors, errors


def test_runs_of_one_thread_on_two_replicas_run_one_after_the_other(
    replicas: tuple[Memory, Memory],
) -> None:
    a, b = replicas
    calls: list[list[str]] = []
    graph_a = build_memory_graph(_slow_model(calls), a)
    graph_b = build_memory_graph(_slow_model(calls), b)
    _turns([graph_a, graph_b])

    answering = [c for c in calls if c]
    assert len(answering) == 2, answering  # no run was started again
    first, second = answering
    assert len(first) == 1 and sorted(second) == sorted(SAID)  # the second saw the first
    said = [m.content for m in graph_b.get_state(cfg("t1")).values["messages"]]
    assert [s for s in said if s in SAID] == second


def test_a_replica_killed_mid_run_leaves_no_lock_behind(
    tmp_path: Path, pg_vector_url: str, replicas: tuple[Memory, Memory]
) -> None:
    import psycopg

    a, _b = replicas
    locks = a.workspace.engines.run_locks
    assert locks is not None
    held = psycopg.connect(pg_vector_url, autocommit=True)  # a replica's run holds t1
    held.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (locks._key("user_alice/t1"),))
    waited = threading.Event()

    def run() -> None:
        with locks.hold("user_alice/t1"):
            waited.set()

    t = threading.Thread(target=run)
    t.start()
    time.sleep(0.5)
    assert not waited.is_set()  # the other run waits
    held.close()  # the replica dies: its connection, and so its lock, goes
    t.join(timeout=10)
    assert waited.is_set()


def test_a_run_commits_while_another_thread_holds_the_whole_workspace(
    replicas: tuple[Memory, Memory],
) -> None:
    """On a database a run's commit is covered by its thread's run lock: it does not
    take the workspace lock, whose holders (a sync of every scope, an import) keep
    every scope's writes out, and which a coroutine on the event loop's thread cannot
    hold apart from the loop's other coroutines."""
    a, _b = replicas
    a.workspace.lock.timeout = 2.0  # a commit waiting for the holder would fail fast
    graph = build_memory_graph(ScriptedChatModel(policy=lambda _m: AIMessage("Noted.")), a)
    held, release = threading.Event(), threading.Event()

    def hold_whole() -> None:
        with a.workspace.lock.hold():
            held.set()
            release.wait(60)

    holder = threading.Thread(target=hold_whole)
    holder.start()
    try:
        assert held.wait(30)
        graph.invoke({"messages": [HumanMessage(SAID[0])]}, cfg("t1"))
        said = [m.content for m in graph.get_state(cfg("t1")).values["messages"]]
        assert SAID[0] in said
    finally:
        release.set()
        holder.join(30)
