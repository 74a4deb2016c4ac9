"""The nodes of the memory graph, each usable on its own in a user's graph.

Every node is built by a ``create_*_node`` factory that closes over the
:class:`~langmem_ext.Memory` (and model, where one is needed) and returns a plain
function ``node(state, config) -> partial update``. Scope, user and thread come
from ``config["configurable"]`` (see :func:`langmem_ext._scoping.scope_from_config`).
"""

from __future__ import annotations

import functools
import logging
import re
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
)
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.types import interrupt

from langmem_ext._scoping import scope_from_config
from langmem_ext.config import Settings
from langmem_ext.errors import LangmemError
from langmem_ext.graph.background import TurnWriter
from langmem_ext.graph.budget import CallFitter
from langmem_ext.graph.prompts import SYSTEM_PROMPT, render_memory_block
from langmem_ext.graph.state import MemoryState
from langmem_ext.memory import Memory
from langmem_ext.memory.events import SessionLog
from langmem_ext.memory.flush import flush_to_pending
from langmem_ext.memory.lifecycle import record_recall
from langmem_ext.memory.models import cite
from langmem_ext.memory.profile import PROFILE_TARGET, UNREADABLE_SAFETY, ProfileUpdate
from langmem_ext.memory.recall import recall_query, static_memory
from langmem_ext.memory.safety_links import SafetySection
from langmem_ext.memory.session import archive_messages, record_checkpoint, run_checkpoint
from langmem_ext.retrieval.gate import should_retrieve
from langmem_ext.retrieval.intent import detect_recall_intent
from langmem_ext.short_term.accounting import context_ratio, message_tokens
from langmem_ext.short_term.checkpoint import Checkpoint, plan_context, summary_message
from langmem_ext.short_term.content import message_text
from langmem_ext.short_term.summarizer import summarizer_within
from langmem_ext.short_term.tool_context import (
    condense_tool_results,
    first_lines,
    tool_results_of_turn,
)
from langmem_ext.text import index_tokens, query_tokens
from langmem_ext.tokens import count_tokens, truncate_by_tokens
from langmem_ext.tools import TOOL_NAMES

logger = logging.getLogger(__name__)

PENDING_CONFIRM = "pending_confirm"
PREFLIGHT_RECALL = "preflight_recall"
ANSWER = "answer"
TOOLS = "tools"
BOOST_USED = "boost_used"
PRE_COMPACTION_FLUSH = "pre_compaction_flush"
CHECKPOINT_SUMMARIZE = "checkpoint_summarize"


class Node(Protocol):
    """A node of the memory graph: ``node(state, config) -> partial update``."""

    def __call__(self, state: MemoryState, config: RunnableConfig) -> dict[str, Any]: ...


_PENDING_ID_RE = re.compile(r"\bp-[0-9a-f]{10}\b")
_CONFIRM_WORDS = ("确认", "確認", "好", "是的", "对", "可以", "行", "保存", "记住", "記住")
_REJECT_WORDS = ("不", "取消", "别", "別", "算了", "拒绝", "拒絕")
_CONFIRM_EN = {
    "yes",
    "y",
    "yep",
    "yeah",
    "sure",
    "ok",
    "okay",
    "confirm",
    "confirmed",
    "save",
    "correct",
}
_REJECT_EN = {"no", "n", "nope", "cancel", "reject", "don't", "dont", "discard", "never"}


def latest_human_text(messages: Sequence[BaseMessage]) -> str:
    """Text of the latest human message ("" when there is none)."""
    for m in reversed(messages):
        if isinstance(m, HumanMessage):
            return message_text(m).strip()
    return ""


