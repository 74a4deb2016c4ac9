"""``langmem-ext demo``: the shipped bilingual sample conversation, end to end.

The whole memory graph runs over the sample's three sessions on the embedded
default (Chroma ``PersistentClient`` + the offline embedder) in a fresh workspace:
the model proposes saves with ``memory_save``, the user's replies confirm or
reject them (``pending_confirm``), and a new thread asks recall questions
(``preflight_recall``). With no chat model reachable, a scripted model plays the
assistant, and the demo says so. Then the sample's questions are searched
directly, with scores, and the best hit is read back with ``get``.

The sample's dates are relative to today (its sessions took place days ago). A
temporary workspace made by the demo is removed at the end (the demo says so);
one named with ``--workspace`` is kept.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import tempfile
from datetime import date, timedelta
from importlib import resources
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig

from langmem_ext.chat_models.scripted import (
    Policy,
    ScriptedChatModel,
    memory_block_texts,
    offline_policy,
    tool_call,
)

logger = logging.getLogger(__name__)

_PLACEHOLDER = re.compile(r"\{(?:session([+-]\d+)?|next_april)\}")


def _render_dates(value: Any, day: date) -> Any:
    """``value`` with ``{session+N}`` / ``{next_april}`` filled in for a session on ``day``."""
    if isinstance(value, str):

        def fill(m: re.Match[str]) -> str:
            if m.group(0) == "{next_april}":
                return str(day.year if day.month < 4 else day.year + 1)
            return (day + timedelta(days=int(m.group(1) or 0))).isoformat()

        return _PLACEHOLDER.sub(fill, value)
    if isinstance(value, list):
        return [_render_dates(v, day) for v in value]
    if isinstance(value, dict):
        return {k: _render_dates(v, day) for k, v in value.items()}
    return value


def load_sample(today: date | None = None) -> dict[str, Any]:
    """The sample conversation shipped in ``langmem_ext/data``, dated relative to today.

    Args:
        today: The day the demo runs (default: today). Each session gets a
            ``started_at`` (ISO datetime) ``days_ago`` days before it, and the dates in
            its texts follow the session's day.

    Returns:
        The sample: ``title``, ``scope``, ``sessions`` (``started_at``, ``turns``),
        ``queries`` (``query``, ``expect``).
    """
    text = (
        resources.files("langmem_ext").joinpath("data/sample_conversation.json").read_text("utf-8")
    )
    data: dict[str, Any] = json.loads(text)
    today = today or date.today()
    sessions = []
    for session in data["sessions"]:
        day = today - timedelta(days=int(session.pop("days_ago")))
        session["started_at"] = f"{day.isoformat()}T{session.pop('time')}:00"
        sessions.append(_render_dates(session, day))
    data["sessions"] = sessions
    data["queries"] = _render_dates(data["queries"], today)
    return data


def sample_policy(sample: dict[str, Any]) -> Policy:
    """A scripted assistant for the sample.

    It saves what the sample's assistant saved, and answers a recall question from
    the whole memory block it is given (core memories first, then recalled hits):
    for the sample's own questions it looks for the memory holding the expected
    answer (standing in for an LLM's understanding; it only quotes what the block
    holds, and says it found nothing otherwise). Other turns go to
    :func:`~langmem_ext.chat_models.scripted.offline_policy`.
    """
    saves: dict[str, list[dict[str, Any]]] = {}
    replies: dict[str, str] = {}
    expect = {q["query"]: str(q["expect"]).lower() for q in sample["queries"]}
    for session in sample["sessions"]:
        last_user = ""
        for turn in session["turns"]:
            if turn["role"] == "user":
                last_user = turn["text"]
            elif "save" in turn:
                saves.setdefault(last_user, []).append(turn["save"])
                replies[last_user] = turn["text"]
    from langmem_ext.short_term.flush_prompt import FLUSH_PROMPT, NO_REPLY

    def policy(messages: list[BaseMessage]) -> AIMessage:
        last = messages[-1]
        human = next((m for m in reversed(messages) if isinstance(m, HumanMessage)), None)
        user_text = str(human.content) if human else ""
        if isinstance(last, ToolMessage):
            return AIMessage(replies.get(user_text, "OK."))
        if user_text == FLUSH_PROMPT:
            return AIMessage(NO_REPLY)
        if user_text in saves:
            return AIMessage(
                "",
                tool_calls=[
                    tool_call(
                        "memory_save",
                        text=s["text"],
                        category=s.get("category", "fact"),
                        target=s.get("target", "long_term"),
                    )
                    for s in saves[user_text]
                ],
            )
        question = user_text.rstrip().endswith(("?", "？"))
        if question and user_text in expect:
            block = memory_block_texts(messages)
            found = next(
                (
                    text
                    for kind, text in block
                    if kind in ("safety memory", "core", "recalled", "daily notes")
                    and expect[user_text] in text.lower()
                ),
                None,
            )
            if found is None:
                return AIMessage("I searched my memory but found nothing about that.")
            return AIMessage(f"From memory: {found}")
        if question:
            return offline_policy(messages)
        return AIMessage("好的。" if any("\u4e00" <= ch <= "\u9fff" for ch in user_text) else "OK.")

    return policy


def _pick_model(sample: dict[str, Any], say: Any) -> BaseChatModel:
    from langmem_ext.chat_models.choice import ModelUnavailableError, load_chat_model
    from langmem_ext.core.config import Settings

    try:
        model = load_chat_model(Settings())
        say(f"chat model: {Settings().chat_model}")
        return model
    except ModelUnavailableError as e:
        say("No chat model is reachable, so a scripted model plays the assistant")
        say(f"({str(e).splitlines()[0]})")
        return ScriptedChatModel(policy=sample_policy(sample))


def run_demo(
    workspace: str | None = None,
    *,
    as_json: bool = False,
    embedder: str | None = None,
    scripted: bool = False,
) -> int:
    """Run the demo; prints a narrated transcript (or JSON). Returns an exit code.

    Args:
        workspace: A fresh (missing or empty) folder to run in, kept afterwards.
            Default: a new temporary folder, removed at the end (the demo says so).
        as_json: Print the report as JSON instead of the narration.
        embedder: Embedder provider (default: the settings').
        scripted: Use the scripted model even if a real one is reachable.

    Returns:
        ``0``; ``2`` when ``workspace`` is not empty.
    """
    temporary = not workspace
    root = Path(workspace) if workspace else Path(tempfile.mkdtemp(prefix="langmem-demo-"))
    if root.exists() and any(root.iterdir()):
        print(f"error: {root} is not empty; the demo needs a fresh workspace folder.")
        return 2
    try:
        report = _run(root, as_json=as_json, embedder=embedder, scripted=scripted)
    finally:
        if temporary:
            shutil.rmtree(root, ignore_errors=True)
    report["workspace_removed"] = temporary and not root.exists()
    if as_json:
        print(json.dumps(report, ensure_ascii=False, indent=2, default=str))
    elif report["workspace_removed"]:
        print(f"removed the demo workspace {root} (pass --workspace DIR to keep it)")
    return 0


def _run(root: Path, *, as_json: bool, embedder: str | None, scripted: bool) -> dict[str, Any]:
    """The demo in workspace ``root``; returns the report."""
    from langgraph.checkpoint.memory import InMemorySaver

    from langmem_ext.core.config import Settings
    from langmem_ext.graph import build_memory_graph
    from langmem_ext.memory import Memory

    settings = Settings(workspace=root)
    if embedder:
        settings.embeddings.provider = embedder  # type: ignore[assignment]
    sample = load_sample()
    scope = sample["scope"]
    report: dict[str, Any] = {
        "workspace": str(root),
        "sessions": [],
        "turns": [],
        "recall": [],
        "searches": [],
    }
    say = (lambda *_a: None) if as_json else print
    say(f"langmem-ext demo — {sample['title']}")
    say(f"workspace: {root}  (embedder: {settings.embeddings.provider}, Chroma embedded)")
    model: BaseChatModel = (
        ScriptedChatModel(policy=sample_policy(sample)) if scripted else _pick_model(sample, say)
    )
    report["model"] = "scripted" if isinstance(model, ScriptedChatModel) else settings.chat_model
    today = date.today()
    with Memory(settings=settings) as memory:
        graph = build_memory_graph(model, memory, checkpointer=InMemorySaver())
        for n, session in enumerate(sample["sessions"], 1):
            config: RunnableConfig = {"configurable": {"thread_id": f"session-{n}", "scope": scope}}
            started = session["started_at"]
            ago = (today - date.fromisoformat(started[:10])).days
            say(
                f"\n── session {n} (thread session-{n}; {started.replace('T', ' ')[:16]}, {ago} days ago) ──"
            )
            report["sessions"].append({"thread": f"session-{n}", "started_at": started})
            for turn in session["turns"]:
                if turn["role"] != "user":
                    continue
                before = {p.id for p in memory.list_pending(scope=scope)}
                out = graph.invoke({"messages": [HumanMessage(turn["text"])]}, config)
                answer = str(out["messages"][-1].content)
                say(f"  {'user':>9}: {turn['text']}")
                say(f"  {'assistant':>9}: {answer}")
                for p in memory.list_pending(scope=scope):
                    if p.id not in before:
                        say(f"{'':>13}↳ memory_save → pending {p.id} ({p.category}): {p.text}")
                for note in _notes(memory, before, scope):
                    say(f"{'':>13}↳ {note}")
                report["turns"].append({"user": turn["text"], "assistant": answer})
        say(f"\n── a new thread, today ({today.isoformat()}) ──")
        config = {"configurable": {"thread_id": "later", "scope": scope}}
        for q in sample["queries"]:
            out = graph.invoke({"messages": [HumanMessage(q["query"])]}, config)
            answer = str(out["messages"][-1].content)
            say(f"  {'user':>9}: {q['query']}")
            say(f"  {'assistant':>9}: {answer}")
            report["recall"].append(
                {
                    "query": q["query"],
                    "answer": answer,
                    "expected_found": q["expect"].lower() in answer.lower(),
                }
            )
        say("\n── direct searches (score, citation, text) ──")
        for q in sample["queries"]:
            hits = memory.search(q["query"], scope=scope, k=3)
            top = hits[0] if hits else None
            ok = bool(top and q["expect"].lower() in top.text.lower())
            report["searches"].append(
                {
                    "query": q["query"],
                    "top": top.text if top else None,
                    "score": top.score if top else None,
                    "expected_found": ok,
                }
            )
            say(f"  ? {q['query']}")
            for h in hits:
                say(f"      {h.score:.3f}  {h.citation:<24} {h.text}")
            if not hits:
                say("      (searched, found nothing)")
        best = memory.search("拉面", scope=scope, k=1)
        if best:
            got = memory.get(best[0].citation, scope=scope, lines=3)
            say(f"\n── get {best[0].citation} ──\n{got.text}")
            report["get"] = got.model_dump(mode="json")
        entries = memory.list(scope=scope)
        report["stored"] = [e.text for e in entries]
        report["pending_left"] = [p.text for p in memory.list_pending(scope=scope)]
        say(f"\nstored: {len(entries)} memories under {memory.workspace.layout.scope_dir(scope)}")
    return report


def _notes(memory: Any, before: set[str], scope: str) -> list[str]:
    now_pending = {p.id for p in memory.list_pending(scope=scope)}
    gone = before - now_pending
    notes = []
    for pid in sorted(gone):
        row = memory.workspace.ledger.pending.get(pid)
        if row is not None:
            notes.append(f"{row.status} {pid}: {row.text}")
    return notes


__all__ = ["load_sample", "run_demo", "sample_policy"]
