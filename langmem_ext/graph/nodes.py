"""The nodes of the memory graph, each usable on its own in a user's graph.

Every node is built by a ``create_*_node`` factory that closes over the
:class:`~langmem_ext.Memory` (and model, where one is needed) and returns a plain
function ``node(state, config) -> partial update``. Scope, user and thread come
from ``config["configurable"]`` (see :func:`langmem_ext.memory.scoping.scope_from_config`).
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
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

from langmem_ext.core.config import Settings
from langmem_ext.core.errors import LangmemError
from langmem_ext.core.tokens import count_tokens
from langmem_ext.graph.bookkeeping import TurnWriter
from langmem_ext.graph.fitting import CallFitter
from langmem_ext.graph.prompts import SYSTEM_PROMPT
from langmem_ext.graph.proposals import (
    asking_reply,
    kept_proposals,
    next_proposal,
    open_proposals,
    resolve_pending,
    seen_in_turn,
    thread_pending,
)
from langmem_ext.graph.replies import classify_reply
from langmem_ext.graph.state import MemoryState
from langmem_ext.language.text import index_tokens, query_tokens
from langmem_ext.memory import Memory
from langmem_ext.memory.recall.context import recall_context
from langmem_ext.memory.scoping import scope_from_config, thread_from_config
from langmem_ext.memory.sessions.flush import flush_to_pending
from langmem_ext.memory.sessions.log import SessionLog
from langmem_ext.memory.sessions.manager import archive_messages, record_checkpoint, run_checkpoint
from langmem_ext.memory.types import PendingItem
from langmem_ext.short_term.accounting import context_ratio, message_tokens
from langmem_ext.short_term.checkpoint import Checkpoint, plan_context, summary_message
from langmem_ext.short_term.content import message_text
from langmem_ext.short_term.summarizer import summarizer_within
from langmem_ext.short_term.tool_context import (
    condense_tool_results,
    first_lines,
    tool_results_of_turn,
)
from langmem_ext.tools import TOOL_NAMES

logger = logging.getLogger(__name__)

PENDING_CONFIRM = "pending_confirm"
PREFLIGHT_RECALL = "preflight_recall"
ANSWER = "answer"
TOOLS = "tools"
PROPOSE_SAVES = "propose_saves"
RECORD_TURN = "record_turn"
PRE_COMPACTION_FLUSH = "pre_compaction_flush"
CHECKPOINT_SUMMARIZE = "checkpoint_summarize"


class Node(Protocol):
    """A node of the memory graph: ``node(state, config) -> partial update``."""

    def __call__(self, state: MemoryState, config: RunnableConfig) -> dict[str, Any]: ...


def latest_human_text(messages: Sequence[BaseMessage]) -> str:
    """Text of the latest human message ("" when there is none)."""
    for m in reversed(messages):
        if isinstance(m, HumanMessage):
            return message_text(m).strip()
    return ""


def _scope(config: RunnableConfig | None, default: str) -> str:
    return scope_from_config(config, default)


def _thread(config: RunnableConfig | None) -> str:
    return str(((config or {}).get("configurable") or {}).get("thread_id") or "default")


def _answerable(
    memory: Memory, scope: str, thread: str | None, state: MemoryState
) -> tuple[list[PendingItem], list[str]]:
    """The saves the previous answer proposed that are still open, and the thread's
    pending ids: as the state keeps them (no ledger read), or, for a thread whose
    state keeps no items for them, as the ledger gives them."""
    if thread is None:
        return [], []
    proposed = state.get("proposed") or []
    kept = kept_proposals(state.get("proposals") or [], proposed)
    if kept is not None:
        return kept, list(state.get("pending_ids") or [])
    pending = thread_pending(memory, scope, thread)
    return open_proposals(memory, scope, thread, proposed, pending), [p.id for p in pending]


def create_pending_confirm_node(
    memory: Memory,
    *,
    default_scope: str = "main",
    model: BaseChatModel | None = None,
    writer: TurnWriter | None = None,
) -> Node:
    """Node that confirms / rejects the saves the assistant's last reply proposed,
    when the user's message answers the proposal.

    Only the pending saves this thread's previous answer asked about (``proposed``
    in the state) can be resolved, and only by a reply that answers them: all of
    them ("好的，记住吧", "no thanks"), some by number or by words ("第二个",
    "save the ramen one"), or some yes and some no ("第一个保存，第二个不要"), read by
    :func:`~langmem_ext.graph.replies.classify_reply`. Anything else (a greeting, a
    question, a new topic) leaves them pending and the conversation goes on; saves
    proposed in other threads, or outside any conversation, are never touched.

    The proposed saves are those the state keeps (``proposals``, as the asking turn
    read them): the ledger is not read here, except after confirming a memory that
    states a safety fact (it may propose a profile change, which the answer is told
    of). ``pending_ids`` is left without the saves resolved.

    Args:
        memory: The memory service.
        default_scope: Scope when the run's config names none.
        model: A chat model reading the reply with one structured-output call;
            ``None``: the deterministic rules (also when the call fails).
        writer: The background writer of earlier turns (their extraction proposes
            saves): the node waits for the scope's pending writes before it
            resolves, as ``preflight_recall`` does.
    """

    def pending_confirm(state: MemoryState, config: RunnableConfig) -> dict[str, Any]:
        scope = _scope(config, default_scope)
        thread = thread_from_config(config)
        if writer is not None:
            writer.wait(scope)
        items, pending_ids = _answerable(memory, scope, thread, state)
        if not items:
            return {"proposed": [], "proposals": [], "notes": [], "pending_ids": pending_ids}
        text = latest_human_text(state.get("messages", []))
        decision = classify_reply(text, items, model=model)
        done = resolve_pending(
            memory, scope, thread, items, decision.confirm, decision.reject, pending_ids=pending_ids
        )
        return {
            "proposed": [],
            "proposals": [],
            "notes": done.notes,
            "pending_ids": done.pending_ids,
        }

    return pending_confirm


def create_pending_router(
    memory: Memory | None = None,
    *,
    default_scope: str = "main",
    pending: str = PENDING_CONFIRM,
    otherwise: str = PREFLIGHT_RECALL,
) -> Callable[[MemoryState, RunnableConfig], str]:
    """Routing function that sends a turn to ``pending_confirm`` only when it has work.

    That is when the previous answer proposed saves of this thread that are still
    pending (or notes of a resolution are left to clear); other turns skip the step,
    without reading the ledger when nothing was proposed.

    Args:
        memory: The memory service: a proposal resolved elsewhere since (another
            surface confirmed it) skips the step too, at the cost of a ledger read.
            ``None``: the state alone decides (the memory graph's router: its
            ``pending_confirm`` reads the ledger once and finds nothing to do).
        default_scope: Scope when the run's config names none.
        pending: Where turns with an open proposal go.
        otherwise: Where the other turns go.

    Returns:
        ``route(state, config) -> node name``, for ``add_conditional_edges``.
    """

    def route_pending(state: MemoryState, config: RunnableConfig) -> str:
        if state.get("notes"):
            return pending
        proposed = state.get("proposed") or []
        if not proposed:
            return otherwise
        if memory is None:
            return pending
        scope = _scope(config, default_scope)
        live = open_proposals(memory, scope, thread_from_config(config), proposed)
        return pending if live else otherwise

    return route_pending


def create_pending_interrupt_node(
    memory: Memory, *, default_scope: str = "main", model: BaseChatModel | None = None
) -> Node:
    """Human-in-the-loop variant: pause with ``interrupt()`` on the saves this
    thread's answer just proposed (``proposed`` in the state).

    The interrupt's value lists them (``pending``: id, number, text, category,
    supersedes). Resume with ``Command(resume={"confirm": [ids], "reject": [ids]})``
    (ids not in the list are ignored, with a note) or with the user's words,
    ``Command(resume="第一个保存，第二个不要")``, read like a reply
    (:func:`~langmem_ext.graph.replies.classify_reply`).

    Args:
        memory: The memory service.
        default_scope: Scope when the run's config names none.
        model: A chat model reading a text resume (``None``: the rules).
    """

    def pending_confirm(state: MemoryState, config: RunnableConfig) -> dict[str, Any]:
        scope = _scope(config, default_scope)
        thread = thread_from_config(config)
        items, pending_ids = _answerable(memory, scope, thread, state)
        if not items:
            return {"proposed": [], "proposals": [], "pending_ids": pending_ids}
        answer = interrupt(
            {
                "question": "Save these memories?",
                "pending": [
                    {
                        "id": p.id,
                        "number": n,
                        "text": p.text,
                        "category": p.category,
                        "supersedes": p.supersedes,
                    }
                    for n, p in enumerate(items, 1)
                ],
            }
        )
        notes: list[str] = []
        if isinstance(answer, dict):
            shown = {p.id for p in items}
            yes = [str(i) for i in answer.get("confirm", []) or []]
            no = [str(i) for i in answer.get("reject", []) or []]
            both = set(yes) & set(no)
            notes += [
                f"{i}: not proposed here; nothing done" for i in [*yes, *no] if i not in shown
            ]
            notes += [f"{i}: both confirmed and rejected; nothing done" for i in sorted(both)]
            yes = [i for i in yes if i in shown and i not in both]
            no = [i for i in no if i in shown and i not in both]
        else:
            decision = classify_reply(str(answer), items, model=model)
            yes, no = list(decision.confirm), list(decision.reject)
        done = resolve_pending(memory, scope, thread, items, yes, no, pending_ids=pending_ids)
        return {
            "proposed": [],
            "proposals": [],
            "notes": done.notes + notes,
            "pending_ids": done.pending_ids,
        }

    return pending_confirm


def create_propose_node(memory: Memory, *, default_scope: str = "main", ask: bool = True) -> Node:
    """Node run after the turn's final answer: which pending saves of this thread
    the reply asks about.

    The saves proposed in this thread (by the model's tools this turn, by the
    background extractor or the flush since) are asked about: the reply's ``proposed``
    are the new ones and, once more, those an earlier question left unanswered (see
    :mod:`~langmem_ext.graph.proposals`). With ``ask`` the reply is made to ask:
    when it does not (or several are numbered), a short question is added to it
    (the reply replaced in the state, same id). The thread's pending saves are read
    from the ledger once, ``pending_ids`` set to them and the proposed ones kept in
    ``proposals`` (what the next turn's reply answers, without reading them again).

    Args:
        memory: The memory service.
        default_scope: Scope when the run's config names none.
        ask: Add the question to the reply (``False``: the interrupt asks instead).
    """

    def propose(state: MemoryState, config: RunnableConfig) -> dict[str, Any]:
        scope = _scope(config, default_scope)
        messages = state.get("messages", [])
        thread = thread_from_config(config)
        found = next_proposal(memory, scope, thread, state.get("asks"), seen_in_turn(messages))
        update: dict[str, Any] = {
            "proposed": [p.id for p in found.items],
            "proposals": [p.model_dump(mode="json") for p in found.items],
            "asks": found.asks,
            "pending_ids": found.pending_ids,
        }
        reply = messages[-1] if messages else None
        if ask and found.items and isinstance(reply, AIMessage):
            asking = asking_reply(reply, found.items, messages)
            if asking is not None:
                update["messages"] = [asking]
        return update

    return propose


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

    def preflight_recall(state: MemoryState, config: RunnableConfig) -> dict[str, Any]:
        scope = _scope(config, default_scope)
        if writer is not None:
            writer.wait(scope)
        carried = writer.take(scope, _thread(config)) if writer is not None else None
        ctx = recall_context(
            memory,
            state.get("messages", []),
            scope=scope,
            first_turn=not state.get("first_turn_done"),
            notes=state.get("notes", []) or [],
            tool_context=carried or state.get("tool_context"),
            settings=s,
            defer=None if writer is None else functools.partial(writer.submit, scope),
        )
        return {
            "memory_context": ctx.block,
            "recalled": ctx.recalled,
            "tool_context": None,
            "profile_context": ctx.safety,
            "first_turn_done": True,
        }

    return preflight_recall


def _system_prompt(state: MemoryState) -> SystemMessage:
    """The system prompt with the profile's safety block: the first system message, so
    compaction never removes it and clipping never cuts it."""
    safety = state.get("profile_context")
    return SystemMessage(f"{SYSTEM_PROMPT}\n\n{safety}" if safety else SYSTEM_PROMPT)


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
    fitter: CallFitter | None = None,
    record: CheckpointRecorder | None = None,
) -> Node:
    """Node that calls the chat model, bound to the memory tools.

    It only answers: what follows the turn's final answer (the save proposal, the
    boosts, the turn log) are nodes of their own (:func:`create_propose_node`,
    :func:`create_record_turn_node`).

    Args:
        model: The chat model.
        tools: Tools to bind (the memory tools and any others).
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
        response = bound.invoke(call, config)
        update["messages"] = [*update.get("messages", []), response]
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