def classify_reply(text: str) -> str | None:
    """Whether a short user reply confirms or rejects pending saves.

    Only short replies count (``"好，都确认"``, ``"no, cancel"``): a long message that
    happens to contain 不 or "no" is a new message, not a decision.

    Returns:
        ``"confirm"``, ``"reject"`` or ``None``.
    """
    t = text.strip().lower()
    if not t:
        return None
    cjk = sum(1 for ch in t if "\u4e00" <= ch <= "\u9fff")
    if (cjk and len(t) > 20) or (not cjk and len(t) > 40):
        return None
    words = set(re.findall(r"[a-z']+", t))
    if any(w in t for w in _REJECT_WORDS) or words & _REJECT_EN:
        return "reject"
    if any(w in t for w in _CONFIRM_WORDS) or words & _CONFIRM_EN:
        return "confirm"
    return None


def _scope(config: RunnableConfig | None, default: str) -> str:
    return scope_from_config(config, default)


def _thread(config: RunnableConfig | None) -> str:
    return str(((config or {}).get("configurable") or {}).get("thread_id") or "default")


def resolve_pending(
    memory: Memory, scope: str, decision: str, wanted: Sequence[str] | None
) -> list[str]:
    """Confirm or reject pending saves of a scope; returns notes for the model."""
    pending = {p.id: p for p in memory.list_pending(scope=scope)}
    ids = [i for i in (wanted or list(pending)) if i in pending]
    notes: list[str] = []
    for pid in ids:
        try:
            if decision == "confirm":
                e = memory.confirm(pid, scope=scope)
                where = "profile" if isinstance(e, ProfileUpdate) else cite(e)
                notes.append(f"confirmed and stored ({where}): {e.text}")
            else:
                memory.reject(pid, scope=scope)
                notes.append(f"rejected, not stored: {pending[pid].text}")
        except LangmemError as err:
            notes.append(f"{pid}: {err}")
    for pid in wanted or ():
        if pid not in pending:
            notes.append(f"{pid}: no such pending save (expired or already resolved)")
    if decision == "confirm" and ids:  # a confirmed safety fact proposes a profile change
        for p in memory.list_pending(scope=scope):
            if p.id not in pending and p.target == PROFILE_TARGET:
                notes.append(
                    f"proposed for the profile, ask the user to confirm ({p.id}): {p.text}"
                )
    return notes


def create_pending_confirm_node(memory: Memory, *, default_scope: str = "main") -> Node:
    """Node that confirms / rejects pending saves when the user's reply says so.

    "确认 / 好 / yes / confirm" confirms, "不 / 取消 / no / cancel" rejects; pending
    ids named in the reply (``p-…``) limit the decision to them, otherwise it
    applies to every pending save of the scope. Expired saves drop out (TTL).
    """

    def pending_confirm(state: MemoryState, config: RunnableConfig) -> dict[str, Any]:
        scope = _scope(config, default_scope)
        text = latest_human_text(state.get("messages", []))
        pending_now = [p.id for p in memory.list_pending(scope=scope)]
        decision = classify_reply(text) if pending_now else None
        if decision is None:
            return {"pending_ids": pending_now, "notes": []}
        wanted = _PENDING_ID_RE.findall(text) or None
        notes = resolve_pending(memory, scope, decision, wanted)
        return {"pending_ids": [p.id for p in memory.list_pending(scope=scope)], "notes": notes}

    return pending_confirm


def create_pending_router(
    memory: Memory,
    *,
    default_scope: str = "main",
    pending: str = PENDING_CONFIRM,
    otherwise: str = PREFLIGHT_RECALL,
) -> Callable[[MemoryState, RunnableConfig], str]:
    """Routing function that sends a turn to ``pending_confirm`` only when it has work.

    With no pending save in the scope and none left in the state (``pending_ids``,
    ``notes``), ``pending_confirm`` would only write ``pending_ids=[]`` and
    ``notes=[]`` back: the turn skips it and saves a graph step (and its checkpoint).

    Args:
        memory: The memory service.
        default_scope: Scope when the run's config names none.
        pending: Where turns with pending saves go.
        otherwise: Where the other turns go.

    Returns:
        ``route(state, config) -> node name``, for ``add_conditional_edges``.
    """

    def route_pending(state: MemoryState, config: RunnableConfig) -> str:
        if state.get("pending_ids") or state.get("notes"):
            return pending
        return pending if memory.list_pending(scope=_scope(config, default_scope)) else otherwise

    return route_pending


