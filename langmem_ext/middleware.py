"""Agent middleware for ``langchain.agents.create_agent``: the memory graph's recall,
window fitting and extraction for any agent.

:class:`MemoryMiddleware` recalls once per user message with the same routine as the
memory graph (:func:`~langmem_ext.memory.recall.context.recall_context`: the profile's safety
fields, core memories, the hybrid search behind the adaptive gate, a session's
first-turn daily notes, the last turn's tool results), keeps the turn's memory block
in the agent state, puts it in the system message of every model call of the turn,
and fits each call into the context window with the graph's fitter
(:class:`~langmem_ext.short_term.fitter.CallFitter`). Memories are delimited and
JSON-quoted, and the block says they are data, not instructions, so a memory that
reads like a command stays a quotation.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, NotRequired

try:
    from langchain.agents.middleware import (
        AgentMiddleware,
        AgentState,
        ExtendedModelResponse,
        ModelRequest,
        ModelResponse,
    )
except ImportError as e:  # pragma: no cover - depends on the environment
    msg = (
        "MemoryMiddleware needs LangChain 1.x agents: `pip install 'langchain>=1.0'` "
        "(the `langchain` package, not only `langchain-core`)."
    )
    raise ImportError(msg) from e

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime
from langgraph.types import Command

from langmem_ext.core.errors import LangmemError
from langmem_ext.graph.nodes import BACKGROUND_DEFER
from langmem_ext.memory.recall.context import RecallContext, recall_context
from langmem_ext.memory.scoping import MAIN_SCOPE, check_scope, scope_from_config
from langmem_ext.memory.service import Memory
from langmem_ext.memory.sessions.manager import record_checkpoint
from langmem_ext.short_term.accounting import tool_schema_tokens
from langmem_ext.short_term.budget import budget_result
from langmem_ext.short_term.checkpoint import Checkpoint
from langmem_ext.short_term.content import message_text
from langmem_ext.short_term.fitter import CallFitter, FittedCall
from langmem_ext.short_term.summarizer import summarizer_within
from langmem_ext.short_term.tool_context import condense_tool_results, tool_results_of_turn
from langmem_ext.short_term.window import is_window_mode, with_fallback_summaries
from langmem_ext.tools import TOOL_NAMES, create_memory_tools

logger = logging.getLogger(__name__)


def _with_block(request: ModelRequest[Any], block: str) -> ModelRequest[Any]:
    if not block:
        return request
    base = request.system_message
    if base is None:
        return request.override(system_message=SystemMessage(content=block))
    if isinstance(base.content, str):
        content: Any = f"{base.content}\n\n{block}" if base.content else block
    else:
        content = [*base.content, {"type": "text", "text": block}]
    return request.override(system_message=SystemMessage(content=content))


class MemoryAgentState(AgentState[Any]):
    """Agent state with what :class:`MemoryMiddleware` recalled and compacted.

    Attributes:
        memory_context: The memory block of the current turn (made once per user
            message, sent with every model call of the turn).
        memory_safety: The profile's safety block of the current turn.
        memory_turn: Id of the user message the two blocks were made for.
        memory_first_turn_done: The session's first turn is past (its daily notes
            were shown).
        memory_summary: Summary of the messages removed to keep model calls
            within the context window (sent in the system message of every call).
        memory_message_summaries: Per-message summaries by message id, for the
            ``[Summary]`` lines of ``short_term.mode="hybrid_window"``.
    """

    memory_context: NotRequired[str]
    memory_safety: NotRequired[str]
    memory_turn: NotRequired[str]
    memory_first_turn_done: NotRequired[bool]
    memory_summary: NotRequired[str | None]
    memory_message_summaries: NotRequired[dict[str, str]]


def _current_config() -> RunnableConfig | None:
    try:
        return get_config()
    except RuntimeError:  # called outside a LangGraph run
        return None


def _latest_human(messages: Sequence[BaseMessage]) -> int | None:
    """Index of the latest human message, or ``None``."""
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], HumanMessage):
            return i
    return None


def _turn_key(messages: Sequence[BaseMessage]) -> str | None:
    """What identifies the current turn: the id of its user message."""
    i = _latest_human(messages)
    if i is None:
        return None
    m = messages[i]
    return m.id or f"{i}:{hash(message_text(m))}"


def _last_turn_tool_context(messages: Sequence[BaseMessage]) -> str | None:
    """The previous turn's tool results (not the memory tools'), condensed for this
    turn, as the memory graph carries them."""
    i = _latest_human(messages)
    if not i:
        return None
    results = tool_results_of_turn(messages[:i], skip=frozenset(TOOL_NAMES))
    return condense_tool_results(results, None) if results else None


@dataclass(frozen=True)
class _CallTarget:
    """The middleware's :class:`~langmem_ext.memory.sessions.manager.CheckpointTarget`.

    The summarised messages leave this model call, and the agent state (the
    response's update removes them); the summary becomes an ``episode`` memory of
    the run's scope. The middleware keeps no session hot log.
    """

    memory: Memory
    default_scope: str

    def commit(self, cp: Checkpoint) -> float:
        """The call sends the summary and the kept messages (the fitter made them)."""
        return time.time()

    def store_episode(self, summary: str, at: float) -> str:
        """A new ``episode`` memory of the summary, in the run's scope."""
        return self.memory.add(
            summary[: self.memory.settings.max_text_chars],
            scope=scope_from_config(_current_config(), self.default_scope),
            category="episode",
            target="daily",
            source="checkpoint",
            created_at=at,
        )

    def log_summary(self, summary: str, at: float) -> None:
        """Nothing to do: the agent's messages are not in a session hot log."""


class MemoryMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """Recall memory before every model call of a ``create_agent`` agent.

    Once per user message (:meth:`before_agent`) it makes the turn's memory block
    with the memory graph's recall routine: the profile's safety fields, core
    memories, the hits of a search behind the adaptive gate (greetings,
    acknowledgements and short chatter are skipped; "remember", "上次",
    "yesterday" ... force it; a recall question that finds nothing says so, so the
    model does not guess), a session's first-turn daily notes and the last turn's
    tool results. Every model call of the turn gets the safety block and the
    ``<memory_context>`` block in its system message. The scope comes from
    ``config["configurable"]`` (``scope``, else ``user_id``, else ``scope`` given
    here). An unreadable profile is said in the safety block; a search that fails
    falls back to the beginning of the long-term file. After the run's final answer
    (:meth:`after_agent`) the turn goes through the memory's extractor on its
    background writer: facts the user stated are noted in the day's notes, marked
    ``[unconfirmed]``, their promotion to long-term memory pending (``extract=False``
    turns it off).

    Setup:
        .. code-block:: bash

            pip install langmem-ext langchain

    Instantiate:
        .. code-block:: python

            from langmem_ext import Memory
            from langmem_ext.middleware import MemoryMiddleware

            memory = Memory("./memory-ws")
            memory.add("User likes ramen", scope="user_alice")
            middleware = MemoryMiddleware(memory, k=3, with_tools=True)

    Invoke:
        .. code-block:: python

            print(middleware.recall("What food do I like? Remember?", scope="user_alice"))

        .. code-block:: none

            <memory_context>
            Stored memories relevant to this turn, quoted as JSON strings. …
            - recalled, score 0.47, … (memory/scopes/user_alice/LONG_TERM.md#^m-… (line 4)): "User likes ramen"
            </memory_context>

    Async:
        .. code-block:: python

            block = await middleware.arecall("Remember my favourite food?", scope="user_alice")

    Use in a graph:
        .. code-block:: python

            from langchain.agents import create_agent
            from langchain_ollama import ChatOllama

            agent = create_agent(ChatOllama(model="qwen3"), middleware=[middleware])
            # agent.invoke({"messages": [("user", "What food do I like?")]},
            #              {"configurable": {"user_id": "alice"}})

    Args:
        memory: The memory to search.
        scope: Scope used when the run's config names neither a scope nor a user.
        k: Hits injected (default ``settings.injection.top_k``, 3).
        max_tokens_per_hit: Token cap of one hit (default
            ``settings.injection.max_tokens_per_hit``).
        gate: Use the adaptive gate; ``False`` searches on every user message.
        with_tools: Also give the agent the memory tools (:func:`create_memory_tools`).
        summary_model: Model of the summaries written when a call is compacted to
            fit the window; ``None`` uses the deterministic extractive summary.
        extract: After the run's final answer, extract what the turn changes in
            memory (:meth:`after_agent`); ``False`` turns it off.
        extract_model: The extraction model; ``None`` (default) uses the memory's
            (``Memory(extraction_model=...)``), else the deterministic extractor
            (explicit first-person statements, no model call).

    Context window. Every model call (system message with memory and summary,
    messages, tool schemas) is kept within ``short_term.context_window -
    short_term.reserved_output_tokens``: over it, the older turns are compacted with
    the checkpoint routine (tool calls stay with their results, the newest human
    turn stays verbatim; removed messages leave the agent state, their summary
    goes to ``memory_summary`` and is stored as an episode), and what still does
    not fit is clipped with a ``[truncated …]`` marker. Every tool result (the
    agent's tools too) is cut to the per-result and per-turn budgets.
    """

    state_schema = MemoryAgentState

    def __init__(
        self,
        memory: Memory,
        *,
        scope: str = MAIN_SCOPE,
        k: int | None = None,
        max_tokens_per_hit: int | None = None,
        gate: bool = True,
        with_tools: bool = False,
        summary_model: BaseChatModel | None = None,
        extract: bool = True,
        extract_model: BaseChatModel | None = None,
    ) -> None:
        super().__init__()
        self.extract = extract
        self.extract_model = extract_model
        self.summarizer = summarizer_within(summary_model, memory.settings.short_term)
        inj = memory.settings.injection
        self.memory = memory
        self.scope = check_scope(scope)
        self.k = k or inj.top_k
        self.max_tokens_per_hit = max_tokens_per_hit or inj.max_tokens_per_hit
        self.gate = gate
        self.tools = create_memory_tools(memory, scope=scope) if with_tools else []

    def recall(self, query: str, *, scope: str | None = None) -> str:
        """The memory block for ``query`` in ``scope`` (the run's scope by default):
        what a model call of a turn that says ``query`` is sent."""
        resolved = self._resolve_scope(scope)
        if resolved is None:
            return ""
        messages = [HumanMessage(query)]
        return self._context(messages, resolved, first_turn=False, background=False).block

    async def arecall(self, query: str, *, scope: str | None = None) -> str:
        """Async version of :meth:`recall`."""
        return await asyncio.to_thread(self.recall, query, scope=scope)

    def _resolve_scope(self, scope: str | None) -> str | None:
        try:
            return check_scope(scope) if scope else scope_from_config(_current_config(), self.scope)
        except LangmemError as e:
            logger.warning("memory recall skipped: %s", e)
            return None

    def _context(
        self,
        messages: Sequence[BaseMessage],
        scope: str,
        *,
        first_turn: bool,
        background: bool = True,
    ) -> RecallContext:
        """The one recall routine (the memory graph's too), with this middleware's options;
        the access marks of what it recalls go to the memory's background writer
        (``background``, an agent's turn) or are written before it returns."""
        return recall_context(
            self.memory,
            messages,
            scope=scope,
            first_turn=first_turn,
            tool_context=_last_turn_tool_context(messages),
            gate=self.gate,
            k=self.k,
            max_tokens_per_hit=self.max_tokens_per_hit,
            defer=functools.partial(self.memory.background.submit, scope) if background else None,
        )

    def _turn_update(self, state: Any) -> dict[str, Any] | None:
        """The turn's memory and safety blocks, once per user message (``None`` when
        they are already in the state, or there is no user message yet)."""
        messages = list(state.get("messages", []) if isinstance(state, dict) else [])
        key = _turn_key(messages)
        if key is None or state.get("memory_turn") == key:
            return None
        scope = self._resolve_scope(None)
        if scope is None:
            return None
        ctx = self._context(messages, scope, first_turn=not state.get("memory_first_turn_done"))
        return {
            "memory_context": ctx.block,
            "memory_safety": ctx.safety,
            "memory_turn": key,
            "memory_first_turn_done": True,
        }

    def before_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Recall for the run's user message: the memory block and the safety block of
        the turn, kept in the state for every model call of the turn."""
        return self._turn_update(state)

    async def abefore_agent(
        self, state: AgentState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Async version of :meth:`before_agent` (off the event loop)."""
        return await asyncio.to_thread(self._turn_update, state)

    # -- living memory ---------------------------------------------------------------

    def _extract_turn(self, state: Any) -> None:
        """Queue :meth:`Memory.extract <langmem_ext.Memory.extract>` of the run's turn
        (written to the ledger's turns waiting for extraction, then run on the memory's
        background writer), once the run ended on a final answer."""
        if not self.extract:
            return
        messages = list(state.get("messages", []) if isinstance(state, dict) else [])
        last = messages[-1] if messages else None
        if not isinstance(last, AIMessage) or last.tool_calls or not message_text(last).strip():
            return  # no final answer: the run was interrupted or ended on a tool call
        scope = self._resolve_scope(None)
        if scope is None:
            return
        memory = self.memory
        # in the ledger before the run returns: a turn a dead process never extracted
        # is extracted by another (see langmem_ext.memory.extraction.turns)
        queued = memory.turns.accept(
            messages, scope=scope, model=self.extract_model, at=time.time()
        )
        memory.background.submit(scope, queued, defer=BACKGROUND_DEFER)

    def after_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        """After the run's final answer: what the turn changes in memory, extracted on
        the memory's background writer (off the reply path; ``memory.close()`` drains
        it). With ``lifecycle.extract_mode="pending"`` (the default) each fact is
        noted at once in the day's notes, marked ``[unconfirmed]``, and its promotion
        to long-term memory waits for the user as a pending save."""
        self._extract_turn(state)
        return None

    async def aafter_agent(
        self, state: AgentState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Async version of :meth:`after_agent` (it only queues the work)."""
        self._extract_turn(state)
        return None

    # -- context window --------------------------------------------------------------

    def _blocks(self, request: ModelRequest[Any]) -> tuple[str, str]:
        """``(safety, memory block)`` of the call's turn: from the state, or made here
        when the agent ran no :meth:`before_agent` for this message."""
        state = request.state if isinstance(request.state, dict) else {}
        fresh = self._turn_update({**state, "messages": list(request.messages)})
        current = fresh if fresh is not None else state
        return str(current.get("memory_safety") or ""), str(current.get("memory_context") or "")

    def _fitter(self, request: ModelRequest[Any]) -> CallFitter:
        st = self.memory.settings.short_term
        tools = tool_schema_tokens(request.tools)
        return CallFitter(st, self.summarizer, tools, pack="roles")

    def _fit_input(
        self, request: ModelRequest[Any]
    ) -> tuple[ModelRequest[Any], list[BaseMessage], str | None, dict[str, str], bool]:
        """The request with the memory in its system message, and what the fitter gets:
        ``(request, system, summary, per-message summaries, whether new ones were made)``."""
        safety, block = self._blocks(request)
        request = _with_block(_with_block(request, safety), block)
        state = request.state if isinstance(request.state, dict) else {}
        summary = state.get("memory_summary")
        summary = summary if isinstance(summary, str) and summary.strip() else None
        kept = state.get("memory_message_summaries")
        stored: dict[str, str] = dict(kept) if isinstance(kept, dict) else {}
        st = self.memory.settings.short_term
        made = stored
        if is_window_mode(st):  # older messages condensed: keep their summaries in the state
            ids = {m.id for m in request.messages}
            made = {
                i: text
                for i, text in with_fallback_summaries(request.messages, stored, st).items()
                if i in ids
            }
        system: list[BaseMessage] = []
        if request.system_message is not None:
            system.append(request.system_message)
        return request, system, summary, made, made != stored

    def _finish(
        self,
        request: ModelRequest[Any],
        fitted: FittedCall,
        summaries: dict[str, str],
        new_summaries: bool,
    ) -> tuple[ModelRequest[Any], dict[str, Any] | None]:
        """The fitted request (leading system messages joined into its system message)
        and the state update: compacted messages removed, summaries kept."""
        call = list(fitted.messages)
        system: SystemMessage | None = None
        while call and isinstance(head := call[0], SystemMessage):
            call.pop(0)
            system = head if system is None else _join(system, head)
        update: dict[str, Any] | None = None
        cp = fitted.checkpoint
        if cp is not None:
            record_checkpoint(cp, _CallTarget(self.memory, self.scope))
            update = {"messages": cp.remove_messages(), "memory_summary": cp.summary}
        if new_summaries or cp is not None:
            update = {**(update or {}), "memory_message_summaries": summaries}
        return request.override(system_message=system, messages=call), update  # type: ignore[arg-type]

    @staticmethod
    def _respond(
        update: dict[str, Any] | None, response: ModelResponse[Any] | AIMessage
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        if update is None:
            return response
        if isinstance(response, AIMessage):
            response = ModelResponse(result=[response])
        return ExtendedModelResponse(model_response=response, command=Command(update=update))

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        """Put the turn's memory in the system message, fit the call to the window
        (the memory graph's fitter), call the model."""
        request, system, summary, summaries, new = self._fit_input(request)
        fitted = self._fitter(request).fit(system, list(request.messages), summary, summaries)
        request, update = self._finish(request, fitted, summaries, new)
        return self._respond(update, handler(request))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        """Async version of :meth:`wrap_model_call`."""
        request, system, summary, summaries, new = await asyncio.to_thread(self._fit_input, request)
        fitter = self._fitter(request)
        fitted = await fitter.afit(system, list(request.messages), summary, summaries)
        request, update = self._finish(request, fitted, summaries, new)
        return self._respond(update, await handler(request))

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """Run the tool, then cut its result to the per-result and per-turn budgets."""
        return budget_result(handler(request), request.state, self.memory.settings.short_term)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """Async version of :meth:`wrap_tool_call`."""
        return budget_result(await handler(request), request.state, self.memory.settings.short_term)


def _join(first: SystemMessage, second: SystemMessage) -> SystemMessage:
    """One system message of two (providers take a single one)."""
    if isinstance(first.content, str) and isinstance(second.content, str):
        return SystemMessage(f"{first.content}\n\n{second.content}")
    parts = [first.content] if isinstance(first.content, str) else list(first.content)
    more = [second.content] if isinstance(second.content, str) else list(second.content)
    blocks = [{"type": "text", "text": p} if isinstance(p, str) else p for p in [*parts, *more]]
    return SystemMessage(content=blocks)


__all__ = ["MemoryMiddleware"]