def create_record_turn_node(
    memory: Memory,
    *,
    default_scope: str = "main",
    on_turn: Callable[[str, str, str, str], None] | None = None,
    writer: TurnWriter | None = None,
    extract: bool = False,
    extract_model: BaseChatModel | None = None,
) -> Node:
    """Node run once per turn, after the final answer: the turn's bookkeeping.

    - BOOSTs the recalled memories the answer actually used (decided in the node by
      a deterministic overlap test, :func:`used_in_answer`; ``Memory.boost``
      applies the cooldown and the daily cap);
    - counts the history's tokens (``token_count``) and clears ``notes``;
    - carries the turn's tool results to the next turn (``tool_context``);
    - schedules the turn's extraction;
    - calls ``on_turn(scope, thread_id, user_text, answer_text)`` (the session hot
      log) when given.

    It reads no pending save (``pending_ids`` is kept by the nodes that propose and
    resolve them).

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

    def record_turn(state: MemoryState, config: RunnableConfig) -> dict[str, Any]:
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

        turn: dict[str, Any] = {
            "scope": scope,
            "model": extract_model,
            "recalled": shown,
            "at": at,
            "thread_id": thread_from_config(config),
        }

        def extract_turn() -> None:  # Memory.extract reads the last turn of ``messages``
            report = memory.extract(messages, **turn)
            logger.debug("turn extraction: %s", report)

        update: dict[str, Any] = {"token_count": history_tokens(messages), "notes": []}
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
            elif job is extract_turn:
                # in the ledger before the reply: a turn a dead process never extracted
                # is extracted by another (langmem_ext.memory.extraction.turns)
                writer.submit(scope, memory.turns.accept(messages, **turn), defer=defer)
            else:
                writer.submit(scope, job, defer=defer)
        if on_turn is not None and answer:
            on_turn(scope, thread, latest_human_text(messages), answer)
        return update

    return record_turn


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
        messages = state.get("messages", [])
        result = flush_to_pending(memory, scope, messages, model, thread_from_config(config))
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
    (:func:`~langmem_ext.memory.sessions.manager.run_checkpoint`) does the work.
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
    (:func:`~langmem_ext.memory.sessions.manager.record_checkpoint`, as the checkpoint node
    between turns), so both keep what they remove.
    """
    target = _state_target(memory, settings or memory.settings, default_scope, session_log, writer)

    def record(cp: Checkpoint, state: MemoryState, config: RunnableConfig) -> dict[str, Any]:
        done = record_checkpoint(cp, target(config, state.get("messages", [])))
        return {} if done is None else _checkpoint_update(cp, state)

    return record


@dataclass(frozen=True)
class _StateTarget:
    """The graph's :class:`~langmem_ext.memory.sessions.manager.CheckpointTarget`: the
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
    "CHECKPOINT_SUMMARIZE",
    "PENDING_CONFIRM",
    "PREFLIGHT_RECALL",
    "PRE_COMPACTION_FLUSH",
    "PROPOSE_SAVES",
    "RECORD_TURN",
    "TOOLS",
    "create_answer_node",
    "create_checkpoint_node",
    "create_checkpoint_recorder",
    "create_flush_node",
    "create_pending_confirm_node",
    "create_pending_interrupt_node",
    "create_pending_router",
    "create_preflight_recall_node",
    "create_propose_node",
    "create_record_turn_node",
    "history_tokens",
    "latest_human_text",
    "needs_checkpoint",
    "used_in_answer",
]