def create_pending_interrupt_node(memory: Memory, *, default_scope: str = "main") -> Node:
    """Human-in-the-loop variant: pause with ``interrupt()`` while saves are pending.

    Resume with ``Command(resume="yes")`` / ``"no"`` or
    ``Command(resume={"confirm": [ids], "reject": [ids]})``.
    """

    def pending_confirm(state: MemoryState, config: RunnableConfig) -> dict[str, Any]:
        scope = _scope(config, default_scope)
        pending = memory.list_pending(scope=scope)
        if not pending:
            return {"pending_ids": []}
        answer = interrupt(
            {
                "question": "Save these memories?",
                "pending": [
                    {"id": p.id, "text": p.text, "category": p.category, "supersedes": p.supersedes}
                    for p in pending
                ],
            }
        )
        notes: list[str] = []
        if isinstance(answer, dict):
            notes += resolve_pending(memory, scope, "confirm", list(answer.get("confirm", [])))
            notes += resolve_pending(memory, scope, "reject", list(answer.get("reject", [])))
        else:
            decision = classify_reply(str(answer))
            if decision:
                wanted = _PENDING_ID_RE.findall(str(answer)) or None
                notes = resolve_pending(memory, scope, decision, wanted)
        return {"pending_ids": [p.id for p in memory.list_pending(scope=scope)], "notes": notes}

    return pending_confirm


def create_preflight_recall_node(
    memory: Memory,
    *,
    settings: Settings | None = None,
    default_scope: str = "main",
    writer: TurnWriter | None = None,
) -> Node:
    """Node that recalls memory before the answer and builds the memory block.

    The adaptive gate decides whether to search; a recall intent (上次 / 昨天 /
    last week ...) forces it. Core memories always join; on a session's first turn
    today's and yesterday's daily notes join too. Each item is cut to
    ``injection.max_tokens_per_hit`` tokens and quoted as data.

    Args:
        memory: The memory service.
        settings: Settings to use instead of ``memory.settings``.
        default_scope: Scope when the run's config names none.
        writer: The background writer of earlier turns' hot-log events and boosts:
            the node waits for the scope's pending writes before it searches.
    """
    s = settings or memory.settings
    inj = s.injection

    def preflight_recall(state: MemoryState, config: RunnableConfig) -> dict[str, Any]:
        scope = _scope(config, default_scope)
        if writer is not None:
            writer.wait(scope)
        query = recall_query(state.get("messages", []), s)
        now = datetime.now().astimezone()
        recalled: list[dict[str, Any]] = []
        static = ""
        safety = _safety_recall(memory, query, scope, inj.max_tokens_per_hit)  # gate or not
        if query:
            gate = should_retrieve(query, s.gate)
            intent = detect_recall_intent(query, now)
            if gate.retrieve or intent is not None:
                try:
                    hits = memory.search(query, scope=scope, k=inj.top_k, intent=intent)
                except (LangmemError, sqlite3.Error) as err:
                    hits, static = [], static_memory(memory, scope, inj.static_memory_chars, err)
                recalled = [
                    {
                        "id": h.id,
                        "text": truncate_by_tokens(h.text, inj.max_tokens_per_hit),
                        "score": h.score,
                        "citation": cite(h),
                        "anchor": h.anchor,
                        "created_at": h.created_at.isoformat(),
                        "source": h.source,
                    }
                    for h in hits
                ]
                _record_recall(memory, scope, [h.id for h in hits if h.source == "memory"], writer)
        core: list[dict[str, Any]] = []
        if inj.always_core:
            seen = {h["id"] for h in recalled}
            for e in memory.list(scope=scope, category="core"):
                if e.id not in seen:
                    core.append(
                        {
                            "id": e.id,
                            "text": truncate_by_tokens(e.text, inj.max_tokens_per_hit),
                            "citation": cite(e),
                            "anchor": e.anchor,
                        }
                    )
        daily: list[tuple[str, str]] = []
        update: dict[str, Any] = {}
        if not state.get("first_turn_done"):
            budget = inj.first_turn_daily_chars
            for day in (now.date(), now.date() - timedelta(days=1)):
                text = memory.daily_notes(day, scope=scope).strip()
                if text and budget > 0:
                    daily.append((day.isoformat(), text[:budget]))
                    budget -= len(text[:budget])
            update["first_turn_done"] = True
        carried = writer.take(scope, _thread(config)) if writer is not None else None
        block = render_memory_block(
            safety=safety,
            core=core,
            recalled=recalled,
            daily=daily,
            notes=state.get("notes", []) or [],
            tool_context=carried or state.get("tool_context"),
            static=static,
        )
        update.update({"memory_context": block, "recalled": recalled, "tool_context": None})
        update["profile_context"] = _safety_block(memory, scope, inj.profile_tokens)
        return update

    return preflight_recall


