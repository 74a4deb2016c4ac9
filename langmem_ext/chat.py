"""``langmem-ext chat``: an interactive session with the memory agent.

Resumes the latest session of the scope (seed 000) unless ``--new``; shows pending
saves after each answer so the user can confirm ("yes" / "确认") or reject them.
With ``--scripted`` the offline stand-in model
(:func:`~langmem_ext.scripted.offline_policy`) plays the assistant: it saves what
the user asks it to remember and answers from the memory block.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig

from langmem_ext.chat_models import ModelUnavailableError, load_chat_model
from langmem_ext.memory import Memory
from langmem_ext.scripted import ScriptedChatModel, offline_policy

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
        config: RunnableConfig = {"configurable": {"thread_id": thread, "scope": scope}}
        if line != "/pending":
            out = graph.invoke({"messages": [HumanMessage(line)]}, config)
            write(f"assistant> {out['messages'][-1].content}")
        pending = memory.list_pending(scope=scope)
        for p in pending:
            write(
                f"  pending {p.id}: {p.text}  (reply 'yes' / '确认' to keep, 'no' / '取消' to drop)"
            )
    return 0


__all__ = ["offline_policy", "run_chat"]
