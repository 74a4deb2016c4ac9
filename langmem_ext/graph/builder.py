"""``build_memory_graph``: (pending confirm →) preflight recall → answer ⇄ tools →
propose saves → record turn → (pre-compaction flush → checkpoint summarisation).

A turn runs ``pending_confirm`` only when the previous answer proposed saves (in
``confirm_mode="interrupt"``: after the answer that proposes them). ``answer`` only
calls the model; once its reply asks for no tool call, ``propose_saves`` decides
which pending saves the reply asks about (and makes it ask) and ``record_turn`` does
the turn's bookkeeping: boosts, token count, tool-result context, extraction and the
turn log, the writes the reply does not wait for going to the memory's background
:class:`~langmem_ext.graph.bookkeeping.TurnWriter`. The thread's pending saves are
read from the ledger once per turn, by ``propose_saves``, and kept in the state
(``pending_ids``, and the proposed ones in ``proposals``, which the next reply
answers without a read; only confirming a memory that states a safety fact reads
them again, for the profile change it proposes). On
the common path a turn is four graph steps and, with the default durability
``"exit"``, one checkpoint write.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, SystemMessage
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode
from langgraph.store.base import BaseStore

from langmem_ext.graph.bookkeeping import TurnWriter, turn_writer
from langmem_ext.graph.fitting import CallFitter, budget_tool_calls
from langmem_ext.graph.nodes import (
    ANSWER,
    CHECKPOINT_SUMMARIZE,
    PENDING_CONFIRM,
    PRE_COMPACTION_FLUSH,
    PREFLIGHT_RECALL,
    PROPOSE_SAVES,
    RECORD_TURN,
    TOOLS,
    create_answer_node,
    create_checkpoint_node,
    create_checkpoint_recorder,
    create_flush_node,
    create_pending_confirm_node,
    create_pending_interrupt_node,
    create_pending_router,
    create_preflight_recall_node,
    create_propose_node,
    create_record_turn_node,
    needs_checkpoint,
)
from langmem_ext.graph.prompts import SYSTEM_PROMPT
from langmem_ext.graph.runs import COMMIT_LOCK_FILE, SerializedGraph, commit_lock
from langmem_ext.graph.state import MemoryState
from langmem_ext.graph.summaries import MessageSummaries
from langmem_ext.memory import Memory
from langmem_ext.memory.sessions.log import NewEvent, SessionLog
from langmem_ext.memory.sessions.manager import note_turn
from langmem_ext.memory.sessions.threads import default_saver
from langmem_ext.memory.sessions.threads import sqlite_saver as sqlite_checkpointer
from langmem_ext.short_term.accounting import count_message_tokens, tool_schema_tokens
from langmem_ext.short_term.summarizer import summarizer_within
from langmem_ext.short_term.window import is_window_mode, window_overflow
from langmem_ext.tools import create_memory_tools
from langmem_ext.workspace.protocols import WorkspaceLock


def resolve_model(model: BaseChatModel | str) -> BaseChatModel:
    """A ``BaseChatModel`` from an instance or an ``init_chat_model`` string.

    ``"ollama:qwen2.5:7b"`` uses ``langchain-ollama``; nothing connects until the
    first call.
    """
    if isinstance(model, BaseChatModel):
        return model
    from langchain.chat_models import init_chat_model

    provider, _, name = model.partition(":")
    if provider and name:
        return init_chat_model(name, model_provider=provider)
    return init_chat_model(model)


def resolve_extractor(
    extractor: BaseChatModel | str | bool | None, answer_model: BaseChatModel
) -> tuple[bool, BaseChatModel | None]:
    """Whether :func:`build_memory_graph` extracts, and with which model.

    Args:
        extractor: ``None`` (default): on, deterministic; ``False``: off; ``True``:
            the answer model; a model or an ``init_chat_model`` string: that model.
        answer_model: The graph's answer model.

    Returns:
        ``(on, model)``; ``model`` is ``None`` for the deterministic extractor.
    """
    if extractor is False:
        return False, None
    if extractor is None:
        return True, None
    if extractor is True:
        return True, answer_model
    return True, resolve_model(extractor)


def default_checkpointer(memory: Memory) -> BaseCheckpointSaver[Any]:
    """The memory's checkpointer (:func:`~langmem_ext.memory.sessions.threads.default_saver`:
    the one its storage engines supply, one per memory; embedded: a ``SqliteSaver`` on
    ``checkpoints.db`` in the workspace), shared with :class:`~langmem_ext.SessionManager`:
    both see the same threads."""
    return default_saver(memory)


def build_memory_graph(
    model: BaseChatModel | str,
    memory: Memory,
    *,
    checkpointer: BaseCheckpointSaver[Any] | Literal[False] | None = None,
    store: BaseStore | None = None,
    tools: Sequence[BaseTool] = (),
    scope: str = "main",
    confirm_mode: Literal["reply", "interrupt"] = "reply",
    on_turn: Callable[[str, str, str, str], None] | None = None,
    session_log: SessionLog | Literal[False] | None = None,
    background_writes: bool = True,
    extractor: BaseChatModel | str | bool | None = None,
    reply_model: BaseChatModel | str | bool | None = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Build the memory agent graph.

    Setup:
        .. code-block:: bash

            pip install langmem-ext
            ollama pull qwen2.5:7b   # the chat model of these examples

    Instantiate:
        .. code-block:: python

            from langmem_ext import Memory, build_memory_graph

            memory = Memory("./memory-ws")
            graph = build_memory_graph("ollama:qwen2.5:7b", memory)

    Invoke:
        .. code-block:: python

            config = {"configurable": {"thread_id": "t1", "user_id": "alice"}}
            graph.invoke({"messages": [("user", "我喜欢吃拉面，记住")]}, config)
            graph.invoke({"messages": [("user", "确认")]}, config)

    Args:
        model: A chat model, or an ``init_chat_model`` string (``"ollama:qwen2.5:7b"``).
        memory: The memory service.
        checkpointer: Any LangGraph checkpointer; default :func:`default_checkpointer`
            (embedded engines: a ``SqliteSaver`` on ``checkpoints.db`` in the
            workspace); ``False`` compiles without one.
            A run writes one checkpoint per turn, when the turn is done (durability
            ``"exit"``, so no other process starts from a half-done turn; a turn that
            crashes midway is not resumable); ``invoke(..., durability="async")``
            writes one per step, for one process alone on the workspace's threads.
            Saved and confirmed memories are durable either way.
        store: A LangGraph store to attach (e.g. :class:`~langmem_ext.ChromaMemoryStore`).
        tools: Extra tools besides the memory tools.
        scope: Scope used when ``config["configurable"]`` names no ``scope`` / ``user_id``.
        confirm_mode: ``"reply"``: an answer that proposes saves asks the user (the
            graph adds a numbered question when the reply does not ask), and the
            user's next message in the thread confirms or rejects them when it answers
            the question (anything else leaves them pending); ``"interrupt"``: the
            graph pauses with ``interrupt()`` after that answer and resumes with
            ``Command(resume="yes" | "第一个保存，第二个不要" | {"confirm": [...], ...})``.
            Saves proposed in another thread, or outside a conversation, are never
            resolved here.
        on_turn: Called with ``(scope, thread_id, user_text, answer_text)`` after each
            answered turn (in the ``record_turn`` step), besides the session log.
        session_log: The session hot log every user and assistant message goes to;
            default the memory's own (:attr:`Memory.session_log
            <langmem_ext.Memory.session_log>`, which its search reads for "what did I
            ask yesterday"); ``False`` turns logging off.
        background_writes: ``True`` (default): the turn's hot-log events and BOOSTs
            are written by the memory's background writer once the reply is made
            (in order; the scope's next ``preflight_recall`` waits for them; drained
            on ``memory.close()`` and at exit; see
            :mod:`langmem_ext.graph.bookkeeping` and
            :func:`~langmem_ext.graph.flush_turn_writes`). ``False``: written in the
            ``record_turn`` step, before ``invoke`` returns.
        extractor: Background extraction after each answered turn
            (:meth:`Memory.extract <langmem_ext.Memory.extract>`).
            ``None`` (default): on, with the memory's ``extraction_model``
            (``Memory(extraction_model=...)``), else the deterministic extractor
            (explicit first-person statements: 我住在… / I moved to …; no model call);
            ``True``: the answer model reads the turn; a chat model (or model
            string): that model; ``False``: off. It reads the turn and the memories
            recalled for it, on the background writer (off the reply path when
            ``background_writes``). With ``lifecycle.extract_mode="pending"`` (the
            default) each fact is noted at once in the day's notes, marked
            ``[unconfirmed]``, and its promotion to long-term memory waits for the
            user as a pending save (``direct``: written at once; ``off``: nothing). In
            ``short_term.mode="hybrid_window"`` it also writes the per-message
            summaries of the window (:mod:`langmem_ext.graph.summaries`; without it
            they are extractive). The graph leaves the memory as it was built: the
            knowledge graph's triples are extracted with the memory's
            ``knowledge_model`` (see :class:`~langmem_ext.Memory`).
        reply_model: A chat model reading the user's answer to a save proposal (one
            structured-output call, :func:`~langmem_ext.graph.replies.classify_reply`),
            ``True`` for the answer model; ``None`` / ``False``: deterministic rules
            (also when the call fails).

    Returns:
        The compiled graph (state :class:`~langmem_ext.graph.MemoryState`), a
        :class:`~langmem_ext.graph.runs.SerializedGraph`: runs of one thread go one
        at a time (concurrent ``invoke`` / ``ainvoke`` calls on a thread queue; other
        threads run in parallel), and a run commits only on top of the checkpoint
        it started from, starting again on the new state when another process
        wrote the thread first — every turn is in the history exactly once.
    """
    chat = resolve_model(model)
    log = memory.session_log if session_log is None else session_log or None
    writer: TurnWriter | None = turn_writer(memory) if background_writes else None

    def log_turn(scope_: str, thread: str, user_text: str, answer: str) -> None:
        at = time.time()
        if writer is None:
            note_turn(memory, scope_, thread, at)  # a Session API conversation's activity
        else:
            writer.submit(scope_, lambda: note_turn(memory, scope_, thread, at))
        if log is not None:
            events = [NewEvent("user", user_text, at)] if user_text else []
            events.append(NewEvent("assistant", answer, at))
            if writer is None:
                log.append_many(scope_, thread, events)
            else:
                writer.submit(scope_, lambda: log.append_many(scope_, thread, events))
        if on_turn is not None:
            on_turn(scope_, thread, user_text, answer)

    all_tools = [*create_memory_tools(memory, scope=scope), *tools]
    settings = memory.settings

    g: StateGraph[Any, Any, Any, Any] = StateGraph(MemoryState)
    extract, extract_model = resolve_extractor(extractor, chat)
    if extractor is None:
        extract_model = memory.extraction_model
    record_turn_node = create_record_turn_node(
        memory,
        default_scope=scope,
        on_turn=log_turn,
        writer=writer,
        extract=extract,
        extract_model=extract_model,
    )
    st = settings.short_term
    preflight = create_preflight_recall_node(memory, default_scope=scope, writer=writer)
    propose = create_propose_node(memory, default_scope=scope, ask=confirm_mode == "reply")
    reader = (
        chat
        if reply_model is True
        else None
        if reply_model is None or reply_model is False
        else resolve_model(reply_model)
    )
    if is_window_mode(st):  # per-message summaries, off the reply path
        summaries = MessageSummaries(st, extract_model, writer=writer, default_scope=scope)
        preflight = summaries.before(preflight)
        record_turn_node = summaries.after(record_turn_node)
    g.add_node(PREFLIGHT_RECALL, preflight)
    tools_tokens = tool_schema_tokens(all_tools)
    # Sent with every answer call besides the history and the memory block: the
    # checkpoint threshold counts them, so compaction inside a turn stays the exception.
    fixed_tokens = count_message_tokens([SystemMessage(SYSTEM_PROMPT)]) + tools_tokens
    fitter = CallFitter(st, summarizer_within(chat, st), tools_tokens)
    record = create_checkpoint_recorder(memory, default_scope=scope, session_log=log, writer=writer)
    g.add_node(ANSWER, create_answer_node(chat, all_tools, fitter=fitter, record=record))
    wrap, awrap = budget_tool_calls(st)
    g.add_node(TOOLS, ToolNode(all_tools, wrap_tool_call=wrap, awrap_tool_call=awrap))
    g.add_node(PROPOSE_SAVES, propose)
    g.add_node(RECORD_TURN, record_turn_node)  # logs the reply as the user sees it
    g.add_node(PRE_COMPACTION_FLUSH, create_flush_node(memory, chat, default_scope=scope))
    g.add_node(
        CHECKPOINT_SUMMARIZE,
        create_checkpoint_node(
            memory,
            chat,
            default_scope=scope,
            session_log=log,
            writer=writer,
            system_tokens=fixed_tokens,
        ),
    )

    def route_after_answer(state: MemoryState) -> str:
        messages = state.get("messages", [])
        if messages and isinstance(messages[-1], AIMessage) and messages[-1].tool_calls:
            return TOOLS  # what ``tools_condition`` checks
        return PROPOSE_SAVES  # the turn's final answer

    def route_after_turn(state: MemoryState) -> str:
        if st.mode != "full_history" and (
            needs_checkpoint(state, settings, fixed_tokens)
            or window_overflow(state.get("messages", []), st)
        ):
            return (
                PRE_COMPACTION_FLUSH
                if settings.short_term.flush_before_checkpoint
                else CHECKPOINT_SUMMARIZE
            )
        # ``propose_saves`` just set ``proposed``: pause only when the answer proposed some
        return PENDING_CONFIRM if confirm_mode == "interrupt" and state.get("proposed") else END

    if confirm_mode == "interrupt":
        g.add_node(
            PENDING_CONFIRM,
            create_pending_interrupt_node(memory, default_scope=scope, model=reader),
        )
        g.add_edge(START, PREFLIGHT_RECALL)
        g.add_edge(CHECKPOINT_SUMMARIZE, PENDING_CONFIRM)
        g.add_edge(PENDING_CONFIRM, END)
        after_turn = [PRE_COMPACTION_FLUSH, CHECKPOINT_SUMMARIZE, PENDING_CONFIRM, END]
    else:
        g.add_node(
            PENDING_CONFIRM,
            create_pending_confirm_node(memory, default_scope=scope, model=reader, writer=writer),
        )
        g.add_conditional_edges(  # on the state alone: ``pending_confirm`` reads the ledger
            START, create_pending_router(default_scope=scope), [PENDING_CONFIRM, PREFLIGHT_RECALL]
        )
        g.add_edge(PENDING_CONFIRM, PREFLIGHT_RECALL)
        g.add_edge(CHECKPOINT_SUMMARIZE, END)
        after_turn = [PRE_COMPACTION_FLUSH, CHECKPOINT_SUMMARIZE, END]
    g.add_edge(PREFLIGHT_RECALL, ANSWER)
    g.add_conditional_edges(ANSWER, route_after_answer, [TOOLS, PROPOSE_SAVES])
    g.add_edge(TOOLS, ANSWER)
    g.add_edge(PROPOSE_SAVES, RECORD_TURN)
    g.add_conditional_edges(RECORD_TURN, route_after_turn, after_turn)
    g.add_edge(PRE_COMPACTION_FLUSH, CHECKPOINT_SUMMARIZE)

    saver = None if checkpointer is False else checkpointer or default_checkpointer(memory)
    compiled = g.compile(checkpointer=saver, store=store, name="memory_agent")
    # Thread commits of every process on the same storage wait for each other: a lock
    # file beside the workspace's files. Engines with run locks (PostgreSQL) need no
    # other lock: a run holds its thread's lock across processes from its start to its
    # commit. Taking the workspace lock there instead held every scope's writes, on
    # every replica, while a commit awaited the database, and a lock owned by a thread
    # cannot tell apart two coroutines of the event loop's thread.
    run_locks = memory.workspace.engines.run_locks
    lock: WorkspaceLock | None
    if memory.workspace.files:
        lock = commit_lock(memory.root / COMMIT_LOCK_FILE, timeout=settings.lock_timeout_s)
    elif run_locks is not None:
        lock = None
    else:
        lock = memory.workspace.lock
    return SerializedGraph.of(compiled, lock, run_locks)


__all__ = ["build_memory_graph", "default_checkpointer", "resolve_model", "sqlite_checkpointer"]