def _safety_recall(
    memory: Memory, query: str, scope: str, max_tokens_per_hit: int
) -> list[SafetySection]:
    """The safety fields a question asks about and the memories stating them, each cut
    to ``max_tokens_per_hit`` ([] when it asks about none; an error is logged and the
    turn goes on with the profile's safety block, which every call carries)."""
    if not query:
        return []
    try:
        sections = memory.safety_recall(query, scope=scope)
    except (LangmemError, sqlite3.Error) as err:
        logger.error("the memories stating the asked safety fields could not be read: %s", err)
        return []
    for sec in sections:
        sec.memories = [
            m.model_copy(update={"text": truncate_by_tokens(m.text, max_tokens_per_hit)})
            for m in sec.memories
        ]
    return sections


def _safety_block(memory: Memory, scope: str, max_tokens: int) -> str:
    """The profile's safety block, every turn whatever the gate says ("" when empty)."""
    try:
        return memory.safety_block(scope=scope, max_tokens=max_tokens)
    except LangmemError as err:  # e.g. the lock timed out: say so rather than drop it silently
        logger.error("the profile's safety fields could not be read: %s", err)
        return UNREADABLE_SAFETY


def _system_prompt(state: MemoryState) -> SystemMessage:
    """The system prompt with the profile's safety block: the first system message, so
    compaction never removes it and clipping never cuts it."""
    safety = state.get("profile_context")
    return SystemMessage(f"{SYSTEM_PROMPT}\n\n{safety}" if safety else SYSTEM_PROMPT)


def _record_recall(
    memory: Memory, scope: str, ids: Sequence[str], writer: TurnWriter | None
) -> None:
    """Mark the recalled memories accessed (their ``last_access``), off the reply path
    when the graph has a background writer."""
    if not ids:
        return
    at = time.time()

    def record() -> None:
        record_recall(memory, ids, scope=scope, at=at)

    if writer is None:
        record()
    else:
        writer.submit(scope, record)


def _system_messages(state: MemoryState) -> list[BaseMessage]:
    out: list[BaseMessage] = [_system_prompt(state)]
    if state.get("summary"):
        out.append(summary_message(str(state["summary"])))
    if state.get("memory_context"):
        out.append(SystemMessage(str(state["memory_context"])))
    return out


def _base_system(state: MemoryState) -> list[BaseMessage]:
    """System prompt and memory block (the summary is placed by the fitter)."""
    out: list[BaseMessage] = [_system_prompt(state)]
    if state.get("memory_context"):
        out.append(SystemMessage(str(state["memory_context"])))
    return out


