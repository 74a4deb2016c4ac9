"""``langmem-ext chat``: an interactive session with the memory agent.

Resumes the latest session of the scope unless ``--new``. The assistant
asks about the saves it proposes and the user answers in the chat ("好的" / "no" /
"第一个保存，第二个不要"); ``/pending`` lists every pending save of the scope, and
``/confirm ID…`` / ``/reject ID…`` resolve one by id (e.g. a save proposed in another
conversation, which a reply here never touches). With ``--scripted`` the offline stand-in model
(:func:`~langmem_ext.chat_models.scripted.offline_policy`) plays the assistant: it saves what
the user asks it to remember and answers from the memory block.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig

from langmem_ext.chat_models.choice import ModelUnavailableError, load_chat_model
from langmem_ext.chat_models.scripted import ScriptedChatModel, offline_policy
from langmem_ext.core.errors import LangmemError
from langmem_ext.memory import Memory

_META_KEY = "chat_thread:{scope}"


def run_chat(
    memory: Memory,
    *,
    scope: str | None = None,
    new: bool = False,
    scripted: bool = False,
    read: Callable[[str], str] = input,
    write: Callable[[str], None] = print,
) -> int:
    """Run the chat loop until EOF or ``/exit``. Returns an exit code."""
    from langmem_ext.graph import build_memory_graph

    scope = scope or memory.settings.default_scope
    model: BaseChatModel
    if scripted:
        model = ScriptedChatModel(policy=offline_policy)
    else:
        try:
            model = load_chat_model(memory.settings)
        except ModelUnavailableError as e:
            print(f"error: {e}", file=sys.stderr)
            return 3
    graph = build_memory_graph(model, memory, scope=scope)
    key = _META_KEY.format(scope=scope)
    thread = None if new else memory.get_meta(key)
    if thread:
        state = graph.get_state({"configurable": {"thread_id": thread, "scope": scope}}).values
        write(
            f"Resuming session {thread} ({len(state.get('messages', []))} messages). /new starts over."
        )
    else:
        thread = uuid.uuid4().hex[:12]
        write(f"New session {thread}. /exit to leave, /pending to list pending saves.")
    memory.set_meta(key, thread)
    waiting = len(memory.list_pending(scope=scope))
    if waiting:
        write(f"{waiting} save(s) wait for confirmation: /pending lists them.")
    while True:
        try:
            line = read("you> ").strip()
        except (EOFError, KeyboardInterrupt):
            break
        if not line:
            continue
        if line in ("/exit", "/quit"):
            break
        if line == "/new":
            thread = uuid.uuid4().hex[:12]
            memory.set_meta(key, thread)
            write(f"New session {thread}.")
            continue
        if line == "/pending":
            _show_pending(memory, scope, thread, write)
            continue
        command, _, ids = line.partition(" ")
        if command in ("/confirm", "/reject"):
            _resolve(memory, scope, command == "/confirm", ids.split(), write)
            continue
        config: RunnableConfig = {"configurable": {"thread_id": thread, "scope": scope}}
        out = graph.invoke({"messages": [HumanMessage(line)]}, config)
        write(f"assistant> {out['messages'][-1].content}")
    return 0


def _show_pending(memory: Memory, scope: str, thread: str, write: Callable[[str], None]) -> None:
    """Every pending save of the scope, with how to resolve it."""
    pending = memory.list_pending(scope=scope)
    if not pending:
        write("  no pending saves")
    for p in pending:
        how = (
            "proposed here: answer the assistant's question"
            if p.thread_id == thread
            else f"/confirm {p.id} or /reject {p.id}"
        )
        write(f"  pending {p.id}: {p.text}  ({how})")


def _resolve(
    memory: Memory, scope: str, keep: bool, ids: list[str], write: Callable[[str], None]
) -> None:
    """``/confirm ID…`` / ``/reject ID…``: the saves the user named by id."""
    if not ids:
        write(f"  usage: /{'confirm' if keep else 'reject'} ID…  (/pending lists the ids)")
    for pid in ids:
        try:
            if keep:
                memory.confirm(pid, scope=scope)
                write(f"  confirmed {pid}")
            else:
                memory.reject(pid, scope=scope)
                write(f"  rejected {pid}")
        except LangmemError as e:
            write(f"  {pid}: {e}")


__all__ = ["offline_policy", "run_chat"]