CheckpointRecorder = Callable[[Checkpoint, MemoryState, RunnableConfig], dict[str, Any]]
"""Stores a checkpoint (episode, session log) and returns the state update."""


def create_answer_node(
    model: BaseChatModel,
    tools: Sequence[BaseTool],
    *,
    after: Node | None = None,
    fitter: CallFitter | None = None,
    record: CheckpointRecorder | None = None,
) -> Node:
    """Node that calls the chat model, bound to the memory tools.

    Args:
        model: The chat model.
        tools: Tools to bind (the memory tools and any others).
        after: A node run in the same graph step once the reply asks for no tool
            call (the memory graph passes its boost node, saving a step per turn);
            it sees the state with the reply appended, and its update is merged
            into this node's.
        fitter: Makes each call fit the context window (the memory graph passes
            one): compaction inside the turn, then clipping. ``None`` sends the
            state as it is.
        record: Stores a compaction made by ``fitter`` (as an episode, like the
            checkpoint node) and returns its state update; ``None`` only removes
            the summarised messages and keeps the summary in the state.
    """
    bound = model.bind_tools(list(tools)) if tools else model

    def answer(state: MemoryState, config: RunnableConfig) -> dict[str, Any]:
        messages = state.get("messages", [])
        history = [m for m in messages if not isinstance(m, SystemMessage)]
        update: dict[str, Any] = {}
        if fitter is None:
            call = [*_system_messages(state), *history]
        else:
            summaries = state.get("message_summaries")
            fitted = fitter.fit(_base_system(state), history, state.get("summary"), summaries)
            call = fitted.messages
            if fitted.checkpoint is not None:
                cp = fitted.checkpoint
                update = (
                    record(cp, state, config)
                    if record is not None
                    else {"messages": cp.remove_messages(), "summary": cp.summary}
                )
                removed = set(cp.removed_ids)
                messages = [m for m in messages if m.id not in removed]
        response = bound.invoke(call, config)
        update["messages"] = [*update.get("messages", []), response]
        if after is not None and not (isinstance(response, AIMessage) and response.tool_calls):
            after_state = {**state, **update, "messages": [*messages, response]}
            update = {**after(after_state, config), **update}  # type: ignore[arg-type]
        return update

    return answer


def used_in_answer(memory_text: str, answer: str, *, threshold: float = 0.5) -> bool:
    """Deterministic test that a recalled memory shaped an answer (token overlap)."""
    mem = set(query_tokens(memory_text))
    if len(mem) < 2:
        return False
    ans = set(index_tokens(answer))
    shared = mem & ans
    return len(shared) >= 2 and len(shared) / len(mem) >= threshold


BACKGROUND_DEFER = 0.02
"""Seconds the extraction and tool-context jobs wait after the reply they follow
(started at once when the next turn's recall waits for them)."""
_MEMORY_TOOLS = frozenset(TOOL_NAMES)
"""Tools whose results are memory already (not carried as tool-result context)."""


def create_boost_node(
    memory: Memory,
    *,
    default_scope: str = "main",
    on_turn: Callable[[str, str, str, str], None] | None = None,
    writer: TurnWriter | None = None,
    extract: bool = False,
    extract_model: BaseChatModel | None = None,
) -> Node:
    """Node that BOOSTs recalled memories the answer actually used.

    Which memories were used is decided in the node (a deterministic overlap test,
    :func:`used_in_answer`); ``Memory.boost`` applies the cooldown and the daily cap.
    Also refreshes ``pending_ids`` (saves proposed this turn) and the token count,
    and calls ``on_turn(scope, thread_id, user_text, answer_text)`` (the session
    hot log) when given.

    Args:
        memory: The memory service.
        default_scope: Scope when the run's config names none.
        on_turn: Called after each answer, in the node (the graph logs the turn with it).
        writer: When given, the boosts run on this background writer after the node
            returns (in order; the next ``preflight_recall`` of the scope waits for
            them) instead of in the node.
        extract: Run :meth:`Memory.extract <langmem_ext.Memory.extract>` on the turn
            (with the memories recalled for it), after the boosts, on ``writer``.
        extract_model: The extraction model (``None``: the deterministic fallback);
            it also condenses the turn's tool results for the next turn (else their
            first lines are kept, :mod:`~langmem_ext.short_term.tool_context`).
    """

    def boost_used(state: MemoryState, config: RunnableConfig) -> dict[str, Any]:
        scope = _scope(config, default_scope)
        messages = state.get("messages", [])
        last = messages[-1] if messages else None
        answer = message_text(last) if isinstance(last, AIMessage) else ""
        used = [
            str(hit["id"])
            for hit in state.get("recalled", []) or []
            if hit.get("source", "memory") == "memory" and used_in_answer(hit["text"], answer)
        ]

        at = time.time()

        def boost() -> None:
            for entry_id in used:
                try:
                    memory.boost(entry_id, scope=scope, reason="used in answer", now=at)
                except LangmemError as e:  # deleted meanwhile: nothing to boost
                    logger.debug("boost skipped: %s", e)

        shown = [
            (str(hit["id"]), str(hit["text"]))
            for hit in state.get("recalled", []) or []
            if hit.get("source", "memory") == "memory"
        ]

        def extract_turn() -> None:  # Memory.extract reads the last turn of ``messages``
            report = memory.extract(
                messages, scope=scope, model=extract_model, recalled=shown, at=at
            )
            logger.debug("turn extraction: %s", report)

        update: dict[str, Any] = {
            "pending_ids": [p.id for p in memory.list_pending(scope=scope)],
            "token_count": history_tokens(messages),
            "notes": [],
        }
        # Reads first: the writes below may go to a background thread at once.
        results = tool_results_of_turn(messages, skip=_MEMORY_TOOLS) if answer else []
        thread = _thread(config)
        update["tool_context"] = None
        if results and (writer is None or extract_model is None):
            update["tool_context"] = condense_tool_results(results, extract_model)
        elif results:
            update["tool_context"] = first_lines(results)  # until the condensed one is ready

        def carry_context() -> None:
            assert writer is not None
            writer.carry(scope, thread, condense_tool_results(results, extract_model))

        due_context = bool(results) and writer is not None and extract_model is not None
        jobs = (
            (boost, bool(used), 0.0),
            (extract_turn, extract and bool(answer), BACKGROUND_DEFER),
            (carry_context, due_context, BACKGROUND_DEFER),
        )
        for job, due, defer in jobs:
            if not due:
                continue
            if writer is None:
                job()
            else:
                writer.submit(scope, job, defer=defer)
        if on_turn is not None and answer:
            on_turn(scope, thread, latest_human_text(messages), answer)
        return update

    return boost_used


def create_flush_node(
    memory: Memory, model: BaseChatModel | None, *, default_scope: str = "main"
) -> Node:
    """Node for the silent pre-compaction flush: durable facts go to pending first.

    The model gets one silent turn with only ``memory_save`` and must answer
    ``NO_REPLY``; neither its calls nor its reply enter the history. Without a model,
    or when it fails, facts are extracted deterministically. Returns only after
    the saves are committed, so the checkpoint that follows never races it.
    """

    def pre_compaction_flush(state: MemoryState, config: RunnableConfig) -> dict[str, Any]:
        scope = _scope(config, default_scope)
        result = flush_to_pending(memory, scope, state.get("messages", []), model)
        return {"flushed": result.pending_ids}

    return pre_compaction_flush


def create_checkpoint_node(
    memory: Memory,
    model: BaseChatModel | None,
    *,
    settings: Settings | None = None,
    default_scope: str = "main",
    session_log: SessionLog | None = None,
    writer: TurnWriter | None = None,
    system_tokens: int = 0,
) -> Node:
    """Node that checkpoints: summary + last turns; old messages removed.

    The summary is stored as an ``episode`` memory dated to the conversation, and
    logged to the session hot log when one is given (through ``writer`` when given,
    so it follows the turns queued there). ``system_tokens`` are sent with every
    call besides the history and the memory block (system prompt, tool schemas):
    the kept turns are chosen to fit next to them. The session engine's routine
    (:func:`~langmem_ext.memory.session.run_checkpoint`) does the work.
    """
    s = settings or memory.settings
    summarizer = summarizer_within(model, s.short_term)
    target = _state_target(memory, s, default_scope, session_log, writer)

    def checkpoint_summarize(state: MemoryState, config: RunnableConfig) -> dict[str, Any]:
        messages = state.get("messages", [])
        fixed = system_tokens + _injected_tokens(state)
        done = run_checkpoint(
            messages,
            state.get("summary"),
            summarizer,
            s.short_term,
            target(config, messages),
            system_tokens=fixed,
        )
        return {} if done is None else _checkpoint_update(done.checkpoint, state)

    return checkpoint_summarize


def create_checkpoint_recorder(
    memory: Memory,
    *,
    settings: Settings | None = None,
    default_scope: str = "main",
    session_log: SessionLog | None = None,
    writer: TurnWriter | None = None,
) -> CheckpointRecorder:
    """What the checkpoint node does with a checkpoint, for every compaction.

    The summary is stored as an ``episode`` memory and logged to the session hot
    log (through ``writer`` when given); the update removes the summarised messages
    and sets the summary, the checkpoint count, the mode and the token count.
    Used by the answer node's compaction inside a turn
    (:func:`~langmem_ext.memory.session.record_checkpoint`, as the checkpoint node
    between turns), so both keep what they remove.
    """
    target = _state_target(memory, settings or memory.settings, default_scope, session_log, writer)

    def record(cp: Checkpoint, state: MemoryState, config: RunnableConfig) -> dict[str, Any]:
        done = record_checkpoint(cp, target(config, state.get("messages", [])))
        return {} if done is None else _checkpoint_update(cp, state)

    return record


@dataclass(frozen=True)
class _StateTarget:
    """The graph's :class:`~langmem_ext.memory.session.CheckpointTarget`: the
    summarised messages leave the state (the update does it)."""

    memory: Memory
    max_text_chars: int
    scope: str
    thread_id: str
    session_log: SessionLog | None
    writer: TurnWriter | None
    messages: Sequence[BaseMessage] = ()

    def commit(self, cp: Checkpoint) -> float | None:
        """Archive the summarised messages (the session engine's full history); the
        state update removes them (those with an id)."""
        if not cp.removed_ids:
            return None
        ids = set(cp.removed_ids)
        removed = [m for m in self.messages if m.id in ids]
        archive_messages(self.memory, self.scope, self.thread_id, removed, time.time())
        return time.time()

    def store_episode(self, summary: str, at: float) -> str:
        """A new ``episode`` memory of the summary."""
        return self.memory.add(
            summary[: self.max_text_chars],
            scope=self.scope,
            category="episode",
            target="daily",
            source="checkpoint",
            created_at=at,
        )

    def log_summary(self, summary: str, at: float) -> None:
        """Log it (through the background writer when there is one)."""
        log, scope, thread = self.session_log, self.scope, self.thread_id
        if log is None:
            return
        if self.writer is None:
            log.append(scope, thread, "summary", summary, at=at)
        else:
            self.writer.submit(scope, lambda: log.append(scope, thread, "summary", summary, at=at))


def _state_target(
    memory: Memory,
    settings: Settings,
    default_scope: str,
    session_log: SessionLog | None,
    writer: TurnWriter | None,
) -> Callable[[RunnableConfig, Sequence[BaseMessage]], _StateTarget]:
    """The checkpoint target of a run, from its config (scope and thread)."""

    def target(config: RunnableConfig, messages: Sequence[BaseMessage]) -> _StateTarget:
        return _StateTarget(
            memory,
            settings.max_text_chars,
            _scope(config, default_scope),
            _thread(config),
            session_log,
            writer,
            messages,
        )

    return target


def _checkpoint_update(cp: Checkpoint, state: MemoryState) -> dict[str, Any]:
    """The state update of a recorded checkpoint."""
    return {
        "messages": cp.remove_messages(),
        "summary": cp.summary,
        "checkpoints": int(state.get("checkpoints", 0) or 0) + 1,
        "mode": "SUMMARY_N",
        "token_count": cp.estimated_tokens,
    }


_TOKEN_CACHE_MAX = 4096
_token_cache: dict[tuple[Any, ...], int] = {}


def _message_key(m: BaseMessage) -> tuple[Any, ...] | None:
    if m.id is None:
        return None
    calls = repr(m.tool_calls) if isinstance(m, AIMessage) and m.tool_calls else ""
    content = m.content if isinstance(m.content, str) else repr(m.content)
    return (m.id, m.type, m.name, content, calls, getattr(m, "tool_call_id", None))


def history_tokens(messages: Sequence[BaseMessage]) -> int:
    """:func:`~langmem_ext.short_term.accounting.count_message_tokens`, memoised per message.

    A thread's history is counted every turn; each message is tokenised once (keyed
    by id and content, so an edited message is counted again).
    """
    total = 0
    for m in messages:
        key = _message_key(m)
        n = _token_cache.get(key) if key is not None else None
        if n is None:
            n = message_tokens(m)
            if key is not None:
                if len(_token_cache) >= _TOKEN_CACHE_MAX:
                    _token_cache.clear()
                _token_cache[key] = n
        total += n
    return total


@functools.lru_cache(maxsize=64)
def _text_tokens(text: str) -> int:
    return count_tokens(text)


def _injected_tokens(state: MemoryState) -> int:
    """Tokens of what preflight put in front of the history (memory and safety blocks)."""
    return _text_tokens(str(state.get("memory_context", ""))) + _text_tokens(
        str(state.get("profile_context", ""))
    )


def needs_checkpoint(state: MemoryState, settings: Settings, system_tokens: int = 0) -> bool:
    """Fresh token count of the state (never a stale one) against the threshold.

    The count is memoised per message (:func:`history_tokens`); only a history over
    the threshold is planned in full (:func:`~langmem_ext.short_term.checkpoint.plan_context`,
    which also checks that a checkpoint can remove something).
    """
    st = settings.short_term
    history = [m for m in state.get("messages", []) if not isinstance(m, SystemMessage)]
    summary = state.get("summary")
    system = system_tokens + _injected_tokens(state)
    estimated = system + history_tokens(history)
    if summary and summary.strip():
        estimated += message_tokens(summary_message(summary))
    if context_ratio(estimated, st.context_window) <= st.checkpoint_ratio:
        return False  # not over the threshold: the plan would say the same
    plan = plan_context(history, running_summary=summary, settings=st, system_tokens=system)
    return plan.should_checkpoint


__all__ = [
    "ANSWER",
    "BOOST_USED",
    "CHECKPOINT_SUMMARIZE",
    "PENDING_CONFIRM",
    "PREFLIGHT_RECALL",
    "PRE_COMPACTION_FLUSH",
    "TOOLS",
    "classify_reply",
    "create_answer_node",
    "create_boost_node",
    "create_checkpoint_node",
    "create_checkpoint_recorder",
    "create_flush_node",
    "create_pending_confirm_node",
    "create_pending_interrupt_node",
    "create_pending_router",
    "create_preflight_recall_node",
    "history_tokens",
    "latest_human_text",
    "needs_checkpoint",
    "resolve_pending",
    "used_in_answer",
]
